"""Fuzz the HTTP API from its own OpenAPI document with schemathesis (``make fuzz``).

The real Flask app runs in process (schemathesis' WSGI transport, no network) on a temporary
SQLite database with the offline model. Schemathesis reads ``/openapi.json`` and generates
requests for every operation, valid ones and invalid ones (positive and negative modes), plus a
seeded pass that sends the ids of a real run so that the trace, runs, graph, session and case
endpoints answer 200 too, and a few explicit requests (feedback on that run, a follow-up
question, a ``.md`` upload, cursors holding keys no driver can send) that random generation
cannot make. Every response goes through four schemathesis checks, each counted on its own:
``not_a_server_error`` (no 5xx), ``status_code_conformance`` (the status is documented),
``content_type_conformance`` (so is the content type) and ``response_schema_conformance`` (the
body fits the documented schema). Event streams documented only as a string get
``sse_event_conformance`` instead of the last one (see :func:`sse_problems`). Prints requests
and failures per operation and per check, one example per distinct failure, and exits 1 when
anything failed.

Needs schemathesis 4 (the ``fuzz`` extra). ``--examples`` sets the budget per operation and
mode, ``--seed`` makes a different but still reproducible run.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

import hypothesis
import schemathesis
from flask import Flask
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis.errors import HypothesisException
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok
from schemathesis.errors import FailureGroup
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from webapp import create_app
from webapp.config import Settings
from webapp.wiring import build_services

CHECKS: dict[str, Any] = {
    "not_a_server_error": not_a_server_error,
    "status_code_conformance": status_code_conformance,
    "content_type_conformance": content_type_conformance,
    "response_schema_conformance": response_schema_conformance,
}
SSE_CHECK = "sse_event_conformance"
SSE_TYPES = ("metadata", "progress", "content", "error", "done")
MAX_STREAM_EVENTS = 2_000
EXAMPLES_SHOWN = 3  # per check
BODY_SHOWN = 400  # characters of a failing response's body


@dataclass
class Failed:
    """The first request that failed one check in one way, and how often that happened."""

    check: str
    operation: str
    title: str
    message: str
    curl: str
    status: int
    content_type: str
    body: str
    count: int = 1


@dataclass
class Tally:
    """Requests, passes and failures per operation and per check."""

    requests: Counter[str] = field(default_factory=Counter)
    passed: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    failed_by_operation: Counter[str] = field(default_factory=Counter)
    distinct: dict[tuple[str, str, str], Failed] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    def fail(self, check: str, case: Any, response: Any, title: str, message: str) -> None:
        """Count a failure; keep the first example of each (check, operation, title)."""
        self.failed[check] += 1
        self.failed_by_operation[case.operation.label] += 1
        key = (check, case.operation.label, title)
        if key in self.distinct:
            self.distinct[key].count += 1
            return
        self.distinct[key] = Failed(
            check,
            case.operation.label,
            title,
            message.strip(),
            case.as_curl_command(),
            response.status_code if response is not None else 0,
            _content_type(response),
            "" if response is None else response.content.decode("utf-8", "replace")[:BODY_SHOWN],
        )


def _content_type(response: Any) -> str:
    if response is None:
        return ""
    values = response.headers.get("content-type") or response.headers.get("Content-Type") or [""]
    return str(values[0] if isinstance(values, list) else values)


def _event_key(event_id: str) -> tuple[int, ...]:
    """An event id (``7`` or ``1764590000000-0``) as numbers, in the order the log keeps."""
    return tuple(int(part) for part in event_id.split("-"))


def sse_problems(response: Any, after: str | None = None) -> list[str]:
    """What is wrong with an SSE body beyond what the per-event schema can say.

    schemathesis validates each event against the documented event schema; this also checks
    the order the operation's description promises: ``metadata`` first, ``done`` last. A stream
    resumed after event ``after`` starts later instead, with ids past ``after``.
    """
    frames = [f for f in response.content.decode("utf-8").split("\n\n") if f.strip()]
    events = [f for f in frames if not f.startswith(":")]  # ":" lines are keep-alive comments
    kinds: list[str] = []
    for frame in events:
        fields = dict(line.split(": ", 1) for line in frame.splitlines() if ": " in line)
        if after is not None and "id" in fields and _event_key(fields["id"]) <= _event_key(after):
            return [f"event {fields['id']} is not after Last-Event-ID {after}"]
        if fields.get("event") != "message":
            return [f"event {fields.get('event')!r} is not 'message': {frame[:120]!r}"]
        try:
            data = json.loads(fields.get("data", ""))
        except ValueError:
            return [f"event data is not JSON: {frame[:120]!r}"]
        if not isinstance(data, dict) or set(data) != {"type", "data"}:
            return [f"event data is not an object {{type, data}}: {frame[:120]!r}"]
        if data["type"] not in SSE_TYPES:
            return [f"unknown event type {data['type']!r}"]
        kinds.append(data["type"])
    if not kinds or (kinds[0] != "metadata" and after is None):
        return [f"the stream must start with metadata, got {kinds}"]
    if kinds[-1] != "done" and not response.stream_cut_short:
        return [f"the stream must end with done, got {kinds}"]
    return []


def _resumed_after(case: Any) -> str | None:
    """The event id a request resumes after (its ``Last-Event-ID``), if any."""
    headers = {k.lower(): v for k, v in (case.headers or {}).items()}
    after = headers.get("last-event-id")
    return str(after) if after else None


def check_response(case: Any, response: Any, tally: Tally) -> None:
    """Run every check on its own, so each failure is counted against the check that saw it."""
    response = schemathesis.Response.from_any(response)
    stream = _content_type(response).startswith("text/event-stream")
    for name, check in CHECKS.items():
        try:
            case.validate_response(response, checks=[check])
            tally.passed[name] += 1
        except FailureGroup as group:
            for failure in group.exceptions:
                tally.fail(name, case, response, failure.title, failure.message)
    if stream and response.status_code == 200:
        problems = sse_problems(response, _resumed_after(case))
        for problem in problems:
            tally.fail(
                SSE_CHECK, case, response, "SSE stream breaks the documented format", problem
            )
        if not problems:
            tally.passed[SSE_CHECK] += 1


WEBHOOK_TOKEN = "fuzz-webhook-token"
WEBHOOK_PATH = "/api/alerts/alertmanager"


def _auth(case: Any) -> dict[str, str] | None:
    """The webhook's bearer token (Alertmanager always sends it); other endpoints need none."""
    return {"Authorization": f"Bearer {WEBHOOK_TOKEN}"} if case.path == WEBHOOK_PATH else None


