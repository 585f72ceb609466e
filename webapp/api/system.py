"""Knowledge upload, liveness, readiness and the OpenAPI document."""

from __future__ import annotations

from flask import Blueprint, jsonify, request
from flask.typing import ResponseReturnValue
from peewee import PeeweeException

from .context import services
from .errors import ApiError, envelope, ok
from .openapi import openapi_document
from .requests import body_bytes

bp = Blueprint("system", __name__)

UPLOAD_TYPES = (".md", ".txt")


@bp.post("/api/upload")
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


@bp.get("/healthz")
def healthz() -> ResponseReturnValue:
    """Liveness: the process answers."""
    return ok({"status": "ok"})


@bp.get("/readyz")
def readyz() -> ResponseReturnValue:
    """Readiness: the database answers (required); Redis and the LLM configuration reported."""
    found = services()
    try:
        found.database.execute_sql("SELECT 1")
        database = "ok"
    except PeeweeException:
        database = "unavailable"
    if found.settings.redis_url:
        redis = "ok" if found.history.ping() else "unavailable"
    else:
        redis = "disabled"
    llm = "offline" if found.settings.offline else "openai-compatible"
    data = {"database": database, "redis": redis, "llm": llm, "model": found.model.model_name}
    if database != "ok":
        return envelope(503, "the database is unavailable", data)
    status = "degraded: session history unavailable" if redis == "unavailable" else "success"
    return envelope(200, status, data)


@bp.get("/openapi.json")
def openapi() -> ResponseReturnValue:
    """The OpenAPI 3.1 description of this API (a bare document, not an envelope)."""
    return jsonify(openapi_document())
