"""The OpenAPI 3.1 document, generated from the app's routes and their ``@operation`` models.

Every route of the API blueprints is one operation described by the pydantic models its view
parses and returns (:mod:`webapp.api.contract`); a route without ``@operation`` fails the build.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from typing import Any

from flask import Flask
from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import models_json_schema

from .contract import PATH_PARAMETERS, Operation

REF = "#/components/schemas/{model}"
EVENT_TYPES = ["metadata", "progress", "content", "error", "done"]
ERRORS = {
    400: "Bad input: malformed JSON, missing/blank/oversized fields, bad ids",
    401: "API_KEY is set and the bearer token is missing or wrong",
    403: "Refused: a state change from another origin, or a read-only resource",
    404: "Not found (another session's run is not found either)",
    405: "Method not allowed",
    409: "Conflicts with the run's state",
    413: "Request or file too large",
    415: "Wrong content type",
    429: "Rate limit exceeded (RATE_LIMIT); Retry-After says when to try again",
    503: "A dependency is unavailable (the database, or session history)",
}
OPEN_PATHS = ("/healthz", "/readyz")  # exempt from API_KEY and rate limits
SSE_RESPONSE = {
    "description": "Server-sent events; each event is described by the schema",
    "content": {
        "text/event-stream": {
            "schema": {
                "type": "object",
                "required": ["event", "data"],
                "properties": {
                    "event": {"const": "message"},
                    "data": {
                        "type": "string",
                        "contentMediaType": "application/json",
                        "contentSchema": {
                            "type": "object",
                            "required": ["type", "data"],
                            "properties": {"type": {"enum": EVENT_TYPES}, "data": {}},
                        },
                    },
                },
            }
        }
    },
}
UPLOAD_BODY = {
    "required": True,
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "required": ["file"],
                "properties": {
                    "file": {"type": "string", "contentMediaType": "application/octet-stream"}
                },
            }
        }
    },
}


def routes(app: Flask) -> Iterable[tuple[str, str, Operation]]:
    """``(OpenAPI path, method, operation)`` for every API route of ``app``."""
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
        if rule.endpoint in ("static", "system.openapi"):
            continue
        spec = getattr(app.view_functions[rule.endpoint], "operation", None)
        if spec is None:
            raise LookupError(f"{rule.rule} ({rule.endpoint}) has no @operation declaration")
        path = re.sub(
            r"<(?:[^:>]+:)?([^>]+)>", lambda m: "{" + PATH_PARAMETERS[m[1]][0] + "}", rule.rule
        )
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            yield path, method.lower(), spec


def build_document(app: Flask) -> dict[str, Any]:
    """The whole document for ``app``'s routes."""
    found = list(routes(app))
    bodies = {spec.body for _, _, spec in found}
    models = {m for _, _, spec in found for m in (spec.body, spec.response) if m is not None}
    _, schemas = models_json_schema(
        [
            (m, "validation" if m in bodies else "serialization")
            for m in sorted(models, key=lambda m: m.__name__)
        ],
        ref_template=REF,
    )
    components = {**schemas.get("$defs", {}), "Error": _envelope({"type": "null"})}
    paths: dict[str, dict[str, Any]] = {}
    for path, method, spec in found:
        paths.setdefault(path, {})[method] = _operation(path, method, spec)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Incident diagnosis API",
            "version": "1.0.0",
            "description": "Evidence-grounded incident diagnosis. Every JSON response is an "
            "envelope {code, message, data}.",
        },
        "servers": [{"url": "/"}],
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "Required when API_KEY is set",
                }
            },
        },
        "security": [{"bearer": []}, {}],
    }


def _operation(path: str, method: str, spec: Operation) -> dict[str, Any]:
    operation: dict[str, Any] = {"summary": spec.summary}
    if spec.description:
        operation["description"] = spec.description
    parameters = [_path_parameter(name) for name in re.findall(r"\{([^}]+)\}", path)]
    if spec.query is not None:
        parameters += _parameters(spec.query, "query")
    if spec.headers is not None:
        parameters += _parameters(spec.headers, "header")
    if parameters:
        operation["parameters"] = parameters
    if spec.body is not None:
        operation["requestBody"] = {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": REF.format(model=spec.body.__name__)}}
            },
        }
    elif spec.upload:
        operation["requestBody"] = UPLOAD_BODY
    responses = {"200": _success(spec), **_errors(path, method, spec)}
    for code, description in spec.extra_responses.items():
        responses[str(code)] = {**_success(spec), "description": description}
    operation["responses"] = responses
    if path in OPEN_PATHS:
        operation["security"] = [{}]
    return operation


def _success(spec: Operation) -> dict[str, Any]:
    if spec.stream:
        return SSE_RESPONSE
    data = {"$ref": REF.format(model=spec.response.__name__)} if spec.response else {}
    return _json(_envelope(data), spec.summary)


def _errors(path: str, method: str, spec: Operation) -> dict[str, Any]:
    codes = set(spec.errors) | {405}
    if path not in OPEN_PATHS:
        codes |= {401, 429, 503}
    if method not in ("get", "head", "options"):
        codes.add(403)
    if spec.body is not None or spec.upload:
        codes |= {400, 413, 415}
    if spec.query is not None or spec.headers is not None or "{" in path:
        codes.add(400)
    return {
        str(code): _json({"$ref": REF.format(model="Error")}, ERRORS[code])
        for code in sorted(codes)
    }


def _path_parameter(name: str) -> dict[str, Any]:
    kind = next(k for n, k in PATH_PARAMETERS.values() if n == name)
    return {"name": name, "in": "path", "required": True, "schema": TypeAdapter(kind).json_schema()}


def _parameters(model: type[BaseModel], where: str) -> list[dict[str, Any]]:
    """The query or header parameters of ``model``, by their documented names."""
    schema = model.model_json_schema(mode="validation")
    required = set(schema.get("required", []))
    return [
        {"name": name, "in": where, "required": name in required, "schema": prop}
        for name, prop in schema["properties"].items()
    ]


def _envelope(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["code", "message", "data"],
        "properties": {
            "code": {"type": "integer"},
            "message": {"type": "string"},
            "data": data,
        },
        "additionalProperties": False,
    }


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


@cache
def openapi_document() -> dict[str, Any]:
    """The document of the API blueprints (the same routes every app registers)."""
    from . import blueprints

    app = Flask(__name__)
    for blueprint in blueprints():
        app.register_blueprint(blueprint)
    return build_document(app)
