"""Benchmark: list pages at 100,000 runs and the trace of 10,000 steps, on SQLite and MariaDB.

The Flask app runs in process behind ``app.test_client()`` (server time only). Each database
gets 100,000 runs in 1,000 sessions (pairs share a ``started_at``, each run carries ~2 KB of
``self_evaluation`` and ``orchestration_trace`` that lists must not read) and 100,000 cases, and
one run of 10,000 steps and 10,000 invocations (``bench/api.py``'s synthetic rows; the steps
shaped as chat runs record them, ``conversation_rows``), and as many received alerts as runs
(one in five firing, every tenth linked to a run). Timed, as medians of ``CALLS`` requests: the
first and the last page of ``/api/runs``, ``/api/sessions``, ``/api/cases``, ``/api/alerts``
(all, and firing only), a session's runs; some filtered first pages; a step read on its own;
and the whole trace with full model inputs and with none (``inputs=none``, the trace viewer's
list), with the Python memory it allocated at its peak (tracemalloc) and its size. "Before"
rows time the case library and the alert list by OFFSET with a COUNT, and a session's runs
reading every column, on the same data. A text matching no run reads every run (3 calls): the
one list page that is O(n). Run with ``make bench-api``; ``--runs``/``--steps`` shrink it.

MariaDB is ``BENCH_MYSQL_URL`` (as in ``bench/api.py``; empty to skip), in a scratch database.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from contextlib import ExitStack
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from api import (
    BATCH,
    Target,
    close_target,
    conversation_rows,
    invocation_row,
    make_target,
    mariadb_scratch,
    require,
)
from flask.testing import FlaskClient
from peewee import fn

from webapp.demo.backend import DemoTelemetryBackend
from webapp.persistence.listing import RUN_COLUMNS, encode_cursor
from webapp.persistence.models import (
    AgentStep,
    AlertRecord,
    AlertRun,
    CaseLibrary,
    ChatSession,
    DiagnosisRun,
    ToolInvocation,
)

RUNS, SESSIONS, STEPS = 100_000, 1_000, 10_000
PAGE = 50
CALLS = 15
TARGET_PAGE_MS, TARGET_TRACE_MS = 10, 150
T0 = datetime(2026, 1, 1)
BIG_DOC = {"rule_evaluation": {"claims": [{"id": f"c{n}", "text": "x" * 90} for n in range(20)]}}


def median_ms(call: Callable[[], Any], calls: int = CALLS) -> float:
    """Median milliseconds of ``call()`` (after one warm-up call)."""
    call()
    timings = []
    for _ in range(calls):
        started = time.perf_counter()
        call()
        timings.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(timings), 2)


def seed(target: Target, runs: int, steps: int) -> None:
    """Sessions, runs, cases, and one long run, with multi-row INSERTs."""
    database = target.database
    rng = random.Random(7)
    with database.connection_context():
        sessions = [
            {
                "session_id": f"sess-{n:05d}",
                "title": f"bench session {n}",
                "updated_at": T0 + timedelta(seconds=n * (runs // SESSIONS)),
            }
            for n in range(SESSIONS)
        ]
        with database.atomic():
            for start in range(0, len(sessions), BATCH):
                ChatSession.insert_many(sessions[start : start + BATCH]).execute()
        for start in range(0, runs, 1000):
            rows, cases = [], []
            for n in range(start, min(runs, start + 1000)):
                moment = T0 + timedelta(seconds=n // 2)
                run_id = f"run-{rng.getrandbits(48):012x}"
                rows.append(
                    {
                        "run_id": run_id,
                        "session_id": f"sess-{n % SESSIONS:05d}",
                        "agent_flow": "CHAT",
                        "flow": ("complex", "simple", "aiops")[n % 3],
                        "status": "FAILED" if n % 10 == 0 else "SUCCESS",
                        "question": f"Why is svc-{n % 97} slow since 10:{n % 60:02d}?",
                        "answer": "A cold cache" if n % 50 == 0 else "A bad deployment",
                        "degraded": n % 13 == 0,
                        "self_evaluation": BIG_DOC,
                        "orchestration_trace": BIG_DOC,
                        "started_at": moment,
                    }
                )
                cases.append(
                    {
                        "run_id": run_id,
                        "session_id": rows[-1]["session_id"],
                        "question": rows[-1]["question"],
                        "answer": rows[-1]["answer"],
                        "created_at": moment,
                    }
                )
            with database.atomic():
                for part in range(0, len(rows), BATCH):
                    DiagnosisRun.insert_many(rows[part : part + BATCH]).execute()
                    CaseLibrary.insert_many(cases[part : part + BATCH]).execute()
        with database.atomic():
            ChatSession.create(session_id="sess-long", title="long")
            DiagnosisRun.create(
                run_id="run-long",
                session_id="sess-long",
                agent_flow="CHAT",
                flow="complex",
                status="SUCCESS",
                question="long",
                started_at=T0 - timedelta(days=1),
            )
            step_rows = conversation_rows(rng, "run-long", "sess-long", steps)
            for part in range(0, steps, BATCH):
                AgentStep.insert_many(step_rows[part : part + BATCH]).execute()
            ids = [
                r.id
                for r in AgentStep.select(AgentStep.id)
                .where(AgentStep.run_id == "run-long")
                .order_by(AgentStep.step_index)
            ]
            calls = [invocation_row(rng, "run-long", "sess-long", ids[i], i) for i in range(steps)]
            for part in range(0, steps, BATCH):
                ToolInvocation.insert_many(calls[part : part + BATCH]).execute()


def seed_alerts(target: Target, alerts: int) -> None:
    """``alerts`` received alerts in groups of 10; one in five firing, every tenth linked to a
    run (which need not exist: the list joins the links it finds)."""
    database = target.database
    with database.connection_context(), database.atomic():
        for start in range(0, alerts, 1000):
            rows = [
                {
                    "fingerprint": f"{n:016x}",
                    "alert_name": f"HighLatency{n % 37}",
                    "status": "firing" if n % 5 == 0 else "resolved",
                    "severity": "page",
                    "service": f"svc-{n % 97}",
                    "labels": {"alertname": f"HighLatency{n % 37}", "service": f"svc-{n % 97}"},
                    "annotations": {"summary": "p99 latency above 2 s for 5 minutes"},
                    "starts_at": T0 + timedelta(seconds=n // 2),
                    "group_key": f'{{}}:{{alertname="HighLatency{n // 10 % 37}"}}',
                    "receiver": "diagnosis",
                    "updated_at": T0 + timedelta(seconds=n // 2),
                }
                for n in range(start, min(alerts, start + 1000))
            ]
            for part in range(0, len(rows), BATCH):
                AlertRecord.insert_many(rows[part : part + BATCH]).execute()
        linked = AlertRecord.select(AlertRecord.id).where(AlertRecord.id % 10 == 0)
        links = [
            {"alert": row.id, "run_id": f"run-alert-{row.id}", "session_id": "sess-00000"}
            for row in linked
        ]
        for part in range(0, len(links), BATCH):
            AlertRun.insert_many(links[part : part + BATCH]).execute()


def last_cursor(kind: str, model: Any, first: Any, second: Any, where: Any = None) -> str:
    """The cursor whose page is the list's last ``PAGE`` rows (the key of the row before them);
    "" when the list has no more than one page."""
    query = model.select(first, second)
    if where is not None:
        query = query.where(where)
    rows = list(query.order_by(first.asc(), second.asc()).offset(PAGE).limit(1).tuples())
    return encode_cursor(kind, *rows[0]) if rows else ""


def get(client: FlaskClient, url: str, key: str, size: int | None = PAGE) -> Callable[[], Any]:
    """A call of ``url`` that checks the page it gets."""

    def call() -> Any:
        response = client.get(url)
        require(
            response.status_code == 200, f"{url}: {response.status_code} {response.data[:200]!r}"
        )
        rows = response.get_json()["data"][key]
        require(size is None or len(rows) == size, f"{url}: {len(rows)} rows")
        return rows

    return call


def list_figures(target: Target, runs: int) -> dict[str, float]:
    """First and last pages of every list, and filtered first pages."""
    client = target.app.test_client()
    figures: dict[str, float] = {}
    with target.database.connection_context():
        cursors = {
            "runs": last_cursor("runs", DiagnosisRun, DiagnosisRun.started_at, DiagnosisRun.run_id),
            "sessions": last_cursor(
                "sessions", ChatSession, ChatSession.updated_at, ChatSession.session_id
            ),
            "cases": last_cursor("cases", CaseLibrary, CaseLibrary.created_at, CaseLibrary.run_id),
            "alerts": last_cursor("alerts", AlertRecord, AlertRecord.updated_at, AlertRecord.id),
            "firing": last_cursor(
                "alerts",
                AlertRecord,
                AlertRecord.updated_at,
                AlertRecord.id,
                AlertRecord.status == "firing",
            ),
            "session": last_cursor(
                "runs",
                DiagnosisRun,
                DiagnosisRun.started_at,
                DiagnosisRun.run_id,
                DiagnosisRun.session_id == "sess-00007",
            ),
        }
    per_session = runs // SESSIONS
    pages = [
        ("/api/runs", "runs", "runs", PAGE),
        ("/api/sessions", "sessions", "sessions", PAGE),
        ("/api/cases", "cases", "cases", PAGE),
        ("/api/alerts", "alerts", "alerts", PAGE),
        ("/api/alerts?state=firing", "alerts", "firing", PAGE),
        ("/api/diagnosis/sess-00007/runs", "runs", "session", min(PAGE, per_session)),
    ]
    for path, key, cursor, size in pages:
        url = f"{path}{'&' if '?' in path else '?'}limit={PAGE}"
        figures[f"GET {path} first page"] = median_ms(get(client, url, key, size))
        if cursors[cursor]:
            figures[f"GET {path} last page"] = median_ms(
                get(client, f"{url}&cursor={cursors[cursor]}", key, size)
            )
    for query in (
        "status=FAILED",
        "flow=simple&degraded=true",
        "text=cold%20cache",
        "since=2026-01-01T06:00:00Z&until=2026-01-01T07:00:00Z",
    ):
        figures[f"GET /api/runs?{query} first page"] = median_ms(
            get(client, f"/api/runs?limit={PAGE}&{query}", "runs", None)
        )
    figures["text matching no run: /api/runs first page (reads every run)"] = median_ms(
        get(client, f"/api/runs?limit={PAGE}&text=no%20such%20run", "runs", 0), 3
    )
    figures["before: cases last page by OFFSET + COUNT"] = median_ms(
        lambda: old_cases(target, runs - PAGE)
    )
    figures["before: cases first page by OFFSET + COUNT"] = median_ms(lambda: old_cases(target, 0))
    figures["before: alerts last page by OFFSET + COUNT"] = median_ms(
        lambda: old_alerts(target, runs - PAGE)
    )
    figures["before: alerts first page by OFFSET + COUNT"] = median_ms(
        lambda: old_alerts(target, 0)
    )
    figures["before: a session's runs, every column parsed"] = median_ms(
        lambda: old_session_runs(target)
    )
    figures["after: a session's runs, list columns only"] = median_ms(
        lambda: new_session_runs(target)
    )
    return figures


def old_cases(target: Target, offset: int) -> int:
    """The replaced case-library query: ORDER BY created_at, id with OFFSET, plus a COUNT."""
    with target.database.connection_context():
        rows = list(
            CaseLibrary.select()
            .order_by(CaseLibrary.created_at.desc(), CaseLibrary.id.desc())
            .limit(PAGE)
            .offset(offset)
            .dicts()
        )
        total = CaseLibrary.select().count()
    require(len(rows) == PAGE and total > 0, "old cases query")
    return total


def old_alerts(target: Target, offset: int) -> int:
    """The replaced alert-list query: every column by OFFSET on ``updated_at``, plus a COUNT
    (the links of the page read as now)."""
    with target.database.connection_context():
        query = AlertRecord.select()
        total = query.select(fn.COUNT(AlertRecord.id)).scalar()
        rows = list(
            query.order_by(AlertRecord.updated_at.desc(), AlertRecord.id.desc())
            .limit(PAGE)
            .offset(offset)
        )
        links = list(AlertRun.select().where(AlertRun.alert.in_([r.id for r in rows])).dicts())
    require(len(rows) == PAGE and total > 0 and links is not None, "old alerts query")
    return int(total)


def old_session_runs(target: Target) -> int:
    """The replaced session-runs query: every column, the two JSON documents parsed."""
    with target.database.connection_context():
        rows = list(
            DiagnosisRun.select()
            .where(DiagnosisRun.session_id == "sess-00007")
            .order_by(DiagnosisRun.started_at.desc(), DiagnosisRun.id.desc())
            .limit(PAGE)
            .dicts()
        )
    return len(rows)


def new_session_runs(target: Target) -> int:
    with target.database.connection_context():
        rows = list(
            DiagnosisRun.select(*RUN_COLUMNS)
            .where(DiagnosisRun.session_id == "sess-00007")
            .order_by(DiagnosisRun.started_at.desc(), DiagnosisRun.run_id.desc())
            .limit(PAGE)
            .dicts()
        )
    return len(rows)


#: The trace's forms of the steps' model inputs, as ``inputs=`` takes them.
FORMS = ("full", "none")


def interleaved(calls: dict[str, Callable[[], Any]], repeats: int) -> dict[str, float]:
    """Median milliseconds of each call, the calls taken in turn ``repeats`` times (after one
    warm-up round): side by side, so the VM's drift hits each alike."""
    timings: dict[str, list[float]] = {name: [] for name in calls}
    for round_no in range(repeats + 1):
        for name, call in calls.items():
            started = time.perf_counter()
            call()
            if round_no:
                timings[name].append((time.perf_counter() - started) * 1000)
    return {name: round(statistics.median(values), 2) for name, values in timings.items()}


