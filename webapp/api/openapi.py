"""The OpenAPI 3.1 document of the HTTP API, written by hand to say exactly what it does.

Tests validate real responses against it, and ``make fuzz`` feeds it to schemathesis.
"""

from __future__ import annotations

from functools import cache
from typing import Any

ID = {"type": "string", "pattern": "^[A-Za-z0-9_.:-]{1,64}$"}
NULLABLE_STRING = {"type": ["string", "null"]}
NULLABLE_INT = {"type": ["integer", "null"]}
TIMESTAMP = {"type": ["string", "null"], "format": "date-time"}
JSON_DOC = {"type": ["object", "null"]}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _envelope(data: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["code", "message", "data"],
        "properties": {
            "code": {"type": "integer"},
            "message": {"type": "string"},
            "data": data if data is not None else {"type": "null"},
        },
        "additionalProperties": False,
    }


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(*codes: int) -> dict[str, Any]:
    text = {
        400: "Bad input: malformed JSON, missing/blank/oversized fields, bad ids",
        401: "API_KEY is set and the bearer token is missing or wrong",
        404: "Unknown session or run (another session's run is also not found)",
        405: "Method not allowed",
        409: "Conflicts with the run's state",
        413: "Request or file too large",
        415: "Wrong content type",
        503: "A dependency is unavailable: the database (or, for clear, session history)",
    }
    return {str(code): _json(_ref("Error"), text[code]) for code in codes}


_COMMON = (401, 405, 503)
_EVENT_TYPES = ["metadata", "progress", "content", "error", "done"]
_SSE = {
    "description": "A stream of server-sent events; each event is described by the schema",
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
                            "properties": {"type": {"enum": _EVENT_TYPES}, "data": {}},
                        },
                    },
                },
            }
        }
    },
}

