"""Benchmark: a chat run's own cost and the trace API, on SQLite and MariaDB.

The real Flask app runs in process behind ``app.test_client()`` (no network, so every figure is
the server's own time) with the offline provider and history read from the runs. Chat runs
cycle through the five demo questions (their model inputs average ~36 KB a step, as real runs' do),
sequentially and from 8 concurrent clients. Own overhead, per backend, is a chat run minus the
in-memory diagnosis of the same question timed right after it (the workflow alone, without HTTP,
database or history). Statements per run are counted with peewee's query hooks
(:mod:`tests.statements`: every statement that reached the DB-API cursor, and the
commits: writes outside a transaction plus transactions committed), stored
bytes per run summed from the run's rows; ReAct runs of 2, 5 and 10 rounds with ~36 KB tool
results show how stored bytes grow with steps. The trace API is timed on runs of 1,000 steps
(~36 KB model inputs) and 1,000 invocations inserted directly with the models, and of 10.
Figures are medians (and nearest-rank p95); a readable table is followed by one JSON line. Run
with ``make bench-api``; ``--profile`` adds cProfile top entries.

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
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from flask import Flask
from flask.testing import FlaskClient
from peewee import Database, fn
from playhouse.pool import PooledDatabase

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the demo generator, at the root

from demo.scenarios import scenario_records
from tests.statements import count_statements
from webapp import create_app
from webapp.config import Settings
from webapp.demo.backend import DemoTelemetryBackend
from webapp.llm.react import Budget, run_react
from webapp.llm.types import ChatResult, ToolCall
from webapp.persistence.context import run_scope
from webapp.persistence.db import bind
from webapp.persistence.models import AgentStep, ChatSession, DiagnosisRun, ToolInvocation, utcnow
from webapp.persistence.sql_audit import SqlAudit
from webapp.tools.registry import ToolBox, ToolOutput, ToolSpec
from webapp.wiring import build_services, offline_diagnoser

SEQUENTIAL_ROUNDS = 8  # x 5 questions = 40 sequential runs per backend
CLIENTS, RUNS_PER_CLIENT = 8, 10
TRACE_CALLS = 5
BIG, SMALL = 1_000, 10
BATCH = 100  # rows per multi-row INSERT
#: Own overhead of a chat run (time not in the model).
OVERHEAD_TARGETS_MS = {"sqlite": 10, "mariadb": 25}
TRACE_TARGET_MS = 50
#: Statements a run may issue besides one per model step.
SQL_PER_RUN_TARGET = 12
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


def run_bytes(database: Database, run_id: str) -> int:
    """Bytes (characters on SQLite) the run's rows store in their JSON and text columns."""

    def total(model: Any, *columns: Any) -> int:
        lengths: list[Any] = [fn.COALESCE(fn.LENGTH(column), 0) for column in columns]
        summed: Any = lengths[0]
        for length in lengths[1:]:
            summed = summed + length
        query = model.select(fn.COALESCE(fn.SUM(summed), 0)).where(model.run_id == run_id)
        return int(query.scalar() or 0)

    with database.connection_context():
        return (
            total(AgentStep, AgentStep.model_input, AgentStep.model_output)
            + total(
                ToolInvocation,
                ToolInvocation.arguments,
                ToolInvocation.raw_output,
                ToolInvocation.retrieval_details,
                ToolInvocation.evidence_refs,
            )
            + total(
                DiagnosisRun,
                DiagnosisRun.answer,
                DiagnosisRun.self_evaluation,
                DiagnosisRun.orchestration_trace,
            )
        )


def step_count(database: Database, run_id: str) -> int:
    """The run's ``agent_step`` rows."""
    with database.connection_context():
        return int(AgentStep.select().where(AgentStep.run_id == run_id).count())


# -- building the targets ------------------------------------------------------------------------


def make_target(label: str, url: str, workdir: Path, backend: DemoTelemetryBackend) -> Target:
    """The app on ``url``, offline model, history from its runs, its own knowledge index."""
    settings = Settings.from_env(
        {}, overrides={"database_url": url, "knowledge_db": str(workdir / f"{label}-kb.db")}
    )
    services = build_services(settings, backend=backend)
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
    return chat_run(client, question)[0]


