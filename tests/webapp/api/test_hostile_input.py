"""Hostile input on every endpoint: a 4xx with the error envelope, and nothing written.

Each case is sent after a real run exists (so an id-shaped attack could touch real rows; a path
may name it as ``{sid}``/``{rid}``); the database (every audit and alert table and the run's
feedback) and the knowledge index (documents and chunk counts) are compared before and after.
"""

from __future__ import annotations

import base64
import http.client
import json
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from peewee import Database

from tests.webapp.tools.kb_stats import stats
from webapp.demo.backend import DemoTelemetryBackend
from webapp.persistence.history import HistoryStore
from webapp.persistence.models import MODELS, DiagnosisRun

from .conftest import make_app
from .openapi_check import assert_documented
from .test_alerts_api import AUTH, HOOK, TOKEN, real_payload

DEEP = b'{"Question": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
JUST_TOO_DEEP = b'{"Question": "x", "mode": ' + b"[" * 64 + b"]" * 64 + b"}"
SURROGATE = b'{"Question": "\\ud800"}'


def snapshot(app: Flask) -> tuple[Any, ...]:
    """Row counts of every table, every run's feedback, and the knowledge documents."""
    found = app.extensions["diagnosis"]
    with found.database.connection_context():
        counts = tuple(model.select().count() for model in MODELS)
        feedback = sorted(
            (r.run_id, r.feedback, r.feedback_comment, r.status) for r in DiagnosisRun.select()
        )
    return counts, feedback, found.knowledge.documents(), stats(found.knowledge)


def json_case(path: str, body: bytes) -> tuple[str, str, dict[str, Any]]:
    return ("POST", path, {"data": body, "content_type": "application/json"})


def upload_case(name: str, content: bytes = b"# Notes\n\nSome text.\n") -> tuple[str, str, Any]:
    # The file is made per request: a stream shared by the parametrized backends is read once.
    return (
        "POST",
        "/api/upload",
        {"data": lambda: {"file": (BytesIO(content), name)}, "content_type": "multipart/form-data"},
    )


def cursor(*key: object) -> str:
    """A cursor as the lists encode theirs, holding ``key`` (the lists' own or an altered one)."""
    text = json.dumps(list(key))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


T = "2026-01-01T00:00:00"
TRACE = "/api/diagnosis/{sid}/runs/{rid}"

