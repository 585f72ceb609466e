"""A runbook that is unreadable for a moment (mid-write, bad bytes) keeps its indexed version."""

from __future__ import annotations

from pathlib import Path

from webapp.tools.knowledge import KnowledgeIndex


def test_an_unreadable_file_is_skipped_not_removed(tmp_path: Path) -> None:
    folder = tmp_path / "runbooks"
    folder.mkdir()
    note = folder / "disk.md"
    note.write_text("# Disk full\n\nFree space on the volume.\n", encoding="utf-8")
    kb = KnowledgeIndex(tmp_path / "knowledge.db")
    kb.sync_directory(folder)
    note.write_bytes(b"")  # truncated by a writer that has not finished yet
    report = kb.sync_directory(folder)
    assert report.skipped == 1 and report.removed == 0
    assert [d["source"] for d in kb.search("disk full", 1)] == ["runbooks/disk.md"]
    note.unlink()
    assert kb.sync_directory(folder).removed == 1
    assert kb.search("disk full", 1) == []