def chat_run(client: FlaskClient, question: str) -> tuple[float, str]:
    """``(milliseconds, run id)`` of one ``POST /api/chat``, checked a complex SUCCESS."""
    started = time.perf_counter()
    response = client.post("/api/chat", json={"Question": question})
    elapsed = (time.perf_counter() - started) * 1000
    data = (response.get_json() or {}).get("data") or {}
    require(response.status_code == 200, f"chat answered {response.status_code}")
    require(data.get("status") == "SUCCESS" and data.get("success") is True, f"chat run {data}")
    require(data.get("flow") == "complex", f"{question!r} took the {data.get('flow')} flow")
    return elapsed, str(data["runId"])


def warm_up(targets: list[Target], diagnose: Callable[[str], Any]) -> None:
    """Two passes over the questions per target (the second counts SQL statements per run)."""
    for target in targets:
        target.bind()
        client = target.app.test_client()
        for question in QUESTIONS:
            timed_chat(client, question)
            diagnose(question)
        counts, fixed, stored, per_step, commits = [], [], [], [], []
        for question in QUESTIONS:
            with count_statements(target.database) as statements:
                _, run_id = chat_run(client, question)
            steps = step_count(target.database, run_id)
            size = run_bytes(target.database, run_id)
            counts.append(len(statements))
            commits.append(statements.commits)
            fixed.append(len(statements) - steps)
            stored.append(size)
            per_step.append(size / steps)
        target.figures["chat_sql"] = [min(counts), max(counts)]
        target.figures["chat_sql_beyond_one_per_step"] = [min(fixed), max(fixed)]
        target.figures["chat_sql_by_question"] = dict(zip(QUESTIONS, counts, strict=True))
        target.figures["chat_commits"] = [min(commits), max(commits)]
        target.figures["stored_bytes_per_run"] = round(statistics.median(stored))
        target.figures["stored_bytes_per_step"] = round(statistics.median(per_step))


