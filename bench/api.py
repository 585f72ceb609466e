"""Benchmark: server-side latency of chat runs and of the trace API, on SQLite and MariaDB.

The real Flask app runs in process behind ``app.test_client()`` (no network, so every figure is
the server's own time) with the offline provider and in-process history. Chat runs cycle through
the five demo questions, sequentially and from 8 concurrent clients; the system's own overhead
is a chat run minus the in-memory diagnosis of the same question (the workflow alone, without
HTTP, database or history). The trace API is timed on runs of 1,000 steps and 1,000 invocations
inserted directly with the models, and the SQL statements one request issues are counted for
runs of 10 and 1,000 steps. Figures are medians (and nearest-rank p95); a readable table is
followed by one JSON line. Run with ``make bench-api``; ``--profile`` adds cProfile top entries.

MariaDB is the server ``BENCH_MYSQL_URL`` names (default ``mysql://root@127.0.0.1:3306/test``;
set it empty to skip); a scratch database ``bench_<pid>`` is created there and dropped at the
end, and the database the URL names is never touched.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import math
import os
import pstats
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from flask import Flask
from flask.testing import FlaskClient
from peewee import Database
from playhouse.pool import PooledDatabase

from webapp import create_app
from webapp.config import Settings
from webapp.demo.backend import DemoTelemetryBackend
from webapp.demo.scenarios import scenario_records
from webapp.persistence.db import bind
from webapp.persistence.history import MemoryHistory
from webapp.persistence.models import AgentStep, ChatSession, DiagnosisRun, ToolInvocation, utcnow
from webapp.wiring import build_services, offline_diagnoser

SEQUENTIAL_ROUNDS = 8  # x 5 questions = 40 sequential runs per backend
CLIENTS, RUNS_PER_CLIENT = 8, 10
TRACE_CALLS = 20
BIG, SMALL = 1_000, 10
BATCH = 100  # rows per multi-row INSERT
OVERHEAD_TARGET_MS, TRACE_TARGET_MS = 30, 50
DEFAULT_MYSQL_URL = "mysql://root@127.0.0.1:3306/test"
QUESTIONS = [record["question"] for record in scenario_records("default")]


@dataclass
class Target:
    """One app on one database, with the figures measured on it."""

    label: str
    app: Flask
    database: Database
    figures: dict[str, Any] = field(default_factory=dict)

    def bind(self) -> None:
        """Point the (process-wide) models at this target's database."""
        bind(self.database)


