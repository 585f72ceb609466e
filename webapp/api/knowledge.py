"""The knowledge base over HTTP: upload a runbook, list the documents, delete an upload."""

from __future__ import annotations

from flask import Blueprint, request
from flask.typing import ResponseReturnValue

from ..tools.knowledge import DocumentNotFound, ReadOnlyDocument
from .context import services
from .errors import ApiError, ok
from .requests import body_bytes, has_control

bp = Blueprint("knowledge", __name__, url_prefix="/api")

UPLOAD_TYPES = (".md", ".txt")
MAX_DOC_ID_CHARS = 300


@bp.post("/upload")
def upload() -> ResponseReturnValue:
    """Index an uploaded ``.md``/``.txt`` file into the knowledge base."""
    if not request.mimetype.startswith("multipart/form-data"):
        raise ApiError(415, "upload a file as multipart/form-data (field 'file')")
    body_bytes()  # a chunked body over the limit is 413 before the form parser truncates it
    file = request.files.get("file")
    if file is None or not file.filename:
        raise ApiError(400, "the multipart field 'file' with a file name is required")
    if not file.filename.lower().endswith(UPLOAD_TYPES):
        raise ApiError(400, "only .md and .txt files can be uploaded")
    limit = services().settings.max_upload_bytes
    content = file.stream.read(limit + 1)
    if len(content) > limit:
        raise ApiError(413, f"the file is too large: the limit is {limit} bytes")
    try:
        summary = services().knowledge.add_document(file.filename, content)
    except ValueError as exc:
        raise ApiError(400, str(exc)) from None
    return ok(
        {
            "docId": summary["doc_id"],
            "title": summary["title"],
            "source": summary["source"],
            "chunks": summary["chunks"],
            "bytes": summary["bytes"],
        }
    )


@bp.get("/knowledge")
def documents() -> ResponseReturnValue:
    """Every knowledge document: uploads (newest first), then the bundled runbooks."""
    rows = services().knowledge.documents()
    return ok(
        {
            "documents": [
                {
                    "docId": row["doc_id"],
                    "title": row["title"],
                    "origin": row["origin"],
                    "chunks": row["chunks"],
                    "bytes": row["bytes"],
                    "uploadedAt": row["uploaded_at"],
                    "deletable": row["origin"] == "upload",
                }
                for row in rows
            ],
            "total": len(rows),
        }
    )


@bp.delete("/knowledge/<path:doc_id>")
def delete(doc_id: str) -> ResponseReturnValue:
    """Remove an uploaded document; the bundled runbooks are read-only (403)."""
    if len(doc_id) > MAX_DOC_ID_CHARS or has_control(doc_id):
        raise ApiError(400, f"docId must be at most {MAX_DOC_ID_CHARS} printable characters")
    try:
        removed = services().knowledge.delete_document(doc_id)
    except DocumentNotFound as exc:
        raise ApiError(404, str(exc)) from None
    except ReadOnlyDocument as exc:
        raise ApiError(403, str(exc)) from None
    return ok({"docId": removed["doc_id"], "title": removed["title"], "deleted": True})
