"""The knowledge base over HTTP: upload a runbook, list the documents, delete an upload."""

from __future__ import annotations

from flask import Blueprint, request

from ..container import services
from ..tools.knowledge import DocumentNotFound, ReadOnlyDocument
from .contract import operation
from .errors import ApiError
from .requests import body_bytes, has_control
from .responses import Deleted, KnowledgeList, UploadResult

bp = Blueprint("knowledge", __name__, url_prefix="/api")

UPLOAD_TYPES = (".md", ".txt")


@bp.post("/upload")
@operation(upload=True, response=UploadResult, errors=(400, 413, 415))
def upload() -> UploadResult:
    """Add a .md or .txt document to the knowledge base (multipart field ``file``)."""
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
    return UploadResult.model_validate(summary)


@bp.get("/knowledge")
@operation(response=KnowledgeList)
def documents() -> KnowledgeList:
    """Every knowledge document with its origin: uploads (newest first), then bundled runbooks."""
    rows = services().knowledge.documents()
    documents = [{**row, "deletable": row["origin"] == "upload"} for row in rows]
    return KnowledgeList.model_validate({"documents": documents})


@bp.delete("/knowledge/<path:doc_id>")
@operation(response=Deleted, errors=(403, 404))
def delete(doc_id: str) -> Deleted:
    """Delete an uploaded document; the bundled runbooks are read-only (403)."""
    if has_control(doc_id):
        raise ApiError(400, "docId contains control characters")
    try:
        removed = services().knowledge.delete_document(doc_id)
    except DocumentNotFound as exc:
        raise ApiError(404, str(exc)) from None
    except ReadOnlyDocument as exc:
        raise ApiError(403, str(exc)) from None
    return Deleted(doc_id=removed["doc_id"], title=removed["title"], deleted=True)
