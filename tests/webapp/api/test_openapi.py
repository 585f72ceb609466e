"""The generated OpenAPI document: valid, one operation per route, and what docs/api.md lists."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from openapi_spec_validator import validate

from webapp.api.contract import message
from webapp.api.models import ChatRequest, FeedbackRequest
from webapp.api.openapi import openapi_document

API_PAGE = Path(__file__).resolve().parents[3] / "docs" / "api.md"


def test_the_document_is_valid_openapi_3_1() -> None:
    document = openapi_document()
    assert document["openapi"] == "3.1.0"
    validate(document)  # raises with the first problem


def test_every_operation_documents_its_errors_and_the_envelope() -> None:
    for path, operations in openapi_document()["paths"].items():
        for method, operation in operations.items():
            responses = operation["responses"]
            assert "200" in responses and "405" in responses, (method, path)
            if method != "get":
                assert "403" in responses, f"{method} {path}: cross-origin refusal undocumented"
            if path.startswith("/api/"):
                assert {"401", "429", "503"} <= set(responses), (method, path)


def test_request_models_declare_each_field_and_its_limits_once() -> None:
    chat = openapi_document()["components"]["schemas"]["ChatRequest"]
    assert chat["required"] == ["Question"]
    assert chat["properties"]["Question"]["maxLength"] == 4000
    assert chat["properties"]["mode"]["enum"] == ["auto", "simple", "complex"]
    for spelling in ("Id", "id", "sessionId"):
        parsed = ChatRequest.model_validate({"question": "why", spelling: "s-1"})
        assert parsed.session_id == "s-1"
    body = {"SessionId": "s", "RunId": "r", "Feedback": "useful"}  # PascalCase by generator
    assert FeedbackRequest.model_validate(body).feedback == "useful"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({}, "Question is required"),
        ({"Question": "  "}, "Question must not be blank"),
        ({"Question": "x", "Id": "x\n"}, "Id must be 1-64 characters"),
        ({"Question": "x", "mode": "fast"}, "mode must be one of: auto, simple, complex"),
        ({"question": "x" * 4001}, "question is too long: 4001 characters, at most 4000"),
    ],
)
def test_validation_errors_read_as_sentences(body: dict[str, object], expected: str) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as caught:
        ChatRequest.model_validate(body)
    assert message(caught.value.errors()[0]).startswith(expected)


def api_table() -> str:
    """The endpoint table of the HTTP API page: everything before its paragraph on errors."""
    return API_PAGE.read_text().split("\nErrors:", 1)[0]


def test_the_api_page_lists_exactly_the_documented_operations() -> None:
    section = api_table()
    listed = set(re.findall(r"`(GET|POST|DELETE|PUT|PATCH) (/[^`?\s]*)", section))
    documented = {
        (method.upper(), re.sub(r"\{([^}]+)\}", r"<\1>", path))
        for path, operations in openapi_document()["paths"].items()
        for method in operations
    }
    assert listed == documented


def accepted_names(operation: dict[str, Any]) -> list[str]:
    """The query and header parameters and the JSON body's fields of one documented operation."""
    names = [p["name"] for p in operation.get("parameters", []) if p["in"] != "path"]
    body = operation.get("requestBody", {}).get("content", {}).get("application/json")
    if body is not None:
        model = body["schema"]["$ref"].rsplit("/", 1)[1]
        names += openapi_document()["components"]["schemas"][model]["properties"]
    return names


def test_each_api_page_row_names_what_its_endpoints_accept() -> None:
    """The API page's table is checked against the request models: every query parameter, header
    and body field an endpoint's model documents is named in that endpoint's row."""
    paths = openapi_document()["paths"]
    rows = [line for line in api_table().splitlines() if line.startswith("| `")]
    unnamed = []
    for row in rows:
        cell = row.split(" | ", 1)[0]
        for method, path in re.findall(r"`(GET|POST|DELETE|PUT|PATCH) (/[^`?\s]*)", cell):
            operation = paths[re.sub(r"<([^>]+)>", r"{\1}", path)][method.lower()]
            unnamed += [
                f"{method} {path}: {name}"
                for name in accepted_names(operation)
                if not re.search(rf"(?<![A-Za-z]){re.escape(name)}(?![A-Za-z])", row)
            ]
    assert unnamed == []