# (method, path, request keyword arguments, expected status, fragment of the message)
CASES: list[tuple[str, str, dict[str, Any], int, str]] = [
    # ids: matched as a whole string, so a trailing newline is a bad id everywhere
    (*json_case("/api/chat", b'{"Question": "hi", "Id": "x\\n"}'), 400, "Id must be 1-64"),
    (*json_case("/api/chat", b'{"Question": "hi", "Id": "x\\r"}'), 400, "Id must be 1-64"),
    (*json_case("/api/chat", b'{"Question": "hi", "Id": "\\u2028x"}'), 400, "Id must be 1-64"),
    (*json_case("/api/chat", b'{"Question": "hi", "Id": "\\u0661"}'), 400, "Id must be 1-64"),
    (*json_case("/api/chat_stream", b'{"Question": "hi", "Id": "x\\n"}'), 400, "Id must be 1-64"),
    (*json_case("/api/chat/clear", b'{"Id": "x\\n"}'), 400, "Id must be 1-64"),
    (*json_case("/api/ai_ops", b'{"sessionId": "x\\n"}'), 400, "must be 1-64"),
    (
        *json_case("/api/feedback", b'{"sessionId": "s\\n", "runId": "r", "feedback": "useful"}'),
        400,
        "must be 1-64",
    ),
    ("GET", "/api/chat/session/x%0A", {}, 400, "must be 1-64"),
    ("GET", "/api/diagnosis/x%0A/runs", {}, 400, "must be 1-64"),
    ("GET", "/api/diagnosis/s1/trace?runId=r%0A", {}, 400, "must be 1-64"),
    ("GET", "/api/diagnosis/s1/graph?runId=r%0A", {}, 400, "must be 1-64"),
    ("GET", "/api/diagnosis/s1/trace?runId=r&inputs=%FF%00", {}, 400, "inputs must be one of"),
    ("GET", "/api/diagnosis/s1/trace?runId=r&inputs=stored", {}, 400, "inputs must be one"),
    ("GET", "/api/cases/r%0A", {}, 400, "must be 1-64"),
    # nesting: 100,000 levels (a RecursionError in the standard decoder) and just over 64
    (*json_case("/api/chat", DEEP), 400, "deeper than 64"),
    (*json_case("/api/chat", JUST_TOO_DEEP), 400, "deeper than 64"),
    (*json_case("/api/feedback", DEEP), 400, "deeper than 64"),
    (*json_case("/api/chat_stream", DEEP), 400, "deeper than 64"),
    (*json_case("/api/ai_ops", DEEP), 400, "deeper than 64"),
    (*json_case("/api/chat/clear", DEEP), 400, "deeper than 64"),
    # text that cannot be stored: lone surrogates, invalid UTF-8, NaN, a byte-order mark
    (*json_case("/api/chat", SURROGATE), 400, "surrogate"),
    (*json_case("/api/chat", b'{"Question": "a\\udc00b"}'), 400, "surrogate"),
    (
        *json_case("/api/feedback", b'{"sessionId": "s", "runId": "r", "feedback": "\\ud800"}'),
        400,
        "surrogate",
    ),
    (*json_case("/api/ai_ops", b'{"userRequest": "\\ud800"}'), 400, "surrogate"),
    (*json_case("/api/chat", b'{"Question": "caf\xe9"}'), 400, "not valid JSON"),
    (*json_case("/api/chat", b'{"Question": NaN}'), 400, "not valid JSON"),
    (*json_case("/api/chat", b'\xef\xbb\xbf{"Question": "hi"}'), 400, "not valid JSON"),
    (*json_case("/api/chat", b'{"Question": "hi"} trailing'), 400, "not valid JSON"),
    (*json_case("/api/chat", b'{"Question": "hi", "mode": 1e999}'), 400, "not valid JSON"),
    (*json_case("/api/chat", b'{"Question": "hi", "Question": "\\ud800"}'), 400, "surrogate"),
    (
        "POST",
        "/api/chat",
        {
            "data": '{"Question": "hi"}'.encode("utf-16"),
            "content_type": "application/json; charset=utf-16",
        },
        400,
        "not UTF-8",
    ),
    (*json_case("/api/chat", b'{"Question": "hi", "Id": ["s1"]}'), 400, "Id must be 1-64"),
    # control characters and wrong types in fields
    (*json_case("/api/chat", b'{"Question": "hi\\u007f"}'), 400, "control characters"),
    (*json_case("/api/chat", b'{"Question": "hi", "mode": "auto\\n"}'), 400, "mode must be one of"),
    (*json_case("/api/chat", b'{"Question": {"$gt": ""}}'), 400, "must be a string"),
    (*json_case("/api/chat", b'{"Question": true}'), 400, "must be a string"),
    (
        *json_case(
            "/api/feedback",
            b'{"sessionId": "s", "runId": "r", "feedback": "useful", "comment": "a\\u0000"}',
        ),
        400,
        "control characters",
    ),
    (
        *json_case("/api/feedback", b'{"sessionId": "s", "runId": "r", "feedback": "USEFUL"}'),
        400,
        "feedback must be one of",
    ),
    # upload names: control and bidi-format characters, hidden and overlong names, no name
    (*upload_case("a\x00b.md"), 400, "control or format"),
    (*upload_case("notes\n.md"), 400, "file"),  # the header line breaks: no file part
    (*upload_case("evil\u202egpj.md"), 400, "control or format"),
    (*upload_case("../.hidden.md"), 400, "file name"),
    (*upload_case("a" * 300 + ".md"), 400, "longer than 255"),
    (*upload_case("notes.md.exe"), 400, "only .md and .txt"),
    (*upload_case("binary.md", b"\x00\x01\x02\x03" * 100), 400, "binary"),
    (*upload_case("latin1.md", b"caf\xe9 au lait"), 400, "UTF-8"),
    (*upload_case("blank.md", b"  \n\n\t\n"), 400, "empty"),
    # knowledge deletion: bundled runbooks are read-only, odd ids are refused or unknown
    ("DELETE", "/api/knowledge/runbooks/bad_deploy.md", {}, 403, "read-only"),
    ("DELETE", "/api/knowledge/upload/a%00b.md", {}, 400, "control characters"),
    ("DELETE", "/api/knowledge/upload/..%2F..%2Fetc%2Fpasswd", {}, 404, "no knowledge document"),
    ("DELETE", "/api/knowledge/" + "x" * 400, {}, 400, "too long"),
    ("DELETE", "/api/knowledge/upload/%27%20OR%201%3D1%20--", {}, 404, "no knowledge document"),
    # pagination: only plain ASCII digits in range
    ("GET", "/api/cases?limit=%D9%A3", {}, 400, "must be an integer"),
    ("GET", "/api/cases?limit=1_0", {}, 400, "must be an integer"),
    ("GET", "/api/cases?offset=" + "9" * 5000, {}, 400, "must be an integer"),
    ("GET", "/api/cases?limit=%200", {}, 400, "must be an integer"),
    # the later endpoints: ids with a newline, in the path, the query and the alert's fingerprint
    ("GET", "/api/diagnosis/{sid}/evidence?runId={rid}%0A", {}, 400, "runId must be 1-64"),
    ("GET", "/api/diagnosis/{sid}%0A/evidence?runId={rid}", {}, 400, "sessionId must be 1-64"),
    ("GET", "/api/diagnosis/{sid}/evidence", {}, 400, "runId is required"),
    ("GET", TRACE + "%0A/steps/1", {}, 400, "runId must be 1-64"),
    ("GET", TRACE + "%0A/events", {}, 400, "runId must be 1-64"),
    ("GET", "/api/diagnosis/{sid}%0A/runs/{rid}/steps/1", {}, 400, "sessionId must be 1-64"),
    ("GET", "/api/runs?sessionId={sid}%0A", {}, 400, "sessionId must be 1-64"),
    ("POST", "/api/alerts/x%0A/investigate", {}, 400, "fingerprint must be 1-64"),
    ("POST", "/api/alerts/" + "f" * 65 + "/investigate", {}, 400, "fingerprint must be 1-64"),
    ("POST", "/api/alerts/%ED%A0%80/investigate", {}, 400, "fingerprint must be 1-64"),
    # bad cursors: not ours, another list's, and ours altered to keys no driver can send
    ("GET", "/api/runs?cursor=not-a-cursor", {}, 400, "not a cursor this server"),
    ("GET", "/api/runs?cursor=" + cursor("runs", T, "\ud800"), {}, 400, "not a cursor of the"),
    ("GET", "/api/runs?cursor=" + cursor("runs", T, "a\x00b"), {}, 400, "not a cursor of the"),
    ("GET", "/api/runs?cursor=" + cursor("sessions", T, "s"), {}, 400, "of the runs list"),
    ("GET", "/api/runs?cursor=" + cursor("runs", "noon", "r"), {}, 400, "of the runs list"),
    ("GET", "/api/sessions?cursor=" + cursor("sessions", T, "\udfff"), {}, 400, "sessions list"),
    ("GET", "/api/cases?cursor=" + cursor("cases", T, "\ud800"), {}, 400, "cases list"),
    ("GET", "/api/cases?cursor=abc%24", {}, 400, "should match pattern"),
    ("GET", "/api/diagnosis/{sid}/runs?cursor=" + cursor("runs", T, "\ud800"), {}, 400, "runs"),
    ("GET", "/api/alerts?cursor=" + cursor("alerts", T, 10**30), {}, 400, "alerts list"),
    ("GET", "/api/alerts?cursor=" + cursor("alerts", T, 2**63), {}, 400, "alerts list"),
    ("GET", "/api/alerts?cursor=" + cursor("alerts", T, True), {}, 400, "alerts list"),
    ("GET", "/api/alerts?cursor=" + cursor("alerts", T, -(2**63) - 1), {}, 400, "alerts list"),
    ("GET", "/api/alerts?cursor=" + cursor("cases", T, 1), {}, 400, "alerts list"),
    ("GET", "/api/alerts?cursor=" + "A" * 513, {}, 400, "at most 512"),
    # bad filters: times no zone can hold, control characters, values outside the enums
    ("GET", "/api/runs?since=9999-12-31T23:59:59-14:00", {}, 400, "since is out of range"),
    ("GET", "/api/sessions?until=0001-01-01T00:00:00%2B14:00", {}, 400, "until is out of range"),
    ("GET", "/api/runs?since=yesterday", {}, 400, "since"),
    ("GET", "/api/runs?text=a%00b", {}, 400, "control characters"),
    ("GET", "/api/sessions?text=%1B[31m", {}, 400, "control characters"),
    ("GET", "/api/cases?text=" + "x" * 201, {}, 400, "text is too long"),
    ("GET", "/api/runs?service=a%22b", {}, 400, "service string should match pattern"),
    ("GET", "/api/runs?status=DONE", {}, 400, "status must be one of"),
    ("GET", "/api/runs?degraded=maybe", {}, 400, "degraded"),
    ("GET", "/api/alerts?state=bogus", {}, 400, "state must be one of"),
    ("GET", "/api/alerts?limit=%D9%A3", {}, 400, "must be an integer"),
    # event ids: a malformed Last-Event-ID would make a Redis log refuse every read
    ("GET", TRACE + "/events", {"headers": {"Last-Event-ID": "abc"}}, 400, "should match"),
    (
        "GET",
        TRACE + "/events",
        {"headers": {"Last-Event-ID": "0-0; DROP"}},
        400,
        "Last-Event-ID string should match",
    ),
    ("GET", TRACE + "/events", {"headers": {"Last-Event-ID": "9" * 41}}, 400, "Last-Event-ID"),
    # NUL anywhere in a JSON body: PostgreSQL cannot store it, whichever field it is in
    (*json_case("/api/ai_ops", b'{"userRequest": "a\\u0000b"}'), 400, "control characters"),
    (*json_case("/api/chat", b'{"Question": "hi", "x\\u0000": 1}'), 400, "control characters"),
    (*json_case("/api/chat/clear", b'{"Id": "s", "n": ["\\u0000"]}'), 400, "control characters"),
]


