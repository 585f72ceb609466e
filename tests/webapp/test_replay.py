"""Replay: a recorded run's question again, every tool call served from the recording."""

from __future__ import annotations

from typing import Any

import pytest

from webapp.diagnosis import Diagnoser
from webapp.llm.offline import OfflineChatModel
from webapp.replay import (
    RecordedBackend,
    Recording,
    canonical_arguments,
    conclusion_lines,
    export_recording,
    replay_diagnoser,
    side_by_side,
)
from webapp.telemetry import TelemetryError
from webapp.wiring import offline_diagnoser

QUESTION = "Why is order-service returning errors since 10:45?"


@pytest.fixture(scope="module")
def recorded() -> tuple[Diagnoser, dict[str, Any], list[dict[str, Any]]]:
    diagnoser = offline_diagnoser()
    result = diagnoser.diagnose(QUESTION, session_id="s-rec")
    rows = [r for r in diagnoser.audit.invocations if r["run_id"] == result.run_id]  # type: ignore[attr-defined]
    run = {
        "session_id": "s-rec",
        "run_id": result.run_id,
        "question": QUESTION,
        "answer": result.answer,
    }
    return diagnoser, run, rows


def _document(recorded: tuple[Diagnoser, dict[str, Any], list[dict[str, Any]]]) -> dict[str, Any]:
    diagnoser, run, rows = recorded
    definitions = [spec.definition() for spec in diagnoser.tools]
    return export_recording(run, rows, diagnoser.backend, definitions)


def test_canonical_arguments_ignore_order_and_missing_values() -> None:
    assert canonical_arguments({"b": 1, "a": None, "c": "x"}) == canonical_arguments(
        '{"c": "x", "b": 1}'
    )


def test_a_replay_is_served_entirely_from_the_recording(
    recorded: tuple[Diagnoser, dict[str, Any], list[dict[str, Any]]],
) -> None:
    document = _document(recorded)
    backend = RecordedBackend(document)  # raises on any data query: nothing can leak through
    recording = Recording.from_invocations(document["invocations"])
    diagnoser = replay_diagnoser(
        OfflineChatModel(), backend, recording, document["tool_definitions"]
    )
    answer = diagnoser.diagnose(QUESTION, session_id="replay").answer
    assert recording.misses == [] and recording.hits == len(recorded[2])
    assert conclusion_lines(answer) == conclusion_lines(document["answer"])
    with pytest.raises(TelemetryError):
        backend.query_logs(service="order-service")


def test_a_call_the_recording_lacks_is_a_miss_and_never_reaches_a_backend(
    recorded: tuple[Diagnoser, dict[str, Any], list[dict[str, Any]]],
) -> None:
    document = _document(recorded)
    dropped = next(r for r in document["invocations"] if r["tool_name"] == "query_logs")
    rows = [r for r in document["invocations"] if r is not dropped]
    recording = Recording.from_invocations(rows)
    diagnoser = replay_diagnoser(
        OfflineChatModel(), RecordedBackend(document), recording, document["tool_definitions"]
    )
    answer = diagnoser.diagnose(QUESTION, session_id="replay").answer
    # The dropped call is the first miss; without its output the model may go on differently.
    assert recording.misses[0].tool == "query_logs"
    assert recording.misses[0].arguments == canonical_arguments(dropped["arguments"])
    assert answer  # the run still answers, with what it was served
    errors = [r for r in diagnoser.audit.invocations if r["status"] == "ERROR"]  # type: ignore[attr-defined]
    assert len(errors) == len(recording.misses)
    assert all("not sent to any backend" in e["error_message"] for e in errors)


def test_repeated_calls_get_the_recorded_outputs_in_order() -> None:
    rows: list[dict[str, Any]] = [
        {"tool_name": "t", "arguments": {"q": 1}, "raw_output": {"n": 1}, "status": "SUCCESS"},
        {"tool_name": "t", "arguments": {"q": 1}, "raw_output": {"n": 2}, "status": "SUCCESS"},
        {"tool_name": "t", "arguments": {"q": 2}, "raw_output": None, "status": "BLOCKED"},
    ]
    recording = Recording.from_invocations(rows)
    served = [recording.serve("t", {"q": 1}).raw_output["n"] for _ in range(3)]
    assert served == [1, 2, 2] and recording.hits == 3
    with pytest.raises(Exception, match="no output"):
        recording.serve("t", {"q": 2})


def test_side_by_side_puts_old_left_and_new_right() -> None:
    lines = side_by_side(["old headline"], ["new headline", "more"], width=20)
    assert lines[0].startswith("recorded") and "| replayed" in lines[0]
    assert lines[2] == f"{'old headline':<20} | new headline"
    assert lines[3] == f"{'':<20} | more"
