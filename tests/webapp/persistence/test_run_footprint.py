"""A run's footprint on every backend: each step stores the input its model was sent, and the
run never reads its own invocations back from the database."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from peewee import Database
from pydantic import TypeAdapter

from tests.statements import count_statements
from tests.webapp.llm.fake_model import ScriptedModel, answer, calls
from webapp.api.responses import Timestamp
from webapp.llm.react import Budget, run_react
from webapp.llm.types import ChatResult, LLMError
from webapp.persistence.context import run_scope
from webapp.persistence.listing import Listing
from webapp.persistence.records import RunRecords
from webapp.persistence.runs import CHAT, RunStore
from webapp.persistence.sql_audit import SqlAudit
from webapp.telemetry.common import iso
from webapp.tools.registry import ToolBox, ToolOutput, ToolSpec

LOOKUP_SCHEMA = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
    "additionalProperties": False,
}
#: Each tool result is ~8 KB, so a full input of round n holds n of them.
RESULT_TEXT = "latency rose after the deploy; " * 260


def lookup(args: dict[str, Any]) -> ToolOutput:
    return ToolOutput({"n": args["n"], "text": RESULT_TEXT})


TOOLS = [ToolSpec("lookup", "Look something up.", LOOKUP_SCHEMA, lookup, "telemetry")]


def react_run(audit: SqlAudit, run_id: str, rounds: int) -> ScriptedModel:
    """A ReAct run of ``rounds`` tool rounds and a final answer, recorded by ``audit``."""
    replies: list[ChatResult | LLMError] = [calls(("lookup", {"n": n})) for n in range(rounds)]
    model = ScriptedModel([*replies, answer("{}")])
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "why?"}]
    with run_scope("sess-a", run_id):
        run_react(
            model,
            audit,
            "executor",
            messages,
            ToolBox(TOOLS, audit, "executor"),
            budget=Budget(max_rounds=rounds + 2, max_tool_calls=rounds + 2),
        )
        audit.flush()
    return model


@pytest.fixture
def records(database: Database) -> RunRecords:
    runs = RunStore(database, 3600)
    for run_id in ("run-1", "run-6"):
        runs.open_run(run_id, "sess-a", CHAT, "complex", "why?")
    return RunRecords(database)


def test_the_trace_and_a_step_carry_every_full_input_of_a_react_run(
    audit: SqlAudit, records: RunRecords, database: Database
) -> None:
    model = react_run(audit, "run-6", rounds=6)
    with database.connection_context():
        trace = records.trace("sess-a", "run-6")
    assert len(trace.steps) == len(model.requests) == 7
    for step, request in zip(trace.steps, model.requests, strict=True):
        assert step["model_input"]["messages"] == request["messages"]
    assert [s["step_index"] for s in trace.steps] == list(range(7))
    one = Listing(database).step("run-6", 4)
    assert one is not None and one["model_input"]["messages"] == model.requests[4]["messages"]
    assert Listing(database).step("run-6", 7) is None


def test_a_run_reads_its_own_invocations_from_memory_and_writes_them_in_one_statement(
    audit: SqlAudit, database: Database
) -> None:
    model = ScriptedModel(
        [
            calls(("lookup", {"n": 1}), ("lookup", {"n": 2})),
            calls(("lookup", {"n": 3})),
            answer("{}"),
        ]
    )
    with run_scope("sess-a", "run-m"), database.connection_context():
        with count_statements(database) as during:
            run_react(
                model,
                audit,
                "executor",
                [{"role": "user", "content": "go"}],
                ToolBox(TOOLS, audit, "executor"),
            )
            records = audit.invocations_for_run("run-m")
        with count_statements(database) as flushing:
            audit.flush()
    # one INSERT per model step (3), nothing read back; the three invocations in one INSERT
    assert len(during) == 3 and all(s.startswith("INSERT") for s in during.sql)
    assert [r.raw_output["n"] for r in records] == [1, 2, 3]
    assert len(flushing) == 1 and flushing.sql[0].startswith("INSERT")
    assert [r.invocation_id for r in audit.invocations_for_run("run-m")] == [
        r.invocation_id for r in records
    ]


def test_sqlite_timestamp_text_is_formatted_as_the_api_formats_datetimes() -> None:
    adapter = TypeAdapter(Timestamp)

    def stamp(value: datetime | str) -> str:
        return str(adapter.dump_python(adapter.validate_python(value)))

    for moment in (datetime(2026, 11, 30, 10, 0, 0, 123456), datetime(2026, 1, 2, 3, 4, 5)):
        assert stamp(str(moment)) == iso(moment, millis=True) == stamp(moment)
    assert stamp("2026-11-30T10:00:00.5") == "2026-11-30T10:00:00.500Z"  # other text: parsed
    assert iso(datetime(2026, 11, 30, 10, 0, 0, 123456), millis=True) == "2026-11-30T10:00:00.123Z"