@pytest.fixture
def seeded(client: FlaskClient, answered: dict[str, Any]) -> dict[str, Any]:
    return answered


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status", "message"),
    CASES,
    ids=[f"{c[0]} {c[1][:40]} {c[4]}" for c in CASES],
)
def test_hostile_input_is_a_4xx_and_writes_nothing(
    app: Flask,
    client: FlaskClient,
    seeded: dict[str, Any],
    method: str,
    path: str,
    kwargs: dict[str, Any],
    status: int,
    message: str,
) -> None:
    before = snapshot(app)
    kwargs = {k: v() if callable(v) else v for k, v in kwargs.items()}
    path = path.replace("{sid}", seeded["sessionId"]).replace("{rid}", seeded["runId"])
    response = client.open(path, method=method, **kwargs)
    assert response.status_code == status, response.get_data(as_text=True)[:300]
    assert_documented(response, method, path)
    assert response.json == {"code": status, "message": response.json["message"], "data": None}
    assert message in response.json["message"]
    assert snapshot(app) == before


def test_ids_of_a_real_run_with_a_newline_are_bad_ids(
    app: Flask, client: FlaskClient, answered: dict[str, Any]
) -> None:
    session_id, run_id = answered["sessionId"], answered["runId"]
    before = snapshot(app)
    for response in (
        client.post(
            "/api/feedback",
            json={"sessionId": session_id + "\n", "runId": run_id, "feedback": "useful"},
        ),
        client.post("/api/chat/clear", json={"Id": session_id + "\n"}),
        client.post("/api/chat", json={"Question": "hi", "Id": session_id + "\n"}),
        client.get(f"/api/diagnosis/{session_id}/trace?runId={run_id}%0A"),
    ):
        assert response.status_code == 400, response.json
    assert snapshot(app) == before
    assert client.get(f"/trace/{session_id}%0A/{run_id}").status_code == 404