SCHEMAS: dict[str, Any] = {
    "Error": _envelope(None),
    "RunSummary": {
        "type": "object",
        "required": [
            "runId",
            "sessionId",
            "agentFlow",
            "flow",
            "status",
            "question",
            "answer",
            "degraded",
            "errorMessage",
            "stepCount",
            "toolCount",
            "durationMs",
            "feedback",
            "feedbackComment",
            "startedAt",
            "finishedAt",
        ],
        "properties": {
            "runId": ID,
            "sessionId": ID,
            "agentFlow": {"enum": ["CHAT", "AI_OPS"]},
            "flow": {"enum": ["complex", "simple", "aiops"]},
            "status": {"enum": ["PENDING", "RUNNING", "SUCCESS", "FAILED"]},
            "question": {"type": "string"},
            "answer": NULLABLE_STRING,
            "degraded": {"type": "boolean"},
            "errorMessage": NULLABLE_STRING,
            "stepCount": {"type": "integer"},
            "toolCount": {"type": "integer"},
            "durationMs": NULLABLE_INT,
            "feedback": {"enum": ["useful", "not_useful", None]},
            "feedbackComment": NULLABLE_STRING,
            "startedAt": TIMESTAMP,
            "finishedAt": TIMESTAMP,
        },
    },
    "Session": {
        "type": "object",
        "required": ["sessionId", "title", "createdAt", "updatedAt", "expiresAt"],
        "properties": {
            "sessionId": ID,
            "title": {"type": "string"},
            "createdAt": TIMESTAMP,
            "updatedAt": TIMESTAMP,
            "expiresAt": TIMESTAMP,
        },
    },
    "Step": {
        "type": "object",
        "required": [
            "id",
            "stepIndex",
            "agentName",
            "model",
            "modelInput",
            "modelOutput",
            "hasToolCall",
            "promptTokens",
            "completionTokens",
            "tokenCount",
            "attempts",
            "durationMs",
            "status",
            "error",
            "createdAt",
        ],
        "properties": {
            "id": {"type": "integer"},
            "runId": ID,
            "sessionId": ID,
            "stepIndex": {"type": "integer"},
            "agentName": {"type": "string"},
            "model": {"type": "string"},
            "modelInput": {},
            "modelOutput": {},
            "hasToolCall": {"type": "boolean"},
            "promptTokens": {"type": "integer"},
            "completionTokens": {"type": "integer"},
            "tokenCount": {"type": "integer"},
            "attempts": {"type": "integer"},
            "durationMs": NULLABLE_INT,
            "status": {"enum": ["RUNNING", "SUCCESS", "FAILED"]},
            "error": NULLABLE_STRING,
            "createdAt": TIMESTAMP,
        },
    },
    "ToolInvocation": {
        "type": "object",
        "required": [
            "id",
            "invocationId",
            "stepId",
            "agentName",
            "toolName",
            "arguments",
            "rawOutput",
            "status",
            "errorMessage",
            "durationMs",
            "retrievalDetails",
            "evidenceRefs",
            "createdAt",
        ],
        "properties": {
            "id": {"type": "integer"},
            "runId": ID,
            "sessionId": ID,
            "invocationId": {"type": "string"},
            "stepId": NULLABLE_INT,
            "agentName": {"type": "string"},
            "toolName": {"type": "string"},
            "arguments": {},
            "rawOutput": {},
            "status": {"enum": ["SUCCESS", "ERROR", "BLOCKED"]},
            "errorMessage": NULLABLE_STRING,
            "durationMs": {"type": "integer"},
            "retrievalDetails": {},
            "evidenceRefs": {},
            "createdAt": TIMESTAMP,
        },
    },
    "Case": {
        "type": "object",
        "required": ["runId", "sessionId", "question", "answer", "createdAt"],
        "properties": {
            "runId": ID,
            "sessionId": ID,
            "question": {"type": "string"},
            "answer": {"type": "string"},
            "createdAt": TIMESTAMP,
        },
    },
    "ChatRequest": {
        "type": "object",
        "required": ["Question"],
        "properties": {
            "Id": {
                "type": ["string", "null"],
                "pattern": ID["pattern"],
                "description": "Session id; a new session when absent or null (alias: id)",
            },
            "Question": {
                "type": "string",
                "minLength": 1,
                "maxLength": 4000,
                "pattern": "\\S",
                "description": "The question (alias: question); surrounding whitespace is "
                "trimmed, control characters other than tab and newlines are refused (400)",
            },
            "mode": {"enum": ["auto", "simple", "complex", None], "default": "auto"},
        },
    },
    "ChatResult": {
        "type": "object",
        "required": [
            "success",
            "answer",
            "errorMessage",
            "sessionId",
            "runId",
            "flow",
            "status",
            "degraded",
        ],
        "properties": {
            "success": {"type": "boolean"},
            "answer": NULLABLE_STRING,
            "errorMessage": NULLABLE_STRING,
            "sessionId": ID,
            "runId": ID,
            "flow": {"enum": ["complex", "simple"]},
            "status": {"enum": ["SUCCESS", "FAILED"]},
            "degraded": {"type": "boolean"},
        },
    },
    "FeedbackRequest": {
        "type": "object",
        "required": ["sessionId", "runId", "feedback"],
        "properties": {
            "sessionId": ID,
            "runId": ID,
            "feedback": {"enum": ["useful", "not_useful"]},
            "comment": {"type": "string", "maxLength": 2000},
        },
    },
}

_PAGE = [
    {
        "name": "limit",
        "in": "query",
        "schema": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50},
    },
    {
        "name": "offset",
        "in": "query",
        "schema": {"type": "integer", "minimum": 0, "maximum": 1000000, "default": 0},
    },
]