def exercise(label: str, strategy: Any, tally: Tally, examples: int, seed: int, app: Flask) -> None:
    """Send ``examples`` generated cases (no shrinking: every failure is counted, none hidden)."""

    @hypothesis.seed(seed)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
    )
    @given(case=strategy)
    def send(case: Any) -> None:
        tally.requests[case.operation.label] += 1
        try:
            response = case.call(app=app, headers=_auth(case))
        except Exception as exc:  # the app raised through WSGI instead of answering
            tally.fail("not_a_server_error", case, None, type(exc).__name__, str(exc))
            return
        check_response(case, response, tally)

    try:
        send()
    except HypothesisException as exc:  # e.g. no negative case exists for an operation
        tally.skipped.append(f"{label}: no case could be generated ({type(exc).__name__})")


def build_app(workdir: Path) -> Flask:
    """The app on a fresh SQLite file with the offline model (history read from its runs)."""
    settings = Settings.from_env(
        {},
        overrides={
            "database_url": f"sqlite:///{workdir / 'fuzz.db'}",
            "knowledge_db": str(workdir / "knowledge.db"),
            # The webhook answers 503 while disabled; with a token its bodies are fuzzed too.
            "alert_webhook_token": WEBHOOK_TOKEN,
        },
    )
    services = build_services(settings)
    return create_app(services=services)


