"""A run's footprint on every backend: steps store only their new messages, the trace rebuilds
each step's full input, and the run never reads its own invocations back from the database."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest
from peewee import Database
from pydantic import TypeAdapter

from tests.webapp.llm.fake_model import ScriptedModel, answer, calls
from webapp.api.responses import Timestamp, iso
from webapp.llm.react import Budget, run_react
from webapp.llm.types import ChatResult, LLMError
from webapp.persistence.context import run_scope
from webapp.persistence.listing import Listing, raw_columns
from webapp.persistence.models import AgentStep
from webapp.persistence.records import RunRecords
from webapp.persistence.runs import CHAT, RunStore
from webapp.persistence.sql_audit import SqlAudit
from webapp.persistence.statements import count_statements
from webapp.persistence.step_inputs import CONTINUES, rebuild_inputs
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
    runs.ensure_session("sess-a", "why?")
    for run_id in ("run-1", "run-6"):
        runs.create_run(run_id, "sess-a", CHAT, "complex", "why?")
    return RunRecords(database)


def test_the_trace_rebuilds_every_step_input_of_a_react_run(
    audit: SqlAudit, records: RunRecords, database: Database
) -> None:
    model = react_run(audit, "run-6", rounds=6)
    with database.connection_context():
        trace = records.trace("sess-a", "run-6")
    assert len(trace.steps) == len(model.requests) == 7
    for step, request in zip(trace.steps, model.requests, strict=True):
        model_input = step["model_input"]
        assert model_input["messages"] == request["messages"]
        assert CONTINUES not in model_input
    assert [s["step_index"] for s in trace.steps] == list(range(7))


def test_each_step_row_stores_only_its_new_messages(
    audit: SqlAudit, records: RunRecords, database: Database
) -> None:
    model = react_run(audit, "run-6", rounds=6)
    with database.connection_context():
        rows = list(
            AgentStep.select().where(AgentStep.run_id == "run-6").order_by(AgentStep.step_index)
        )
    stored = [row.model_input for row in rows]
    # the first step is stored whole; every later one continues its predecessor's messages up
    # to that step's last assistant message (the earlier tool result reaches the model as a
    # short summary from then on) and adds the summary, the tool call and the tool's result
    assert CONTINUES not in stored[0] and len(stored[0]["messages"]) == 2
    assert stored[1][CONTINUES] == {"step_index": 0, "messages": 2}
    assert len(stored[1]["messages"]) == 2
    for index, step in enumerate(stored[2:], start=2):
        assert step[CONTINUES] == {"step_index": index - 1, "messages": 2 * index - 1}
        assert len(step["messages"]) == 3
    # linear bytes: every distinct message the model was sent is stored exactly once
    every_stored = [json.dumps(m, sort_keys=True) for step in stored for m in step["messages"]]
    sent = {json.dumps(m, sort_keys=True) for r in model.requests for m in r["messages"]}
    assert len(every_stored) == len(set(every_stored)) and set(every_stored) == sent
    # and the stored form rebuilds to what the model was sent
    as_dicts = [{"step_index": r.step_index, "model_input": r.model_input} for r in rows]
    rebuild_inputs(as_dicts)
    assert [d["model_input"]["messages"] for d in as_dicts] == [
        r["messages"] for r in model.requests
    ]


def test_a_continuation_whose_base_is_missing_keeps_its_stored_form() -> None:
    steps = [
        {
            "step_index": 4,
            "model_input": {"messages": ["c"], CONTINUES: {"step_index": 3, "messages": 2}},
        },
        {
            "step_index": 5,
            "model_input": {"messages": ["d"], CONTINUES: {"step_index": 4, "messages": 3}},
        },
    ]
    rebuild_inputs(steps)
    assert [s["model_input"]["messages"] for s in steps] == [["c"], ["d"]]


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


@pytest.mark.parametrize("limit", [1, 3, 7])
def test_streamed_and_paged_steps_carry_every_full_input(
    audit: SqlAudit, records: RunRecords, database: Database, limit: int
) -> None:
    model = react_run(audit, "run-6", rounds=6)
    listing = Listing(database)
    with database.connection_context():
        names = raw_columns(AgentStep)
        streamed = [
            dict(zip(names, row, strict=True))
            for batch in listing.stream_steps("run-6")
            for row in batch
        ]
    paged: list[dict[str, Any]] = []
    cursor = None
    while True:  # pages cut continuations: a page's first step continues the previous page's
        page = listing.steps("run-6", limit, cursor)
        paged += page.rows
        if (cursor := page.next_cursor) is None:
            break
    parsed = listing.steps("run-6", 2, listing.steps("run-6", 3).next_cursor).rows
    sent = [request["messages"] for request in model.requests]
    assert [json.loads(s["model_input"])["messages"] for s in streamed] == sent
    assert [s["model_input"]["messages"] for s in paged] == sent
    assert [s["model_input"]["messages"] for s in parsed] == sent[3:5]


def test_a_page_of_steps_reads_earlier_steps_only_for_a_continuation_across_it(
    audit: SqlAudit, records: RunRecords, database: Database
) -> None:
    react_run(audit, "run-6", rounds=6)  # every step after the first continues its predecessor
    with database.connection_context():
        for i in range(6):  # run-1: whole inputs, with "continues" as a message text too
            text = '{"continues": {"step_index": 0}} ' * 3
            AgentStep.create(
                run_id="run-1",
                session_id="sess-a",
                step_index=i,
                agent_name="executor",
                model="m",
                model_input={"messages": [{"role": "user", "content": text}], "n": i},
                status="SUCCESS",
            )
    listing = Listing(database)
    deep = listing.steps("run-1", 2, listing.steps("run-1", 3).next_cursor)
    with count_statements(database) as whole:
        again = listing.steps("run-1", 2, listing.steps("run-1", 3).next_cursor)
    with count_statements(database) as continued:
        page = listing.steps("run-6", 2, listing.steps("run-6", 3).next_cursor)
    assert [s["model_input"]["n"] for s in deep.rows] == [3, 4]
    assert [s["model_input"]["n"] for s in again.rows] == [3, 4]
    # (each count includes the first page's query, which needed no earlier steps)
    assert len(whole) == 2 and len(continued) == 3  # run-6: one read of its earlier steps
    assert len(page.rows[0]["model_input"]["messages"]) == 2 + 2 * 3  # rebuilt, not stored


def test_sqlite_timestamp_text_is_formatted_as_the_api_formats_datetimes() -> None:
    adapter = TypeAdapter(Timestamp)

    def stamp(value: datetime | str) -> str:
        return str(adapter.dump_python(adapter.validate_python(value)))

    for moment in (datetime(2026, 11, 30, 10, 0, 0, 123456), datetime(2026, 1, 2, 3, 4, 5)):
        assert stamp(str(moment)) == iso(moment) == stamp(moment)
    assert stamp("2026-11-30T10:00:00.5") == "2026-11-30T10:00:00.500Z"  # other text: parsed
    assert iso(datetime(2026, 11, 30, 10, 0, 0, 123456)) == "2026-11-30T10:00:00.123Z"
