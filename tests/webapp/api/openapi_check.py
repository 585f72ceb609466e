"""Validate real responses against the served OpenAPI document."""

from __future__ import annotations

import re
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from werkzeug.test import TestResponse

from webapp.api.openapi import openapi_document

DOCUMENT = openapi_document()
REGISTRY = Registry().with_resource(
    "urn:openapi", Resource.from_contents(DOCUMENT, default_specification=DRAFT202012)
)


def _template(path: str) -> tuple[str, dict[str, Any]]:
    for template, operations in DOCUMENT["paths"].items():
        # a document id is a path ("upload/kafka.md"): it may hold slashes
        pattern = "^" + re.sub(r"\{[^}]+\}", r"[^/]+", template.replace("{docId}", ".+")) + "$"
        if re.match(pattern, path):
            return template, operations
    raise AssertionError(f"{path} is not described in openapi.json")


def assert_documented(response: TestResponse, method: str, path: str) -> None:
    """The response's status is documented for the operation and its body fits the schema."""
    _, operations = _template(path.split("?", 1)[0])
    operation = operations[method.lower()]
    documented = operation["responses"].get(str(response.status_code))
    assert documented, f"{method} {path} answered {response.status_code}, not documented"
    assert response.mimetype in documented["content"], (
        f"{method} {path} answered {response.mimetype}, documented {list(documented['content'])}"
    )
    if response.mimetype != "application/json":
        return
    schema = documented["content"]["application/json"]["schema"]
    schema = {"$ref": "urn:openapi#" + schema["$ref"][1:]} if "$ref" in schema else schema
    rewritten = _rewrite(schema)
    errors = sorted(
        Draft202012Validator(rewritten, registry=REGISTRY).iter_errors(response.json),
        key=lambda e: list(e.path),
    )
    assert not errors, f"{method} {path}: {errors[0].message} at {list(errors[0].path)}"


def _rewrite(node: Any) -> Any:
    """Point local ``#/components/...`` references at the registered document."""
    if isinstance(node, dict):
        return {
            k: ("urn:openapi" + v if k == "$ref" and v.startswith("#") else _rewrite(v))
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_rewrite(v) for v in node]
    return node