def seed_run(app: Flask) -> tuple[str, str]:
    """A real, answered complex run marked useful (so it is in the case library)."""
    client = app.test_client()
    answer = client.post("/api/chat", json={"Question": "Why is payment-service slow since 10:00?"})
    data = answer.get_json()["data"]
    session_id, run_id = data["sessionId"], data["runId"]
    rated = client.post(
        "/api/feedback", json={"sessionId": session_id, "runId": run_id, "feedback": "useful"}
    )
    if answer.status_code != 200 or data["status"] != "SUCCESS" or rated.status_code != 200:
        raise SystemExit(f"could not seed a run: {answer.get_json()} / {rated.get_json()}")
    return session_id, run_id


def seeded_strategy(operation: Any, session_id: str, run_id: str) -> Any | None:
    """Cases of ``operation`` that name the seeded run, or None when it takes no such ids."""
    path = {"sessionId": session_id, "runId": run_id}
    path_parameters = {p.name: path[p.name] for p in operation.path_parameters if p.name in path}
    query = {"runId": run_id} if any(p.name == "runId" for p in operation.query) else None
    if not path_parameters and not query:
        return None
    return operation.as_strategy(path_parameters=path_parameters or None, query=query)


def explicit(schema: Any, app: Flask, session_id: str, run_id: str, tally: Tally) -> None:
    """Requests generation cannot make: feedback on a real run, a follow-up, a real upload."""
    rated = {"sessionId": session_id, "runId": run_id}
    bodies = [
        ("/api/feedback", {**rated, "feedback": "useful"}),  # 200: idempotent repeat
        ("/api/feedback", {**rated, "feedback": "not_useful", "comment": "wrong cause"}),
        ("/api/feedback", {**rated, "feedback": "not_useful", "comment": "wrong cause"}),  # again
        ("/api/chat", {"Id": session_id, "Question": "Why is order-service returning errors?"}),
        ("/api/chat_stream", {"Id": session_id, "Question": "Is user-service healthy?"}),
        ("/api/chat/clear", {"Id": session_id}),
    ]
    for path, body in bodies:
        case = schema[path]["POST"].Case(body=body, media_type="application/json")
        tally.requests[case.operation.label] += 1
        check_response(case, case.call(app=app), tally)
    text = b"# Fuzz runbook\n\nRestart the pod when it is stuck."
    case = schema["/api/upload"]["POST"].Case(body={"file": text}, media_type="multipart/form-data")
    tally.requests[case.operation.label] += 1
    # schemathesis names every file "file"; the endpoint indexes only .md and .txt names
    upload = {"file": (io.BytesIO(text), "fuzz.md")}
    check_response(case, app.test_client().post("/api/upload", data=upload), tally)
    ids = {"sessionId": session_id, "runId": run_id}
    for path, query in altered_keys():
        operation = schema[path]["GET"]
        names = {p.name for p in operation.path_parameters}
        case = operation.Case(path_parameters={k: v for k, v in ids.items() if k in names} or None)
        case.query = query
        tally.requests[case.operation.label] += 1
        check_response(case, case.call(app=app), tally)


def _cursor(*key: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(list(key)).encode()).decode().rstrip("=")


def altered_keys() -> list[tuple[str, dict[str, str]]]:
    """Cursors that decode but hold keys no driver can send, and times UTC cannot hold: valid
    by the document's patterns, so generation does not stumble on them."""
    at = "2026-01-01T00:00:00"
    return [
        ("/api/runs", {"cursor": _cursor("runs", at, "\ud800")}),
        ("/api/runs", {"cursor": _cursor("runs", at, "a\x00b")}),
        ("/api/sessions", {"cursor": _cursor("sessions", at, "\udfff")}),
        ("/api/cases", {"cursor": _cursor("cases", at, "\ud800")}),
        ("/api/diagnosis/{sessionId}/runs", {"cursor": _cursor("runs", at, "\ud800")}),
        ("/api/alerts", {"cursor": _cursor("alerts", at, 10**30)}),
        ("/api/alerts", {"cursor": _cursor("alerts", at, -(2**63) - 1)}),
        ("/api/runs", {"since": "9999-12-31T23:59:59-14:00"}),
        ("/api/sessions", {"until": "0001-01-01T00:00:00+14:00"}),
    ]