def trace_figures(target: Target, steps: int) -> dict[str, float]:
    """The trace in its two forms (time, peak Python memory, body size) and a step read on its
    own."""
    client = target.app.test_client()
    url = "/api/diagnosis/sess-long/trace?runId=run-long"

    def trace(inputs: str) -> Callable[[], int]:
        def call() -> int:
            response = client.get(f"{url}&inputs={inputs}")
            size = len(response.get_data())
            require(response.status_code == 200 and size > steps * 100, "trace")
            return size

        return call

    calls = {f"trace of {steps} steps, inputs={form}": trace(form) for form in FORMS}
    figures: dict[str, float] = interleaved(calls, 5)
    for form in FORMS:
        figures[f"inputs={form}: peak Python MB"] = peak_mb(trace(form))
        figures[f"inputs={form}: body MB"] = round(trace(form)() / 1e6, 1)
    base = "/api/diagnosis/sess-long/runs/run-long"
    with target.database.connection_context():
        executor = (
            AgentStep.select(fn.MAX(AgentStep.step_index))
            .where(AgentStep.run_id == "run-long", AgentStep.agent_name == "executor")
            .scalar()
        )

    def one_step(index: int) -> Callable[[], Any]:
        def call() -> Any:
            response = client.get(f"{base}/steps/{index}")
            require(response.status_code == 200, f"step {index}: {response.status_code}")
            return response.get_json()["data"]

        return call

    figures["one step on its own, the run's first"] = median_ms(one_step(0))
    figures["one step on its own, the last executor round"] = median_ms(one_step(int(executor)))
    return figures