def sequential(targets: list[Target], diagnose: Callable[[str], Any]) -> None:
    """Rounds of the five questions, targets interleaved; each chat run is followed by the
    in-memory run of the same question, and its own overhead is the difference."""
    chat: dict[str, list[float]] = {t.label: [] for t in targets}
    memory: dict[str, list[float]] = {t.label: [] for t in targets}
    paired: dict[str, list[float]] = {t.label: [] for t in targets}
    clients = {t.label: t.app.test_client() for t in targets}
    for _ in range(SEQUENTIAL_ROUNDS):
        for target in targets:
            target.bind()
            for question in QUESTIONS:
                elapsed = timed_chat(clients[target.label], question)
                chat[target.label].append(elapsed)
                started = time.perf_counter()
                result = diagnose(question)
                alone = (time.perf_counter() - started) * 1000
                require(result.run.status == "SUCCESS", f"in-memory run of {question!r}")
                memory[target.label].append(alone)
                paired[target.label].append(elapsed - alone)
    for target in targets:
        target.figures["chat_sequential"] = {
            "runs": len(chat[target.label]),
            **summary(chat[target.label]),
        }
        target.figures["in_memory_diagnosis"] = summary(memory[target.label])
        target.figures["own_overhead"] = {
            **summary(paired[target.label]),
            "target_ms": OVERHEAD_TARGETS_MS[target.label],
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
    """An ``agent_step`` with a ~36 KB model input (what real runs send) and a ~0.5 KB output."""
    user = {"question": words(rng, 60), "reference_time": "2026-11-30T12:00:00Z"}
    user["plan"] = words(rng, rng.randint(30_000, 33_000))
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


#: One chat run's agents as the demo runs record them: (agent, tool rounds). The planner,
#: verifier and composer send one whole ~36 KB input each; the executor's ReAct loop sends its
#: conversation again every round, one tool call and its result longer each time.
RUN_SHAPE = (("planner", 0), ("executor", 6), ("verifier", 0), ("composer", 0))


def conversation_rows(
    rng: random.Random, run_id: str, session_id: str, steps: int
) -> list[dict[str, Any]]:
    """``steps`` steps shaped as chat runs are (:data:`RUN_SHAPE`, repeated), each storing its
    agent's whole conversation so far."""
    stored: list[dict[str, Any]] = []
    while len(stored) < steps:
        for agent, rounds in RUN_SHAPE:
            first = step_row(rng, run_id, session_id, len(stored))
            messages = first["model_input"]["messages"]
            for round_no in range(rounds + 1):
                if len(stored) == steps:
                    return stored
                row = step_row(rng, run_id, session_id, len(stored)) if round_no else first
                model_input = {**row["model_input"], "messages": list(messages)}
                stored.append(
                    {
                        **row,
                        "agent_name": agent,
                        "model_input": model_input,
                        "has_tool_call": round_no < rounds,
                    }
                )
                call = {"id": f"call-{row['step_index']}", "name": "query_logs"}
                result = invocation_row(rng, run_id, session_id, 0, 0)["raw_output"]
                messages = [
                    *messages,
                    {"role": "assistant", "content": None, "tool_calls": [call]},
                    {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)},
                ]
    return stored


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
        with count_statements(target.database) as counter:
            get_trace(client, session_id, run_id, size)
        url = f"/api/diagnosis/{session_id}/trace?runId={run_id}"
        timings: list[float] = []
        bare: list[float] = []  # inputs=none, the trace viewer's list: taken in turn with full
        for _ in range(TRACE_CALLS):
            for form, into in (("full", timings), ("none", bare)):
                started = time.perf_counter()
                # .data reads the streamed body: without it only the head would be timed
                require(
                    len(client.get(url if form == "full" else f"{url}&inputs=none").data) > 0,
                    "trace",
                )
                into.append((time.perf_counter() - started) * 1000)
        figures[str(size)] = {
            "queries": len(counter),
            **summary(timings),
            "none": summary(bare),
            "bytes": body,
            "none_bytes": len(client.get(f"{url}&inputs=none").data),
            "mean_row_bytes": row_bytes,
        }
    target.figures["trace"] = figures


# -- stored bytes vs ReAct rounds ----------------------------------------------------------------

#: A tool result of ~36 KB: each round's model input grows by one of these.
TOOL_RESULT = "upstream latency rose after the deploy; pool waits climbed " * 600
GROWTH_ROUNDS = (2, 5, 10)


@dataclass
class ScriptedReact:
    """A ``ChatModel`` that asks for one tool call per round, then answers."""

    rounds: int
    calls: int = 0

    @property
    def model_name(self) -> str:
        return "bench-scripted"

    def complete(self, messages: Any, **_: Any) -> ChatResult:
        self.calls += 1
        if self.calls <= self.rounds:
            call = ToolCall(f"call-{self.calls}", "lookup", json.dumps({"n": self.calls}))
            return ChatResult(None, [call], "bench-scripted", 10, 5)
        return ChatResult('{"done": true}', [], "bench-scripted", 10, 5)


def react_growth(target: Target) -> None:
    """Stored bytes and statements of ReAct runs of 2, 5 and 10 rounds (36 KB per result)."""
    target.bind()
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    tools = [
        ToolSpec(
            "lookup", "Look up.", schema, lambda a: ToolOutput({"text": TOOL_RESULT}), "telemetry"
        )
    ]
    audit = SqlAudit(target.database)
    figures: dict[str, Any] = {}
    for rounds in GROWTH_ROUNDS:
        run_id = f"run-growth-{rounds}"
        messages: list[Any] = [{"role": "user", "content": "why?"}]
        with (
            run_scope("sess-growth", run_id),
            target.database.connection_context(),
            count_statements(target.database) as statements,
        ):
            run_react(
                ScriptedReact(rounds),
                audit,
                "executor",
                messages,
                ToolBox(tools, audit, "executor"),
                budget=Budget(max_rounds=rounds + 2, max_tool_calls=rounds + 2),
            )
            audit.flush()
        size = run_bytes(target.database, run_id)
        figures[str(rounds)] = {
            "steps": rounds + 1,
            "statements": len(statements),
            "bytes": size,
            "bytes_per_step": round(size / (rounds + 1)),
        }
    target.figures["react_growth"] = figures


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