def _path_id(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": ID}


def _paths() -> dict[str, Any]:
    ok = _envelope
    return {
        "/api/chat": {
            "post": {
                "summary": "Ask a question (complex evidence-verified flow or simple chat)",
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": _ref("ChatRequest")}},
                },
                "responses": {
                    "200": _json(
                        ok(_ref("ChatResult")),
                        "The run's outcome; a FAILED run is still 200 with its runId",
                    ),
                    **_errors(400, 413, 415, *_COMMON),
                },
            }
        },
        "/api/feedback": {
            "post": {
                "summary": "Rate a run: useful adds it to the case library, not_useful removes it",
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": _ref("FeedbackRequest")}},
                },
                "responses": {
                    "200": _json(ok(_ref("RunSummary")), "The updated run"),
                    **_errors(400, 404, 409, 413, 415, *_COMMON),
                },
            }
        },
        "/api/diagnosis/{sessionId}/trace": {
            "get": {
                "summary": "The exact run's trace: run, steps, tool invocations",
                "parameters": [
                    _path_id("sessionId"),
                    {"name": "runId", "in": "query", "required": True, "schema": ID},
                ],
                "responses": {
                    "200": _json(
                        ok(
                            {
                                "type": "object",
                                "required": ["session", "run", "steps", "toolInvocations"],
                                "properties": {
                                    "session": {"anyOf": [_ref("Session"), {"type": "null"}]},
                                    "run": {
                                        "allOf": [
                                            _ref("RunSummary"),
                                            {
                                                "type": "object",
                                                "required": [
                                                    "selfEvaluation",
                                                    "orchestrationTrace",
                                                ],
                                                "properties": {
                                                    "selfEvaluation": JSON_DOC,
                                                    "orchestrationTrace": JSON_DOC,
                                                },
                                            },
                                        ]
                                    },
                                    "steps": {"type": "array", "items": _ref("Step")},
                                    "toolInvocations": {
                                        "type": "array",
                                        "items": _ref("ToolInvocation"),
                                    },
                                },
                            }
                        ),
                        "The trace",
                    ),
                    **_errors(400, 404, *_COMMON),
                },
            }
        },
        "/api/diagnosis/{sessionId}/runs": {
            "get": {
                "summary": "The session's runs, newest first",
                "parameters": [_path_id("sessionId"), *_PAGE],
                "responses": {
                    "200": _json(
                        ok(
                            {
                                "type": "object",
                                "required": ["sessionId", "runs", "limit", "offset"],
                                "properties": {
                                    "sessionId": ID,
                                    "runs": {"type": "array", "items": _ref("RunSummary")},
                                    "limit": {"type": "integer"},
                                    "offset": {"type": "integer"},
                                },
                            }
                        ),
                        "The runs",
                    ),
                    **_errors(400, 404, *_COMMON),
                },
            }
        },
        "/api/chat/session/{sessionId}": {
            "get": {
                "summary": "Session metadata",
                "parameters": [_path_id("sessionId")],
                "responses": {
                    "200": _json(
                        ok(
                            {
                                "allOf": [
                                    _ref("Session"),
                                    {
                                        "type": "object",
                                        "required": [
                                            "runCount",
                                            "historyMessages",
                                            "historyAvailable",
                                        ],
                                        "properties": {
                                            "runCount": {"type": "integer"},
                                            "historyMessages": {"type": "integer"},
                                            "historyAvailable": {"type": "boolean"},
                                        },
                                    },
                                ]
                            }
                        ),
                        "The session",
                    ),
                    **_errors(400, 404, *_COMMON),
                },
            }
        },
        "/api/chat/clear": {
            "post": {
                "summary": "Clear a session's history (its runs stay)",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["Id"],
                                "properties": {"Id": ID},
                            }
                        }
                    },
                },
                "responses": {
                    "200": _json(
                        ok(
                            {
                                "type": "object",
                                "required": ["sessionId", "cleared"],
                                "properties": {"sessionId": ID, "cleared": {"type": "integer"}},
                            }
                        ),
                        "Cleared",
                    ),
                    **_errors(400, 404, 413, 415, *_COMMON),
                },
            }
        },
        "/api/cases": {
            "get": {
                "summary": "The case library, newest first",
                "parameters": _PAGE,
                "responses": {
                    "200": _json(
                        ok(
                            {
                                "type": "object",
                                "required": ["cases", "total", "limit", "offset"],
                                "properties": {
                                    "cases": {"type": "array", "items": _ref("Case")},
                                    "total": {"type": "integer"},
                                    "limit": {"type": "integer"},
                                    "offset": {"type": "integer"},
                                },
                            }
                        ),
                        "The cases",
                    ),
                    **_errors(400, *_COMMON),
                },
            }
        },
        "/api/cases/{runId}": {
            "get": {
                "summary": "One case",
                "parameters": [_path_id("runId")],
                "responses": {
                    "200": _json(ok(_ref("Case")), "The case"),
                    **_errors(400, 404, *_COMMON),
                },
            }
        },
        "/api/knowledge": {
            "get": {
                "summary": "The knowledge documents with their origin",
                "responses": {
                    "200": _json(ok({"type": "object"}), "The documents"),
                    **_errors(*_COMMON),
                },
            }
        },
        "/api/knowledge/{docId}": {
            "delete": {
                "summary": "Delete an uploaded document",
                "parameters": [
                    {"name": "docId", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                "responses": {
                    "200": _json(ok({"type": "object"}), "The deleted document"),
                    **_errors(400, 404, *_COMMON),
                    "403": _json(_ref("Error"), "A bundled runbook is read-only"),
                },
            }
        },
        "/api/upload": {
            "post": {
                "summary": "Add a .md or .txt document to the knowledge base",
                "requestBody": {
                    "required": True,
                    "content": {
                        "multipart/form-data": {
                            "schema": {
                                "type": "object",
                                "required": ["file"],
                                "properties": {
                                    "file": {
                                        "type": "string",
                                        "contentMediaType": "application/octet-stream",
                                    }
                                },
                            }
                        }
                    },
                },
                "responses": {
                    "200": _json(
                        ok(
                            {
                                "type": "object",
                                "required": ["docId", "title", "source", "chunks", "bytes"],
                                "properties": {
                                    "docId": {"type": "string"},
                                    "title": {"type": "string"},
                                    "source": {"type": "string"},
                                    "chunks": {"type": "integer"},
                                    "bytes": {"type": "integer"},
                                },
                            }
                        ),
                        "The indexed document",
                    ),
                    **_errors(400, 413, 415, *_COMMON),
                },
            }
        },
        "/healthz": {
            "get": {
                "summary": "Liveness",
                "security": [],
                "responses": {
                    "200": _json(
                        ok(
                            {
                                "type": "object",
                                "required": ["status"],
                                "properties": {"status": {"const": "ok"}},
                            }
                        ),
                        "Alive",
                    ),
                    "405": _errors(405)["405"],
                },
            }
        },
        "/readyz": {
            "get": {
                "summary": "Readiness of the database, Redis and the LLM configuration",
                "security": [],
                "responses": {
                    **{
                        code: _json(
                            ok(
                                {
                                    "type": "object",
                                    "required": ["database", "redis", "llm", "model"],
                                    "properties": {
                                        "database": {"enum": ["ok", "unavailable"]},
                                        "redis": {"enum": ["ok", "unavailable", "disabled"]},
                                        "llm": {"enum": ["offline", "openai-compatible"]},
                                        "model": {"type": "string"},
                                    },
                                }
                            ),
                            text,
                        )
                        for code, text in (
                            ("200", "Ready (maybe degraded)"),
                            ("503", "The database is unavailable"),
                        )
                    },
                    "405": _errors(405)["405"],
                },
            }
        },
    }


def _stream_paths() -> dict[str, Any]:
    ok = _envelope
    run_query = {"name": "runId", "in": "query", "required": True, "schema": ID}
    return {
        "/api/chat_stream": {
            "post": {
                "summary": "Ask a question and stream the run as server-sent events",
                "description": 'Events named `message`, data `{"type", "data"}`: `metadata` '
                "first (sessionId, runId, flow), one `progress` per node execution (node, outcome, "
                "reason_code, attempt), `content` chunks of the answer, `error`, `done` last. "
                "Keep-alive comments on long gaps. A client that disconnects does not stop the "
                "run.",
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": _ref("ChatRequest")}},
                },
                "responses": {"200": _SSE, **_errors(400, 413, 415, *_COMMON)},
            }
        },
        "/api/ai_ops": {
            "post": {
                "summary": "Investigate every firing alert and stream the report (SSE)",
                "description": "Same event format as /api/chat_stream; the first event carries "
                "sessionId and runId, the flow is `aiops`.",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {
                                    "sessionId": {
                                        "type": ["string", "null"],
                                        "pattern": ID["pattern"],
                                    },
                                    "userRequest": {"type": ["string", "null"], "maxLength": 1000},
                                },
                            }
                        }
                    },
                },
                "responses": {"200": _SSE, **_errors(400, 413, 415, *_COMMON)},
            }
        },
        "/api/diagnosis/{sessionId}/graph": {
            "get": {
                "summary": "The diagnosis graph as Mermaid, this run's route highlighted",
                "parameters": [_path_id("sessionId"), run_query],
                "responses": {
                    "200": _json(
                        ok(
                            {
                                "type": "object",
                                "required": ["runId", "flow", "mermaid", "route"],
                                "properties": {
                                    "runId": ID,
                                    "flow": {"enum": ["complex", "simple", "aiops"]},
                                    "mermaid": NULLABLE_STRING,
                                    "route": {"type": "array", "items": {"type": "string"}},
                                },
                            }
                        ),
                        "Null mermaid for runs that did not use the graph",
                    ),
                    **_errors(400, 404, *_COMMON),
                },
            }
        },
    }


@cache
def openapi_document() -> dict[str, Any]:
    """The document served at ``/openapi.json``."""
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Incident diagnosis API",
            "version": "1.0.0",
            "description": "Evidence-grounded incident diagnosis. Every JSON response is "
            "an envelope {code, message, data}.",
        },
        "servers": [{"url": "/"}],
        "paths": {**_paths(), **_stream_paths()},
        "components": {
            "schemas": SCHEMAS,
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