def fuzz(app: Flask, examples: int, seed: int) -> Tally:
    """Positive, negative and seeded passes over every operation of the served document."""
    session_id, run_id = seed_run(app)
    # Read whole event streams (schemathesis stops at 20 events by default): a run is bounded.
    config = schemathesis.Config.from_dict({"max-stream-events": MAX_STREAM_EVENTS})
    schema = schemathesis.openapi.from_wsgi("/openapi.json", app, config=config)
    tally = Tally()
    for result in schema.get_all_operations():
        if not isinstance(result, Ok):  # the document describes this operation wrongly
            tally.skipped.append(f"invalid operation in the document: {result.err()}")
            tally.failed["document"] += 1
            continue
        operation = result.ok()
        for mode in ("positive", "negative"):
            strategy = operation.as_strategy(generation_mode=GenerationMode(mode))
            exercise(f"{operation.label} {mode}", strategy, tally, examples, seed, app)
        seeded = seeded_strategy(operation, session_id, run_id)
        if seeded is not None:
            exercise(f"{operation.label} seeded", seeded, tally, examples, seed, app)
    explicit(schema, app, session_id, run_id, tally)
    return tally


def report(tally: Tally, started: float, describe: Callable[[], str]) -> int:
    """Print the counts and examples; return the exit status."""
    print(describe())
    print(f"\n{'operation':<42}{'requests':>10}{'failures':>10}")
    for operation, count in sorted(tally.requests.items()):
        print(f"{operation:<42}{count:>10}{tally.failed_by_operation[operation]:>10}")
    total = sum(tally.requests.values())
    print(f"{'all':<42}{total:>10}{sum(tally.failed.values()):>10}")
    print(f"\n{'check':<42}{'passed':>10}{'failed':>10}")
    for name in (*CHECKS, SSE_CHECK):
        print(f"{name:<42}{tally.passed[name]:>10}{tally.failed[name]:>10}")
    for line in tally.skipped:
        print(f"skipped {line}")
    shown: Counter[str] = Counter()
    for failed in tally.distinct.values():
        shown[failed.check] += 1
        if shown[failed.check] > EXAMPLES_SHOWN:
            continue
        print(f"\n[{failed.check}] {failed.operation}: {failed.title} (x{failed.count})")
        if failed.message:
            print(f"  {failed.message.splitlines()[0]}")
        print(f"  reproduce: {failed.curl}")
        print(f"  -> {failed.status} {failed.content_type}: {failed.body[:BODY_SHOWN]!r}")
    failures = sum(tally.failed.values())
    print(
        f"\n{total} requests, {failures} failures ({len(tally.distinct)} distinct) "
        f"in {time.perf_counter() - started:.0f} s"
    )
    return 1 if failures else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--examples", type=int, default=80, help="per operation and mode (>= 2,000 requests in all)"
    )
    parser.add_argument("--seed", type=int, default=7, help="hypothesis seed")
    args = parser.parse_args()
    if int(version("schemathesis").split(".")[0]) < 4:
        raise SystemExit("scripts/fuzz_api.py needs schemathesis >= 4: make fuzz installs it")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fuzz-api-") as workdir:
        app = build_app(Path(workdir))
        try:
            tally = fuzz(app, args.examples, args.seed)
        finally:
            app.extensions["diagnosis"].workers.shutdown()
            app.extensions["diagnosis"].database.close()

    def describe() -> str:
        return (
            f"schemathesis {version('schemathesis')}, hypothesis {version('hypothesis')}, "
            f"seed {args.seed}, {args.examples} examples per operation and mode"
        )

    sys.exit(report(tally, started, describe))


if __name__ == "__main__":
    main()