def peak_mb(call: Callable[[], Any]) -> float:
    tracemalloc.start()
    try:
        call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return round(peak / 1e6, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--steps", type=int, default=STEPS)
    args = parser.parse_args()
    backend = DemoTelemetryBackend()
    results: dict[str, dict[str, float]] = {}
    notes: list[str] = []
    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        urls = {"SQLite": f"sqlite:///{workdir / 'lists.db'}"}
        maria, server = mariadb_scratch(stack)
        if maria:
            urls["MariaDB"] = maria
        else:
            notes.append(f"MariaDB skipped: {server}")
        for label, url in urls.items():
            target = make_target(label.lower(), url, workdir, backend)
            target.bind()
            started = time.perf_counter()
            seed(target, args.runs, args.steps)
            seed_alerts(target, args.runs)
            notes.append(f"{label}: seeded in {time.perf_counter() - started:.0f} s")
            results[label] = {
                **list_figures(target, args.runs),
                **trace_figures(target, args.steps),
            }
            close_target(target)
    labels = list(results)
    print(
        f"\nlists at {args.runs:,} runs, trace of {args.steps:,} steps; medians of {CALLS} "
        f"(traces: 5) in ms; targets: pages < {TARGET_PAGE_MS} ms, trace < {TARGET_TRACE_MS} ms"
    )
    print(f"{'':<62}" + "".join(f"{label:>12}" for label in labels))
    for name in results[labels[0]]:
        print(f"{name:<62}" + "".join(f"{results[label][name]:>12}" for label in labels))
    for note in notes:
        print(f"note: {note}")
    print(json.dumps({"runs": args.runs, "steps": args.steps, "figures": results}))


if __name__ == "__main__":
    main()
