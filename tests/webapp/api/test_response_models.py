"""The lists and the trace answer exactly what their response model says.

Each answer is validated against a strict copy of its documented schema, in which every object must have
exactly the properties its model declares: a key the view forgot, added or spelled
differently fails, as does a value of another type.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask.testing import FlaskClient
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from webapp.api.openapi import openapi_document


def strict(node: Any) -> Any:
    """The schema with every object's properties required and no others allowed."""
    if isinstance(node, list):
        return [strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: strict(value) for key, value in node.items()}
    if "properties" in node:
        node["required"] = sorted(node["properties"])
        node["additionalProperties"] = False
    return node


STRICT = strict(openapi_document())
REGISTRY = Registry().with_resource(
    "urn:strict", Resource.from_contents(STRICT, default_specification=DRAFT202012)
)


@pytest.fixture
def rated(client: FlaskClient, answered: dict[str, Any]) -> dict[str, Any]:
    """The answered run, marked useful (so the case library lists it) and asked a follow-up."""
    ids = {"sessionId": answered["sessionId"], "runId": answered["runId"]}
    assert client.post("/api/feedback", json={**ids, "feedback": "useful"}).status_code == 200
    follow_up = {"Id": answered["sessionId"], "Question": "Is order-service healthy?"}
    assert client.post("/api/chat", json=follow_up).status_code == 200
    return ids


@pytest.mark.parametrize(
    ("path", "model"),
    [
        ("/api/runs?limit=1", "RunPage"),
        ("/api/runs", "RunPage"),
        ("/api/sessions", "SessionPage"),
        ("/api/diagnosis/{sid}/runs?limit=1", "RunPage"),
        ("/api/diagnosis/{sid}/trace?runId={rid}", "Trace"),
        ("/api/diagnosis/{sid}/trace?runId={rid}&inputs=none", "Trace"),
        ("/api/diagnosis/{sid}/runs/{rid}/steps/1", "Step"),
        ("/api/diagnosis/{sid}/evidence?runId={rid}", "RunEvidence"),
        ("/api/cases", "CaseList"),
        ("/api/cases/{rid}", "Case"),
        ("/api/alerts", "AlertList"),
        ("/api/knowledge", "KnowledgeList"),
    ],
)
def test_an_answer_has_exactly_the_fields_of_its_model(
    client: FlaskClient, rated: dict[str, Any], path: str, model: str
) -> None:
    path = path.replace("{sid}", rated["sessionId"]).replace("{rid}", rated["runId"])
    response = client.get(path)
    assert response.status_code == 200, response.get_data(as_text=True)[:300]
    data = json.loads(response.get_data())["data"]
    schema = {"$ref": f"urn:strict#/components/schemas/{model}"}
    errors = list(Draft202012Validator(schema, registry=REGISTRY).iter_errors(data))
    assert not errors, [f"{e.message} at {list(e.path)}" for e in errors[:3]]