def report(targets: dict[str, Target], notes: list[str]) -> None:
    """The table, then one JSON line with every figure."""

    def cells(show: Callable[[dict[str, Any]], str]) -> list[str]:
        return [show(targets[k].figures) if k in targets else "-" for k in ("sqlite", "mariadb")]

    def ms(figures: dict[str, Any]) -> str:
        return f"{figures['median_ms']:.1f} / {figures['p95_ms']:.1f}"

    seq, conc, big, small = "chat_sequential", "chat_concurrent", str(BIG), str(SMALL)
    targets_ms = "/".join(f"{v}" for v in OVERHEAD_TARGETS_MS.values())

    def growth_cell(rounds: int) -> Callable[[dict[str, Any]], str]:
        def show(f: dict[str, Any]) -> str:
            g = f["react_growth"][str(rounds)]
            return f"{g['statements']} / {g['bytes'] / 1000:.0f} / {g['bytes_per_step'] / 1000:.0f}"

        return show

    def stored(f: dict[str, Any]) -> str:
        return f"{f['stored_bytes_per_run'] / 1000:.0f} / {f['stored_bytes_per_step'] / 1000:.1f}"

    growth = [
        (f"  {rounds} ReAct rounds: statements / KB / KB per step", cells(growth_cell(rounds)))
        for rounds in GROWTH_ROUNDS
    ]
    rows = [
        ("chat run, offline model, server-side ms", ["", ""]),
        ("  sequential: median / p95", cells(lambda f: ms(f[seq]))),
        (f"  {CLIENTS} concurrent clients: median / p95", cells(lambda f: ms(f[conc]))),
        (f"  {CLIENTS} concurrent clients: runs/s", cells(lambda f: f"{f[conc]['runs_per_s']}")),
        ("  in-memory diagnosis: median / p95", cells(lambda f: ms(f["in_memory_diagnosis"]))),
        (f"  own overhead per run (target {targets_ms})", cells(lambda f: ms(f["own_overhead"]))),
        ("  SQL statements per run (min-max)", cells(lambda f: "{}-{}".format(*f["chat_sql"]))),
        (
            f"  ... beyond one per step (target <= {SQL_PER_RUN_TARGET})",
            cells(lambda f: "{}-{}".format(*f["chat_sql_beyond_one_per_step"])),
        ),
        ("  commits per run (min-max)", cells(lambda f: "{}-{}".format(*f["chat_commits"]))),
        ("  stored KB per run / per step", cells(stored)),
        ("stored bytes vs ReAct rounds (36 KB tool results)", ["", ""]),
        *growth,
        (f"trace API, ms (target < {TRACE_TARGET_MS:.0f} at {BIG:,} steps)", ["", ""]),
        (
            f"  {BIG:,} steps + {BIG:,} invocations: median / p95",
            cells(lambda f: ms(f["trace"][big])),
        ),
        (
            "  ... inputs=none (the viewer's list): median / p95",
            cells(lambda f: ms(f["trace"][big]["none"])),
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
        (
            f"  ... inputs=none, {BIG:,} steps",
            cells(lambda f: f"{f['trace'][big]['none_bytes']:,}"),
        ),
    ]
    print(f"\n{'':<58}{'SQLite':>16}{'MariaDB':>16}")
    for name, (lite, maria) in rows:
        print(f"{name:<58}{lite:>16}{maria:>16}")
    for note in notes:
        print(f"note: {note}")
    figures = {
        "python": sys.version.split()[0],
        "peewee": version("peewee"),
        "notes": notes,
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
        sequential(targets, diagnose)
        for target in targets:
            concurrent(target)
            react_growth(target)
            trace_figures(target)
        if args.profile:
            profiles(targets[0], diagnose)
        notes.append(f"total {time.perf_counter() - started:.0f} s")
        report({t.label: t for t in targets}, notes)


if __name__ == "__main__":
    main()
