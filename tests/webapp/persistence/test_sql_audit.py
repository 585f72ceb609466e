"""SqlAudit on every backend: rows written as the run happens, read back in order, intact."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from functools import partial
from typing import Any

import pytest
from peewee import Database, chunked

from diagnosis_graph.workflow.ports import InvocationRecord
from webapp.persistence.audit import StepEnd, StepStart
from webapp.persistence.context import run_scope
from webapp.persistence.models import AgentStep, ToolInvocation
from webapp.persistence.sql_audit import TEXT_MAX_BYTES, SqlAudit

from .helpers import counts_of, draft, end, invocations_of, start, steps_of

CountQueries = Callable[[Callable[[], Any]], int]


def step(audit: SqlAudit, first: StepStart, last: StepEnd) -> int:
    """One model call: noted by ``before_model``, written by ``after_model``; its row id."""
    return audit.after_model(audit.before_model(first), last)


def test_steps_are_numbered_per_run_and_written_when_the_call_returns(audit: SqlAudit) -> None:
    with run_scope("sess-a", "run-a"):
        ticket = audit.before_model(start("planner", {"messages": ["hi"]}))
        assert steps_of(audit, "run-a") == []  # nothing written before the call returns
        a0 = audit.after_model(
            ticket, end(prompt_tokens=100, completion_tokens=23, duration_ms=450)
        )
        with run_scope("sess-b", "run-b"):
            b0 = step(audit, start("planner"), end())
        a1 = step(
            audit,
            start("executor"),
            end("ERROR", has_tool_call=True, attempts=3, error="timeout", model_output=None),
        )

    done = steps_of(audit, "run-a")
    assert [(s.id, s.step_index) for s in done] == [(a0, 0), (a1, 1)]
    assert done[0].model_input == {"messages": ["hi"]}
    assert (done[0].status, done[0].token_count, done[0].duration_ms) == ("SUCCESS", 123, 450)
    assert (done[0].prompt_tokens, done[0].completion_tokens) == (100, 23)
    assert done[0].model_output == {"answer": "ok"}
    assert (done[1].status, done[1].error, done[1].attempts, done[1].has_tool_call) == (
        "ERROR",
        "timeout",
        3,
        True,
    )
    assert [(s.id, s.step_index, s.session_id) for s in steps_of(audit, "run-b")] == [
        (b0, 0, "sess-b")
    ]


def test_before_model_outside_a_run_raises_and_writes_nothing(audit: SqlAudit) -> None:
    with pytest.raises(RuntimeError, match="no diagnosis run"):
        audit.before_model(start())
    with pytest.raises(RuntimeError, match="no diagnosis run"):
        audit.record(draft(None))
    assert counts_of(audit, "run-a") == (0, 0)


def test_step_index_taken_by_a_concurrent_writer_is_retried(
    audit: SqlAudit, database: Database
) -> None:
    with run_scope("sess-a", "run-a"):
        step(audit, start(), end())
        with database.connection_context():  # another writer of the same run takes index 1
            AgentStep.insert(
                run_id="run-a",
                session_id="sess-a",
                step_index=1,
                agent_name="x",
                model="m",
                status="SUCCESS",
            ).execute()
        second = step(audit, start(), end())
        third = step(audit, start(), end())
    indexes = [(s.id, s.step_index) for s in steps_of(audit, "run-a")]
    assert indexes[-2:] == [(second, 2), (third, 3)]


def test_invocations_are_linked_to_the_step_that_asked_for_them(audit: SqlAudit) -> None:
    with run_scope("sess-a", "run-a"):
        step_id = step(audit, start("executor"), end())
        first = audit.record(draft(step_id, retrieval_details={"hits": [{"doc": "runbook.md"}]}))
        second = audit.record(
            draft(step_id, tool_name="search_logs", status="ERROR", error_message="backend down")
        )
        orphan = audit.record(draft(None, duration_ms=0))
        assert invocations_of(audit, "run-a") == []  # held until the node ends
        audit.flush()

    assert first.startswith("inv-") and len({first, second, orphan}) == 3
    rows = invocations_of(audit, "run-a")
    assert [(r.invocation_id, r.step_id) for r in rows] == [
        (first, step_id),
        (second, step_id),
        (orphan, None),
    ]
    assert rows[0].retrieval_details == {"hits": [{"doc": "runbook.md"}]}
    assert (rows[0].agent_name, rows[0].session_id, rows[0].duration_ms) == (
        "executor",
        "sess-a",
        7,
    )
    assert (rows[1].tool_name, rows[1].status, rows[1].error_message) == (
        "search_logs",
        "ERROR",
        "backend down",
    )
    assert counts_of(audit, "run-a") == (1, 3)


def test_invocations_for_run_returns_only_that_run_in_creation_order(audit: SqlAudit) -> None:
    expected: dict[str, list[str]] = {"run-a": [], "run-b": []}
    for i in range(6):
        run = "run-a" if i % 2 == 0 else "run-b"
        with run_scope(f"sess-{run}", run):
            expected[run].append(audit.record(draft(None, tool_name=f"tool_{i}", raw_output=[i])))
            audit.flush()
    with run_scope("sess-run-a", "run-a"):
        expected["run-a"].append(audit.record(draft(None, arguments=None)))
        audit.flush()

    records = audit.invocations_for_run("run-a")
    assert [r.invocation_id for r in records] == expected["run-a"]
    assert all(isinstance(r, InvocationRecord) and r.run_id == "run-a" for r in records)
    assert [r.tool_name for r in records[:3]] == ["tool_0", "tool_2", "tool_4"]
    assert [r.raw_output for r in records[:3]] == [[0], [2], [4]]
    assert records[0].arguments == {"service": "checkout"}
    assert records[-1].arguments == {}
    assert [r.invocation_id for r in audit.invocations_for_run("run-b")] == expected["run-b"]
    assert audit.invocations_for_run("run-unknown") == []


LARGE = {
    "lines": [f'{i:06d} 延迟升高 🚀 upstream timeout après 30s "quoted" \\ ' for i in range(6000)]
}
RAW_OUTPUTS = {
    "nested": {"z": 1, "a": {"y": [1, {"b": None, "a": True}], "x": 1.5}, "m": [], "e": {}},
    "unicode": {"msg": "支付服务延迟 🔥🧯 Ünïcödé ελληνικά", "ctl": "tab\tnl\nnul\u0000"},
    "text": 'plain "text" with \\ backslashes and 漢字 🙂',
    "list": [{"ts": "2024-05-01T10:00:00Z", "value": 0.1}, 3, "x", None, False],
    "large": LARGE,
}


@pytest.mark.parametrize("kind", sorted(RAW_OUTPUTS))
def test_raw_output_round_trips_verbatim(audit: SqlAudit, kind: str) -> None:
    raw = RAW_OUTPUTS[kind]
    with run_scope("sess-a", "run-a"):
        audit.record(draft(None, raw_output=raw, arguments={"q": raw}))
        audit.flush()
        [in_memory] = audit.invocations_for_run("run-a")
    assert in_memory.raw_output is raw
    [record] = audit.invocations_for_run("run-a")
    [row] = invocations_of(audit, "run-a")
    # dumps equality also pins key order, which a plain == on dicts would not
    assert json.dumps(record.raw_output) == json.dumps(raw)
    assert json.dumps(row.raw_output) == json.dumps(raw)
    assert json.dumps(record.arguments) == json.dumps({"q": raw})


def test_large_raw_output_exceeds_64_kib(audit: SqlAudit) -> None:
    text = json.dumps(LARGE, ensure_ascii=False).encode("utf-8")
    assert len(text) > 4 * 65_536  # larger than TEXT on MySQL; LONGTEXT keeps it whole
    with run_scope("sess-a", "run-a"):
        step(audit, start(model_input=LARGE), end(model_output=LARGE))
    [row] = steps_of(audit, "run-a")
    assert row.model_input == LARGE and row.model_output == LARGE


def test_values_that_are_not_json_do_not_crash_the_run(audit: SqlAudit) -> None:
    circular: list[Any] = [1]
    circular.append(circular)
    with run_scope("sess-a", "run-a"):
        audit.record(draft(None, raw_output={"at": datetime(2024, 5, 1, 10, 0, 0), "ids": {7}}))
        audit.record(draft(None, raw_output={(1, 2): "tuple key"}))
        audit.record(draft(None, raw_output=circular, arguments={"obj": object()}))
        audit.flush()
    first, second, third = audit.invocations_for_run("run-a")
    assert first.raw_output == {"at": "2024-05-01 10:00:00", "ids": "{7}"}
    assert second.raw_output == "{(1, 2): 'tuple key'}"
    assert third.raw_output == "[1, [...]]"
    assert str(third.arguments["obj"]).startswith("<object object")


def test_overlong_names_and_error_texts_are_cut_not_fatal(audit: SqlAudit) -> None:
    error = "é🔥" * 40_000  # 240,000 bytes: more than a MySQL TEXT column holds
    with run_scope("sess-a", "run-a"):
        step_id = step(
            audit,
            start("a" * 100, model="m" * 300),
            end("FAILED_WITH_A_VERY_LONG_STATUS", error=error),
        )
        audit.record(draft(step_id, tool_name="t" * 200, error_message=error))
        audit.flush()
    [row] = steps_of(audit, "run-a")
    [invocation] = invocations_of(audit, "run-a")
    assert (row.agent_name, row.model, row.status) == ("a" * 32, "m" * 128, "FAILED_WITH_A_VE")
    assert invocation.tool_name == "t" * 64
    for stored in (row.error, invocation.error_message):
        assert stored is not None and error.startswith(stored)
        assert 60_000 < len(stored.encode("utf-8")) <= TEXT_MAX_BYTES


def test_concurrent_runs_keep_their_own_rows(audit: SqlAudit, database: Database) -> None:
    runs, steps_per_run = 16, 10
    barrier = threading.Barrier(runs)

    def one_run(n: int) -> bool:
        barrier.wait()
        with run_scope(f"sess-{n}", f"run-{n}"):
            for i in range(steps_per_run):
                step_id = step(
                    audit,
                    start(f"agent-{n}", {"run": n, "i": i}),
                    end(prompt_tokens=n, completion_tokens=i),
                )
                audit.record(draft(step_id, arguments={"run": n, "i": i}))
            audit.flush()
        return database.is_closed()  # this worker thread kept no connection

    with ThreadPoolExecutor(max_workers=runs) as pool:
        closed = list(pool.map(one_run, range(runs)))

    assert all(closed)
    assert not getattr(database, "_in_use", {}), "a pooled connection was left checked out"
    for n in range(runs):
        steps = steps_of(audit, f"run-{n}")
        assert [s.step_index for s in steps] == list(range(steps_per_run))
        assert {(s.session_id, s.agent_name, s.status) for s in steps} == {
            (f"sess-{n}", f"agent-{n}", "SUCCESS")
        }
        assert [s.model_input for s in steps] == [{"run": n, "i": i} for i in range(steps_per_run)]
        assert [s.token_count for s in steps] == [n + i for i in range(steps_per_run)]
        invocations = invocations_of(audit, f"run-{n}")
        assert [r.arguments for r in invocations] == [s.model_input for s in steps]
        assert [r.step_id for r in invocations] == [s.id for s in steps]
        assert {r.session_id for r in invocations} == {f"sess-{n}"}
    with database.connection_context():
        assert AgentStep.select().count() == ToolInvocation.select().count() == runs * steps_per_run


def test_the_store_leaves_no_connection_open_and_keeps_the_callers(
    audit: SqlAudit, database: Database
) -> None:
    assert database.is_closed()
    with run_scope("sess-a", "run-a"):
        step_id = step(audit, start(), end())
        audit.record(draft(step_id))
        audit.flush()
    audit.invocations_for_run("run-a")
    assert database.is_closed()
    assert not getattr(database, "_in_use", {})

    database.connect()  # a request's connection: audit writes on its thread must not close it
    try:
        connection = database.connection()
        with run_scope("sess-a", "run-a"):
            audit.record(draft(step_id))
            audit.flush()
        assert counts_of(audit, "run-a") == (1, 2)
        assert not database.is_closed() and database.connection() is connection
    finally:
        database.close()


def _bulk_run(run_id: str, size: int) -> None:
    """Write a run of ``size`` steps, each with one invocation, in a few statements."""
    steps = [
        {
            "run_id": run_id,
            "session_id": "sess",
            "step_index": i,
            "agent_name": "executor",
            "model": "m",
            "model_input": {"i": i},
            "status": "SUCCESS",
        }
        for i in range(size)
    ]
    for batch in chunked(steps, 50):
        AgentStep.insert_many(batch).execute()
    ids = [s.id for s in AgentStep.select(AgentStep.id).where(AgentStep.run_id == run_id)]
    invocations = [
        {
            "invocation_id": f"inv-{run_id}-{i}",
            "run_id": run_id,
            "session_id": "sess",
            "step": step_id,
            "agent_name": "executor",
            "tool_name": "query_metrics",
            "raw_output": {"i": i},
            "status": "SUCCESS",
            "duration_ms": 1,
        }
        for i, step_id in enumerate(ids)
    ]
    for batch in chunked(invocations, 50):
        ToolInvocation.insert_many(batch).execute()


def test_a_runs_invocations_are_read_back_in_one_query_whatever_its_size(
    audit: SqlAudit, database: Database, count_queries: CountQueries
) -> None:
    with database.connection_context(), database.atomic():
        _bulk_run("run-small", 5)
        _bulk_run("run-large", 500)
    with database.connection_context():
        small = count_queries(partial(audit.invocations_for_run, "run-small"))
        assert small == count_queries(partial(audit.invocations_for_run, "run-large")) == 1
    steps = steps_of(audit, "run-large")
    assert [s.step_index for s in steps] == list(range(500))
    assert [row.step_id for row in invocations_of(audit, "run-large")] == [s.id for s in steps]
    assert len(audit.invocations_for_run("run-large")) == 500


def test_step_rows_survive_their_invocations_deletion_and_vice_versa(
    audit: SqlAudit, database: Database
) -> None:
    with run_scope("sess-a", "run-a"):
        step_id = step(audit, start(), end())
        audit.record(draft(step_id))
        audit.flush()
    with database.connection_context():
        AgentStep.delete().where(AgentStep.id == step_id).execute()
    [row] = invocations_of(audit, "run-a")
    assert row.step_id is None  # ON DELETE SET NULL: the audit of the tool call is kept
