"""Server-sent events: order, liveness, disconnects; the route graph; the evidence refs."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from peewee import Database

from webapp.demo.backend import DemoTelemetryBackend
from webapp.execution import streams
from webapp.llm.offline import OfflineChatModel
from webapp.llm.types import ChatResult, Message
from webapp.persistence.history import HistoryStore
from webapp.persistence.models import DiagnosisRun
from webapp.wiring import build_services

from .conftest import make_app
from .openapi_check import assert_documented

QUESTION = "Why is payment-service slow since 10:00?"


def frames(chunks: Iterator[bytes]) -> Iterator[str]:
    """SSE frames (``event: ...\\ndata: ...``, or ``: comment``) as they arrive."""
    buffer = ""
    for chunk in chunks:
        buffer += chunk.decode() if isinstance(chunk, bytes) else chunk
        while "\n\n" in buffer:
            frame, buffer = buffer.split("\n\n", 1)
            yield frame


def fields(frame: str) -> dict[str, str]:
    """The SSE fields of one frame (``id``, ``event``, ``data``)."""
    return dict(line.split(": ", 1) for line in frame.splitlines() if ": " in line)


def event(frame: str) -> dict[str, Any]:
    parsed = fields(frame)
    assert parsed.get("event") == "message" and "data" in parsed, frame
    data: dict[str, Any] = json.loads(parsed["data"])
    return data


def stream(app: Flask, path: str, body: dict[str, Any]) -> Any:
    response = app.test_client().post(path, json=body, buffered=False)
    assert_documented(response, "POST", path)
    return response


def test_a_chat_streams_metadata_progress_content_and_done_in_order(app: Flask) -> None:
    response = stream(app, "/api/chat_stream", {"Question": QUESTION})
    assert response.status_code == 200 and response.mimetype == "text/event-stream"
    events = [event(f) for f in frames(response.response) if not f.startswith(":")]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "metadata" and kinds[-1] == "done"
    meta, done = events[0]["data"], events[-1]["data"]
    assert meta["flow"] == "complex" and meta["runId"] == done["runId"]
    assert done["status"] == "SUCCESS" and done["success"] is True
    trace = (
        app.test_client()
        .get(f"/api/diagnosis/{meta['sessionId']}/trace?runId={meta['runId']}")
        .json["data"]
    )
    progress = [e["data"] for e in events if e["type"] == "progress"]
    transitions = trace["run"]["orchestrationTrace"]["transitions"]
    assert [p["node"] for p in progress] == [t["from"] for t in transitions] + ["composer"]
    assert set(progress[0]) == {"node", "outcome", "reason_code", "attempt"}
    text = "".join(e["data"]["text"] for e in events if e["type"] == "content")
    assert text == trace["run"]["answer"] and len([k for k in kinds if k == "content"]) > 1


class GatedModel:
    """The offline model, but the composer waits until the test opens the gate."""

    def __init__(self) -> None:
        self.inner = OfflineChatModel()
        self.gate = threading.Event()
        self.waiting = threading.Event()

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    def complete(self, messages: Sequence[Message], **kwargs: Any) -> ChatResult:
        format_ = kwargs.get("response_format") or {}
        if format_.get("json_schema", {}).get("name") == "composer_output":
            self.waiting.set()
            self.gate.wait(timeout=30)
        return self.inner.complete(messages, **kwargs)


@pytest.fixture
def gated(
    database: Database,
    demo_backend: DemoTelemetryBackend,
    history: HistoryStore | None,
    tmp_path: Path,
) -> tuple[Flask, GatedModel]:
    model = GatedModel()
    app = make_app(database, demo_backend, history, tmp_path)
    settings = app.extensions["diagnosis"].settings
    app.extensions["diagnosis"] = build_services(
        settings, database=database, backend=demo_backend, history=history, model=model
    )
    return app, model


def status_of(app: Flask, run_id: str) -> str:
    with app.extensions["diagnosis"].database.connection_context():
        return str(DiagnosisRun.get(DiagnosisRun.run_id == run_id).status)


def test_progress_arrives_while_the_run_is_still_running(
    gated: tuple[Flask, GatedModel], monkeypatch: pytest.MonkeyPatch
) -> None:
    app, model = gated
    monkeypatch.setattr(streams, "KEEPALIVE_SECONDS", 0.2)
    received = frames(stream(app, "/api/chat_stream", {"Question": QUESTION}).response)
    meta = event(next(received))["data"]
    seen: list[str] = []
    for frame in received:
        if frame.startswith(":"):
            seen.append("keep-alive")
            if model.waiting.is_set() and "verifier" in seen:
                break
            continue
        seen.append(event(frame)["data"]["node"])
    assert "verifier" in seen and "keep-alive" in seen
    assert status_of(app, meta["runId"]) == "RUNNING"
    model.gate.set()
    rest = [event(f) for f in received if not f.startswith(":")]
    assert rest[-1]["type"] == "done" and rest[-1]["data"]["status"] == "SUCCESS"


def test_a_client_that_disconnects_does_not_kill_the_run(gated: tuple[Flask, GatedModel]) -> None:
    app, model = gated
    response = stream(app, "/api/chat_stream", {"Question": QUESTION})
    received = frames(response.response)
    meta = event(next(received))["data"]
    response.close()  # the browser went away
    assert model.waiting.wait(timeout=30)
    model.gate.set()
    deadline = time.monotonic() + 30
    while status_of(app, meta["runId"]) != "SUCCESS" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert status_of(app, meta["runId"]) == "SUCCESS"
    with app.extensions["diagnosis"].database.connection_context():
        assert DiagnosisRun.get(DiagnosisRun.run_id == meta["runId"]).answer


def test_bad_stream_requests_are_plain_json_errors(app: Flask) -> None:
    response = app.test_client().post("/api/chat_stream", json={"Question": ""})
    assert_documented(response, "POST", "/api/chat_stream")
    assert response.status_code == 400 and response.json["message"] == "Question must not be blank"


def test_the_graph_highlights_the_route_of_the_run(app: Flask, answered: dict[str, Any]) -> None:
    path = f"/api/diagnosis/{answered['sessionId']}/graph?runId={answered['runId']}"
    response = app.test_client().get(path)
    assert_documented(response, "GET", path)
    data = response.json["data"]
    assert data["route"][0] == "planner" and data["route"][-1] == "composer"
    assert "executor" in data["route"] and "fallback" not in data["route"]
    assert data["mermaid"].startswith("flowchart TD") and "linkStyle" in data["mermaid"]
    assert "n_fallback" not in data["mermaid"].split("class ", 1)[1].split("\n", 1)[0]


def test_invocations_carry_the_evidence_the_answer_cites(
    app: Flask, answered: dict[str, Any]
) -> None:
    trace = (
        app.test_client()
        .get(f"/api/diagnosis/{answered['sessionId']}/trace?runId={answered['runId']}")
        .json["data"]
    )
    refs = [r for i in trace["toolInvocations"] for r in (i["evidenceRefs"] or [])]
    cited = [r for r in refs if r["cited"]]
    assert cited and {r["evidence_id"] for r in refs} == {f"E{n}" for n in range(1, len(refs) + 1)}
    for invocation in trace["toolInvocations"]:
        for ref in invocation["evidenceRefs"] or []:
            assert ref["statement"] and ref["evidence_excerpt"]
    # every cited item is listed under the answer (at most three chips follow each sentence)
    assert all(f"**{r['evidence_id']}**" in trace["run"]["answer"] for r in cited)


def test_attaching_to_a_finished_run_resumes_after_the_last_event_id(
    app: Flask, answered: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = f"/api/diagnosis/{answered['sessionId']}/runs/{answered['runId']}/events"
    client = app.test_client()
    whole = client.get(path)
    assert_documented(whole, "GET", "/api/diagnosis/<sessionId>/runs/<runId>/events")
    logged = [(fields(f)["id"], event(f)) for f in frames(iter([whole.get_data()]))]
    assert logged[0][1]["type"] == "metadata" and logged[-1][1]["type"] == "done"
    third = logged[2][0]
    resumed = client.get(path, headers={"Last-Event-ID": third})
    assert [fields(f)["id"] for f in frames(iter([resumed.get_data()]))] == [
        i for i, _ in logged[3:]
    ]
    events = app.extensions["diagnosis"].events
    waits: list[float] = []
    read = events.read

    def spy(run_id: str, after: str | None, timeout: float) -> Any:
        waits.append(timeout)
        return read(run_id, after, timeout)

    monkeypatch.setattr(events, "read", spy)
    past = client.get(path, headers={"Last-Event-ID": logged[-1][0]})
    ending = [event(f) for f in frames(iter([past.get_data()]))]
    assert ending[-1]["type"] == "done" and ending[-1]["data"]["runId"] == answered["runId"]
    # The run is over: its relay does not wait a keep-alive interval for events to come.
    assert waits and max(waits) < streams.KEEPALIVE_SECONDS


def test_a_run_whose_event_log_is_gone_streams_metadata_then_its_end_from_its_record(
    app: Flask, answered: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The log expired, or the run executed where this process cannot read its log."""
    events = app.extensions["diagnosis"].events
    monkeypatch.setattr(events, "exists", lambda run_id: False)
    monkeypatch.setattr(events, "read", lambda run_id, after, timeout: [])
    path = f"/api/diagnosis/{answered['sessionId']}/runs/{answered['runId']}/events"
    sent = [event(f) for f in frames(iter([app.test_client().get(path).get_data()]))]
    kinds = [e["type"] for e in sent]
    assert kinds[0] == "metadata" and kinds[-1] == "done" and set(kinds[1:-1]) == {"content"}
    assert "".join(e["data"]["text"] for e in sent[1:-1]) == answered["answer"]
    assert sent[0]["data"] == {
        "sessionId": answered["sessionId"],
        "runId": answered["runId"],
        "flow": "complex",
    }
    assert sent[-1]["data"]["runId"] == answered["runId"]
    assert sent[-1]["data"]["status"] == "SUCCESS"