def p95(values: list[float]) -> float:
    """Nearest-rank 95th percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def summary(values: list[float]) -> dict[str, float]:
    """Median and p95, rounded to 0.01 ms."""
    return {"median_ms": round(statistics.median(values), 2), "p95_ms": round(p95(values), 2)}


def require(condition: bool, message: str) -> None:
    """Fail the benchmark on a wrong result (kept under ``python -O``, unlike ``assert``)."""
    if not condition:
        raise AssertionError(message)


@contextmanager
def count_queries(database: Database) -> Iterator[list[int]]:
    """Count the statements ``database.execute_sql`` runs inside the block (one-item list)."""
    counter = [0]
    original = database.execute_sql

    def counting(sql: str, params: Any = None, *args: Any, **kwargs: Any) -> Any:
        counter[0] += 1
        return original(sql, params, *args, **kwargs)

    database.execute_sql = counting  # type: ignore[method-assign]
    try:
        yield counter
    finally:
        del database.execute_sql  # back to the class's method


# -- building the targets ------------------------------------------------------------------------


def make_target(label: str, url: str, workdir: Path, backend: DemoTelemetryBackend) -> Target:
    """The app on ``url``, offline model, in-process history, its own knowledge index."""
    settings = Settings.from_env(
        {}, overrides={"database_url": url, "knowledge_db": str(workdir / f"{label}-kb.db")}
    )
    history = MemoryHistory(max_messages=12, ttl_seconds=3600)
    services = build_services(settings, backend=backend, history=history)
    require(settings.offline, "the benchmark needs the offline provider")
    return Target(label, create_app(services=services), services.database)


def close_target(target: Target) -> None:
    """Stop the run workers; close every connection (the pool's too) so the scratch database
    can be dropped."""
    target.app.extensions["diagnosis"].workers.shutdown()
    if isinstance(target.database, PooledDatabase):
        target.database.close_all()
    else:
        target.database.close()


def mariadb_scratch(stack: ExitStack) -> tuple[str | None, str]:
    """``(url, server version)`` of a scratch database dropped when ``stack`` closes, or
    ``(None, why not)``."""
    url = os.environ.get("BENCH_MYSQL_URL", DEFAULT_MYSQL_URL)
    if not url:
        return None, "BENCH_MYSQL_URL is empty"
    name, parsed = f"bench_{os.getpid()}", urlparse(url)

    def admin(sql: str) -> Any:
        import pymysql

        with (
            pymysql.connect(
                host=parsed.hostname,
                port=parsed.port or 3306,
                user=unquote(parsed.username or ""),
                password=unquote(parsed.password or ""),
                connect_timeout=3,
                autocommit=True,
            ) as connection,
            connection.cursor() as cursor,
        ):
            cursor.execute(sql)
            return cursor.fetchone()

    try:
        server = str(admin("SELECT VERSION()")[0])
        admin(f"CREATE DATABASE {name} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
    except Exception as exc:
        return None, f"{parsed.hostname}:{parsed.port or 3306} unavailable: {exc}"
    stack.callback(admin, f"DROP DATABASE IF EXISTS {name}")
    return parsed._replace(path=f"/{name}").geturl(), server


# -- chat runs -----------------------------------------------------------------------------------


def timed_chat(client: FlaskClient, question: str) -> float:
    """Milliseconds of one ``POST /api/chat``; the run must be a complex SUCCESS."""
    started = time.perf_counter()
    response = client.post("/api/chat", json={"Question": question})
    elapsed = (time.perf_counter() - started) * 1000
    data = (response.get_json() or {}).get("data") or {}
    require(response.status_code == 200, f"chat answered {response.status_code}")
    require(data.get("status") == "SUCCESS" and data.get("success") is True, f"chat run {data}")
    require(data.get("flow") == "complex", f"{question!r} took the {data.get('flow')} flow")
    return elapsed


def warm_up(targets: list[Target], diagnose: Callable[[str], Any]) -> None:
    """Two passes over the questions per target (the second counts SQL statements per run)."""
    for target in targets:
        target.bind()
        client = target.app.test_client()
        for question in QUESTIONS:
            timed_chat(client, question)
            diagnose(question)
        counts = []
        for question in QUESTIONS:
            with count_queries(target.database) as counter:
                timed_chat(client, question)
            counts.append(counter[0])
        target.figures["chat_sql"] = [min(counts), max(counts)]
        target.figures["chat_sql_by_question"] = dict(zip(QUESTIONS, counts, strict=True))


def sequential(targets: list[Target], diagnose: Callable[[str], Any]) -> dict[str, Any]:
    """Rounds of the five questions, targets interleaved; the in-memory run follows each chat."""
    chat: dict[str, list[float]] = {t.label: [] for t in targets}
    memory: list[float] = []
    paired: list[float] = []
    clients = {t.label: t.app.test_client() for t in targets}
    for _ in range(SEQUENTIAL_ROUNDS):
        for target in targets:
            target.bind()
            for question in QUESTIONS:
                elapsed = timed_chat(clients[target.label], question)
                chat[target.label].append(elapsed)
                if target.label == "sqlite":
                    started = time.perf_counter()
                    result = diagnose(question)
                    alone = (time.perf_counter() - started) * 1000
                    require(result.run.status == "SUCCESS", f"in-memory run of {question!r}")
                    memory.append(alone)
                    paired.append(elapsed - alone)
    for target in targets:
        target.figures["chat_sequential"] = {
            "runs": len(chat[target.label]),
            **summary(chat[target.label]),
        }
    return {
        **summary(paired),
        "in_memory_diagnosis": summary(memory),
        "target_ms": OVERHEAD_TARGET_MS,
    }


def concurrent(target: Target) -> None:
    """``CLIENTS`` threads, each with its own test client, ``RUNS_PER_CLIENT`` runs each."""
    target.bind()
    latencies: list[list[float]] = [[] for _ in range(CLIENTS)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(CLIENTS + 1, timeout=60)

    def client_loop(index: int) -> None:
        client = target.app.test_client()
        barrier.wait()
        try:
            for run in range(RUNS_PER_CLIENT):
                question = QUESTIONS[(index + run) % len(QUESTIONS)]
                latencies[index].append(timed_chat(client, question))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=client_loop, args=(i,)) for i in range(CLIENTS)]
    for thread in threads:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    if errors:
        raise errors[0]
    everything = [ms for values in latencies for ms in values]
    target.figures["chat_concurrent"] = {
        "clients": CLIENTS,
        "runs": len(everything),
        **summary(everything),
        "runs_per_s": round(len(everything) / wall, 1),
    }


# -- the trace API -------------------------------------------------------------------------------

WORDS = ("latency", "error", "pool", "timeout", "payment", "cache", "mysql", "p95", "deploy")


def words(rng: random.Random, chars: int) -> str:
    """Roughly ``chars`` characters of space-separated words."""
    out: list[str] = []
    size = 0
    while size < chars:
        out.append(rng.choice(WORDS))
        size += len(out[-1]) + 1
    return " ".join(out)


def step_row(rng: random.Random, run_id: str, session_id: str, index: int) -> dict[str, Any]:
    """An ``agent_step`` with a 2-4 KB model input and a ~0.5 KB model output."""
    user = {"question": words(rng, 60), "reference_time": "2026-11-30T12:00:00Z"}
    user["plan"] = words(rng, rng.randint(1000, 2800))
    tool_args = {"service": "payment-service", "level": "ERROR", "limit": 100}
    return {
        "run_id": run_id,
        "session_id": session_id,
        "step_index": index,
        "agent_name": "executor",
        "model": "offline-rule-based-v1",
        "model_input": {
            "messages": [
                {"role": "system", "content": words(rng, 900)},
                {"role": "user", "content": json.dumps(user)},
            ],
            "response_format": {"type": "json_object"},
        },
        "model_output": {
            "role": "assistant",
            "content": words(rng, 300),
            "tool_calls": [{"id": f"call-{index}", "name": "query_logs", "arguments": tool_args}],
        },
        "has_tool_call": True,
        "status": "SUCCESS",
    }


def invocation_row(
    rng: random.Random, run_id: str, session_id: str, step_id: int, index: int
) -> dict[str, Any]:
    """A ``tool_invocation`` with a 1-2 KB raw output."""
    records = [
        {
            "timestamp": f"2026-11-30T10:{n:02d}:00.000Z",
            "service": "payment-service",
            "level": "ERROR",
            "message": words(rng, 130),
            "trace_id": f"{rng.getrandbits(64):016x}",
        }
        for n in range(rng.randint(4, 8))
    ]
    return {
        "invocation_id": f"inv-{run_id[-12:]}-{index:05d}",
        "run_id": run_id,
        "session_id": session_id,
        "step": step_id,
        "agent_name": "executor",
        "tool_name": "query_logs",
        "arguments": {"service": "payment-service", "level": "ERROR", "limit": 100},
        "raw_output": {"records": records, "total": len(records), "truncated": False},
        "status": "SUCCESS",
    }


def mean_bytes(rows: list[dict[str, Any]], key: str) -> int:
    """Mean size of the compact JSON of ``row[key]`` (what the column stores)."""
    return round(statistics.mean(len(json.dumps(r[key], separators=(",", ":"))) for r in rows))


def insert_run(database: Database, session_id: str, run_id: str, size: int) -> dict[str, int]:
    """A finished run of ``size`` steps and invocations; returns the mean JSON column sizes."""
    rng = random.Random(size)
    with database.connection_context(), database.atomic():
        ChatSession.create(session_id=session_id, title="bench", expires_at=utcnow())
        DiagnosisRun.create(
            run_id=run_id,
            session_id=session_id,
            agent_flow="CHAT",
            flow="complex",
            status="SUCCESS",
            question=QUESTIONS[0],
            answer=words(rng, 2000),
            step_count=size,
            tool_count=size,
            self_evaluation={"rule_evaluation": {"tool_invocation_count": size}},
            orchestration_trace={"version": "stategraph-v1", "transitions": []},
            finished_at=utcnow(),
        )
        steps = [step_row(rng, run_id, session_id, i) for i in range(size)]
        for start in range(0, size, BATCH):
            AgentStep.insert_many(steps[start : start + BATCH]).execute()
        ids = [
            row.id
            for row in AgentStep.select(AgentStep.id)
            .where(AgentStep.run_id == run_id)
            .order_by(AgentStep.step_index)
        ]
        calls = [invocation_row(rng, run_id, session_id, ids[i], i) for i in range(size)]
        for start in range(0, size, BATCH):
            ToolInvocation.insert_many(calls[start : start + BATCH]).execute()
    return {
        "model_input": mean_bytes(steps, "model_input"),
        "model_output": mean_bytes(steps, "model_output"),
        "raw_output": mean_bytes(calls, "raw_output"),
    }


def get_trace(client: FlaskClient, session_id: str, run_id: str, size: int) -> int:
    """One trace request, checked complete; returns the response size in bytes."""
    response = client.get(f"/api/diagnosis/{session_id}/trace?runId={run_id}")
    require(response.status_code == 200, f"trace answered {response.status_code}")
    data = response.get_json()["data"]
    require(len(data["steps"]) == size, f"trace has {len(data['steps'])} steps, not {size}")
    require(len(data["toolInvocations"]) == size, "trace lost invocations")
    return len(response.data)


def trace_figures(target: Target) -> None:
    """Queries per trace request for 10 and 1,000 steps; latency of the 1,000-step trace."""
    target.bind()
    client = target.app.test_client()
    figures: dict[str, Any] = {}
    for size in (SMALL, BIG):
        session_id, run_id = f"sess-bench-{size}", f"run-bench-{size}"
        row_bytes = insert_run(target.database, session_id, run_id, size)
        body = get_trace(client, session_id, run_id, size)  # warm-up
        with count_queries(target.database) as counter:
            get_trace(client, session_id, run_id, size)
        timings = []
        for _ in range(TRACE_CALLS):
            started = time.perf_counter()
            client.get(f"/api/diagnosis/{session_id}/trace?runId={run_id}")
            timings.append((time.perf_counter() - started) * 1000)
        figures[str(size)] = {
            "queries": counter[0],
            **summary(timings),
            "bytes": body,
            "mean_row_bytes": row_bytes,
        }
    target.figures["trace"] = figures


# -- profiles and the report ---------------------------------------------------------------------


def profile(label: str, action: Callable[[], Any], repeat: int = 5, top: int = 14) -> None:
    """Print cProfile's top entries (cumulative, then own time) for ``repeat`` calls."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(repeat):
        action()
    profiler.disable()
    for order in ("cumulative", "tottime"):
        out = io.StringIO()
        # by cumulative time, the app's own frames (Flask and werkzeug wrappers say little)
        limits = ("webapp|peewee|json|sqlite|pymysql", top) if order == "cumulative" else (top,)
        pstats.Stats(profiler, stream=out).sort_stats(order).print_stats(*limits)
        body = out.getvalue()
        print(f"\n--- cProfile {label}, {repeat} calls, by {order} ---")
        print(body[body.find("   ncalls") :].rstrip())


def report(targets: dict[str, Target], overhead: dict[str, Any], notes: list[str]) -> None:
    """The table, then one JSON line with every figure."""

    def cells(show: Callable[[dict[str, Any]], str]) -> list[str]:
        return [show(targets[k].figures) if k in targets else "-" for k in ("sqlite", "mariadb")]

    def ms(figures: dict[str, Any]) -> str:
        return f"{figures['median_ms']:.1f} / {figures['p95_ms']:.1f}"

    seq, conc, big, small = "chat_sequential", "chat_concurrent", str(BIG), str(SMALL)
    rows = [
        ("chat run, offline model, server-side ms", ["", ""]),
        ("  sequential: median / p95", cells(lambda f: ms(f[seq]))),
        (f"  {CLIENTS} concurrent clients: median / p95", cells(lambda f: ms(f[conc]))),
        (f"  {CLIENTS} concurrent clients: runs/s", cells(lambda f: f"{f[conc]['runs_per_s']}")),
        ("  SQL statements per run (min-max)", cells(lambda f: "{}-{}".format(*f["chat_sql"]))),
        ("  in-memory diagnosis: median / p95", [ms(overhead["in_memory_diagnosis"]), ""]),
        (f"  own overhead per run (target < {OVERHEAD_TARGET_MS:.0f})", [ms(overhead), ""]),
        (f"trace API, ms (target < {TRACE_TARGET_MS:.0f} at {BIG:,} steps)", ["", ""]),
        (
            f"  {BIG:,} steps + {BIG:,} invocations: median / p95",
            cells(lambda f: ms(f["trace"][big])),
        ),
        (
            f"  {SMALL} steps + {SMALL} invocations: median / p95",
            cells(lambda f: ms(f["trace"][small])),
        ),
        (
            f"  SQL queries per request, {SMALL} / {BIG:,} steps",
            cells(lambda f: f"{f['trace'][small]['queries']} / {f['trace'][big]['queries']}"),
        ),
        (f"  response bytes, {BIG:,} steps", cells(lambda f: f"{f['trace'][big]['bytes']:,}")),
    ]
    print(f"\n{'':<54}{'SQLite':>16}{'MariaDB':>16}")
    for name, (lite, maria) in rows:
        print(f"{name:<54}{lite:>16}{maria:>16}")
    for note in notes:
        print(f"note: {note}")
    figures = {
        "python": sys.version.split()[0],
        "peewee": version("peewee"),
        "notes": notes,
        "overhead_sqlite": overhead,
        **{label: target.figures for label, target in targets.items()},
    }
    print(json.dumps(figures))


def profiles(target: Target, diagnose: Callable[[str], Any]) -> None:
    """cProfile of the 1,000-step trace request and of a chat run (``--profile``)."""
    target.bind()
    client = target.app.test_client()
    url = f"/api/diagnosis/sess-bench-{BIG}/trace?runId=run-bench-{BIG}"
    profile(f"GET trace ({BIG:,} steps, {target.label})", lambda: client.get(url))
    profile(f"POST /api/chat ({target.label})", lambda: timed_chat(client, QUESTIONS[0]))
    profile("in-memory diagnosis", lambda: diagnose(QUESTIONS[0]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", action="store_true", help="add cProfile top entries")
    args = parser.parse_args()
    started = time.perf_counter()
    notes: list[str] = []
    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-api-")))
        backend = DemoTelemetryBackend()
        diagnose = offline_diagnoser().diagnose
        targets = [make_target("sqlite", f"sqlite:///{workdir / 'bench.db'}", workdir, backend)]
        stack.callback(close_target, targets[0])
        mysql_url, detail = mariadb_scratch(stack)
        if mysql_url is None:
            notes.append(f"MariaDB skipped: {detail}")
        else:
            notes.append(f"MariaDB {detail}, scratch database {urlparse(mysql_url).path[1:]}")
            targets.append(make_target("mariadb", mysql_url, workdir, backend))
            stack.callback(close_target, targets[1])
        warm_up(targets, diagnose)
        overhead = sequential(targets, diagnose)
        for target in targets:
            concurrent(target)
            trace_figures(target)
        if args.profile:
            profiles(targets[0], diagnose)
        notes.append(f"total {time.perf_counter() - started:.0f} s")
        report({t.label: t for t in targets}, overhead, notes)


if __name__ == "__main__":
    main()