def send_chunked(port: int, path: str, content_type: str, body: bytes) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.putrequest("POST", path)
        connection.putheader("Content-Type", content_type)
        connection.putheader("Transfer-Encoding", "chunked")
        connection.endheaders()
        try:
            for start in range(0, len(body), 65536):
                piece = body[start : start + 65536]
                connection.send(b"%x\r\n%s\r\n" % (len(piece), piece))
            connection.send(b"0\r\n\r\n")
        except OSError:
            pass  # the server may answer 413 and close before the whole body is sent
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
def test_chunked_bodies_over_the_limit_are_413(app: Flask, server: int) -> None:
    before = snapshot(app)
    big = b'{"Question": "' + b"x" * 10_000_000 + b'"}'
    status, body = send_chunked(server, "/api/chat", "application/json", big)
    assert status == 413 and b'"code":413' in body
    boundary = "hostileboundary"
    multipart = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.md"\r\n'
            "Content-Type: text/markdown\r\n\r\n"
        ).encode()
        + b"# h\n" * 2_500_000
        + f"\r\n--{boundary}--\r\n".encode()
    )
    status, body = send_chunked(
        server, "/api/upload", f"multipart/form-data; boundary={boundary}", multipart
    )
    assert status == 413 and b'"code":413' in body
    small = b'{"Question": "hello"}'
    status, body = send_chunked(server, "/api/chat", "application/json", small)
    assert status == 200, body
    assert snapshot(app)[0][1] == before[0][1] + 1  # only the small chunked question ran


