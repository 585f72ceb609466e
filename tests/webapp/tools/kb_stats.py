"""Counts over a knowledge index's documents, for assertions."""

from __future__ import annotations

from typing import Any


def stats(index: Any) -> dict[str, int]:
    """Counts of documents (all, from the folder, uploaded) and of chunks."""
    documents = index.documents()
    return {
        "documents": len(documents),
        "directory_documents": sum(d["origin"] == "directory" for d in documents),
        "uploaded_documents": sum(d["origin"] == "upload" for d in documents),
        "chunks": sum(d["chunks"] for d in documents),
    }
