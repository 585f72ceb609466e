"""Knowledge management over HTTP: list documents with their origin, delete uploads only."""

from __future__ import annotations

import threading
from io import BytesIO
from typing import Any

import pytest
from flask.testing import FlaskClient
from pytest_mock import MockerFixture

from tests.webapp.tools.kb_stats import stats
from webapp.tools import knowledge
from webapp.tools.knowledge import KnowledgeIndex

from .openapi_check import assert_documented

RUNBOOK = b"# Kafka consumer lag\n\n## Mitigation\n\n- Scale the consumer group out.\n"


def upload(client: FlaskClient, name: str, content: bytes = RUNBOOK) -> Any:
    response = client.post(
        "/api/upload", data={"file": (BytesIO(content), name)}, content_type="multipart/form-data"
    )
    assert_documented(response, "POST", "/api/upload")
    return response


def listed(client: FlaskClient) -> dict[str, dict[str, Any]]:
    response = client.get("/api/knowledge")
    assert_documented(response, "GET", "/api/knowledge")
    assert response.status_code == 200
    return {d["docId"]: d for d in response.json["data"]["documents"]}


def test_the_list_shows_bundled_runbooks_and_uploads_with_their_origin(
    client: FlaskClient,
) -> None:
    bundled = listed(client)
    assert bundled and {d["origin"] for d in bundled.values()} == {"directory"}
    assert all(d["uploadedAt"] is None and not d["deletable"] for d in bundled.values())
    assert upload(client, "kafka.md").status_code == 200
    documents = listed(client)
    kafka = documents["upload/kafka.md"]
    assert kafka["origin"] == "upload" and kafka["deletable"] is True
    assert kafka["bytes"] == len(RUNBOOK) and kafka["title"] == "Kafka consumer lag"
    assert kafka["uploadedAt"].endswith("Z") and kafka["chunks"] >= 1
    assert next(iter(documents)) == "upload/kafka.md"  # uploads first


def test_an_upload_can_be_deleted_and_is_then_not_found(client: FlaskClient) -> None:
    upload(client, "kafka.md")
    response = client.delete("/api/knowledge/upload/kafka.md")
    assert_documented(response, "DELETE", "/api/knowledge/upload/kafka.md")
    assert response.status_code == 200 and response.json["data"]["deleted"] is True
    assert "upload/kafka.md" not in listed(client)
    search = client.application.extensions["diagnosis"].knowledge.search("kafka consumer lag")
    assert all(not hit["doc_id"].startswith("upload/") for hit in search)
    again = client.delete("/api/knowledge/upload/kafka.md")
    assert again.status_code == 404 and "no knowledge document" in again.json["message"]


def test_bundled_runbooks_are_read_only(client: FlaskClient) -> None:
    before = listed(client)
    doc_id = next(iter(before))
    response = client.delete(f"/api/knowledge/{doc_id}")
    assert_documented(response, "DELETE", f"/api/knowledge/{doc_id}")
    assert response.status_code == 403 and "read-only" in response.json["message"]
    assert listed(client) == before


@pytest.mark.parametrize("doc_id", ["upload/a%00b.md", "upload/" + "x" * 400])
def test_malformed_document_ids_are_400(client: FlaskClient, doc_id: str) -> None:
    assert client.delete(f"/api/knowledge/{doc_id}").status_code == 400


def test_a_big_upload_does_not_hold_searches_while_it_is_chunked(mocker: MockerFixture) -> None:
    """While an upload is being chunked, a search from another thread still answers."""
    kb = KnowledgeIndex(":memory:")
    kb.add_document("first.md", "# Failover\n\nPromote the replica when the primary is gone.\n")
    chunking, release = threading.Event(), threading.Event()
    real = knowledge.chunk_with_title

    def slow_chunking(text: str, filename: str) -> Any:
        chunking.set()
        release.wait(timeout=30)
        return real(text, filename)

    mocker.patch.object(knowledge, "chunk_with_title", side_effect=slow_chunking)
    worker = threading.Thread(target=kb.add_document, args=("big.md", "# h\n" * 10_000))
    worker.start()
    try:
        assert chunking.wait(timeout=30)
        found: list[Any] = []
        searcher = threading.Thread(target=lambda: found.append(kb.search("replica primary")))
        searcher.start()
        searcher.join(timeout=10)
        assert not searcher.is_alive() and found[0][0]["doc_id"] == "upload/first.md#0"
    finally:
        release.set()
        worker.join()
    assert stats(kb)["uploaded_documents"] == 2


def test_linear_chunking_keeps_a_document_of_only_headings_whole() -> None:
    text = "# h\n" * 50_000
    kb = KnowledgeIndex(":memory:")
    summary = kb.add_document("headings.md", text)
    assert summary["bytes"] == len(text) and summary["chunks"] >= len(text) // 1500
    assert stats(kb)["chunks"] == summary["chunks"]