def webhook_body(**changes: Any) -> bytes:
    """Alertmanager's recorded payload with ``changes`` made to it (``alert.`` keys: its alert)."""
    payload = real_payload()
    for key, value in changes.items():
        target = payload["alerts"][0] if key.startswith("alert.") else payload
        target[key.removeprefix("alert.")] = value
    return json.dumps(payload).encode()


WEBHOOK_CASES: list[tuple[bytes, str]] = [
    (b'{"version": "4", "alerts": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "deeper than 64"),
    (b'{"version": "4", "groupKey": "\\ud800"}', "surrogate"),
    (webhook_body(groupKey="g\u0000"), "control characters"),
    (webhook_body(receiver="r\u0000"), "control characters"),
    (webhook_body(**{"alert.labels": {"alertname": "X\u0000", "service": "s"}}), "control"),
    (webhook_body(**{"alert.annotations": {"summary": "a\u0000b"}}), "control characters"),
    (webhook_body(**{"alert.fingerprint": "f\n"}), "fingerprint"),
    (webhook_body(**{"alert.labels": {"service": "s"}}), "alertname"),
    (webhook_body(version="3"), "version"),
    (webhook_body(alerts=[]), "alerts"),
]


@pytest.mark.parametrize(("body", "message"), WEBHOOK_CASES, ids=[c[1] for c in WEBHOOK_CASES])
def test_hostile_webhook_bodies_are_400_and_write_nothing(
    database: Database,
    demo_backend: DemoTelemetryBackend,
    history: HistoryStore | None,
    tmp_path: Path,
    body: bytes,
    message: str,
) -> None:
    hooked = make_app(database, demo_backend, history, tmp_path, alert_webhook_token=TOKEN)
    before = snapshot(hooked)
    response = hooked.test_client().post(
        HOOK, data=body, content_type="application/json", headers=AUTH
    )
    assert response.status_code == 400, response.json
    assert_documented(response, "POST", HOOK)
    assert message in response.json["message"] and response.json["data"] is None
    assert snapshot(hooked) == before
