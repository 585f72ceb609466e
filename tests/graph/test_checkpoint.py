"""Checkpoints after every node, and resuming a run after its last completed node."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Mapping
from typing import Any

import pytest

from diagnosis_graph import (
    END,
    START,
    Append,
    Checkpoint,
    CheckpointError,
    CompiledGraph,
    GraphRecursionError,
    GraphValidationError,
    InMemoryCheckpointer,
    NodeError,
    Replace,
    RunConfig,
    StateGraph,
)

CONFIG = RunConfig(thread_id="run-1", metadata={"session_id": "s", "run_id": "run-1"})
#: The route of one run: the planner retries itself once, the checker finds a gap once.
PATH = ["plan", "plan", "check", "plan", "check", "answer"]


class Machine:
    """A small graph with a self-loop retry and a router; counts its node calls and can crash.

    ``crash_at``: the node of that step raises, as a worker dying mid-node would stop the run.
    """

    def __init__(self, crash_at: int = 0) -> None:
        self.calls: Counter[str] = Counter()
        self.executions = 0
        self.crash_at = crash_at

    def node(self, name: str, update: Any) -> Any:
        def run(state: Mapping[str, Any]) -> dict[str, Any]:
            self.executions += 1
            if self.executions == self.crash_at:
                raise RuntimeError("worker died")
            self.calls[name] += 1
            return update(state)

        return run

    def graph(self, checkpointer: Any = None) -> CompiledGraph:
        graph = StateGraph(
            {
                "question": Replace(),
                "attempts": Replace(default=0),
                "gaps": Replace(default=0),
                "events": Append(max_len=16),
                "answer": Replace(),
            }
        )
        graph.add_node("plan", self.node("plan", plan))
        graph.add_node("check", self.node("check", check))
        graph.add_node("answer", self.node("answer", answer))
        graph.add_edge(START, "plan")
        graph.add_conditional_edges("plan", last_outcome, {"retry": "plan", "ok": "check"})
        graph.add_conditional_edges("check", last_outcome, {"gap": "plan", "ok": "answer"})
        graph.add_edge("answer", END)
        return graph.compile(checkpointer=checkpointer)


def event(node: str, outcome: str, state: Mapping[str, Any]) -> dict[str, Any]:
    return {"node": node, "outcome": outcome, "seen": len(state["events"])}


def plan(state: Mapping[str, Any]) -> dict[str, Any]:
    if state["attempts"] == 0:
        return {"attempts": 1, "events": [event("plan", "retry", state)]}
    return {"events": [event("plan", "ok", state)]}


def check(state: Mapping[str, Any]) -> dict[str, Any]:
    if state["gaps"] == 0:
        return {"gaps": 1, "events": [event("check", "gap", state)]}
    return {"events": [event("check", "ok", state)]}


def answer(state: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "answer": f"{state['question']}: pool exhausted",
        "events": [event("answer", "ok", state)],
    }


def last_outcome(state: Mapping[str, Any]) -> str:
    return str(state["events"][-1]["outcome"])


class RecordingCheckpointer(InMemoryCheckpointer):
    """Keeps every checkpoint as well as the latest, and can fail one put."""

    def __init__(self, fail_at: int = 0) -> None:
        super().__init__()
        self.history: list[Checkpoint] = []
        self.fail_at = fail_at

    def put(self, thread_id: str, step: int, node: str, state: Mapping[str, Any]) -> None:
        if step == self.fail_at:
            raise ConnectionError("database went away")
        super().put(thread_id, step, node, state)
        latest = self.latest(thread_id)
        assert latest is not None
        self.history.append(latest)


def uninterrupted() -> dict[str, Any]:
    return Machine().graph().invoke({"question": "why"}, CONFIG)


def test_every_node_execution_is_checkpointed_with_its_step_and_plain_state() -> None:
    saver = RecordingCheckpointer()
    final = Machine().graph(saver).invoke({"question": "why"}, CONFIG)
    assert [(c.step, c.node) for c in saver.history] == list(enumerate(PATH, start=1))
    assert all(c.thread_id == "run-1" for c in saver.history)
    retried = saver.history[1].state  # after the planner's retry of itself
    assert retried["attempts"] == 1 and [e["outcome"] for e in retried["events"]] == ["retry", "ok"]
    last = saver.history[-1].state
    assert last == final and type(last["events"]) is list
    assert json.loads(json.dumps(last)) == last


@pytest.mark.parametrize("crash_at", range(2, len(PATH) + 1))
def test_a_run_resumes_after_its_last_completed_node(crash_at: int) -> None:
    saver = InMemoryCheckpointer()
    machine = Machine(crash_at=crash_at)
    app = machine.graph(saver)
    with pytest.raises(NodeError, match="worker died"):
        app.invoke({"question": "why"}, CONFIG)
    saved = saver.latest("run-1")
    assert saved is not None and (saved.step, saved.node) == (crash_at - 1, PATH[crash_at - 2])
    completed = Counter(PATH[: crash_at - 1])
    assert machine.calls == completed
    result = app.run(None, CONFIG)
    # Nodes already completed are not called again; the rest run once each.
    assert machine.calls - completed == Counter(PATH[crash_at - 1 :])
    assert result.state == uninterrupted()  # counters and appended events as they were
    assert result.steps == len(PATH)


def test_a_resumed_stream_continues_the_step_count_after_a_router() -> None:
    saver = InMemoryCheckpointer()
    with pytest.raises(NodeError):
        Machine(crash_at=4).graph(saver).invoke({"question": "why"}, CONFIG)
    events = list(Machine().graph(saver).stream(None, CONFIG))
    # The checker found a gap at step 3: its router sends the resumed run back to the planner.
    assert [(e["step"], e["node"]) for e in events] == list(enumerate(PATH, start=1))[3:]
    assert events[-1]["next"] == END


def test_resuming_after_a_node_that_leads_to_end_returns_its_state_at_once() -> None:
    saver = InMemoryCheckpointer()
    machine = Machine()
    app = machine.graph(saver)
    final = app.invoke({"question": "why"}, CONFIG)
    calls = machine.calls.copy()
    assert app.invoke(None, CONFIG) == final
    assert list(app.stream(None, CONFIG)) == []
    assert app.run(None, CONFIG).steps == len(PATH)
    assert machine.calls == calls


def test_a_state_always_starts_a_fresh_run_that_overwrites_the_checkpoint() -> None:
    saver = RecordingCheckpointer()
    machine = Machine()
    app = machine.graph(saver)
    app.invoke({"question": "why"}, CONFIG)
    steps = [e["step"] for e in app.stream({"question": "how"}, CONFIG)]
    assert steps == list(range(1, len(PATH) + 1))
    assert machine.calls == Counter(PATH * 2)
    latest = saver.latest("run-1")
    assert latest is not None and latest.state["answer"] == "how: pool exhausted"


def test_a_failing_put_stops_the_run_naming_the_node_with_the_state_it_could_not_save() -> None:
    saver = RecordingCheckpointer(fail_at=3)
    machine = Machine()
    with pytest.raises(CheckpointError) as info:
        machine.graph(saver).invoke({"question": "why"}, CONFIG)
    error = info.value
    assert isinstance(error, NodeError) and isinstance(error.original, ConnectionError)
    assert (error.node, error.step) == ("check", 3)
    assert error.state["gaps"] == 1 and len(error.state["events"]) == 3
    assert "checkpointer failed after node 'check'" in str(error)
    # The caller decides to retry: the run resumes after the last checkpoint that was saved.
    saver.fail_at = 0
    assert machine.graph(saver).invoke(None, CONFIG) == uninterrupted()
    assert machine.calls["check"] == 3  # the unsaved check ran again, then the second one


def test_resuming_without_a_checkpoint_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="no checkpointer to resume from"):
        Machine().graph().invoke(None, CONFIG)
    with pytest.raises(ValueError, match="thread 'run-1' has no checkpoint"):
        Machine().graph(InMemoryCheckpointer()).invoke(None, CONFIG)
    saver = InMemoryCheckpointer()
    with pytest.raises(NodeError):
        Machine(crash_at=1).graph(saver).invoke({"question": "why"}, CONFIG)
    with pytest.raises(ValueError, match="has no checkpoint"):
        list(Machine().graph(saver).stream(None, CONFIG))


def test_a_checkpointed_graph_needs_a_thread_id() -> None:
    app = Machine().graph(InMemoryCheckpointer())
    with pytest.raises(ValueError, match="thread_id"):
        app.invoke({"question": "why"}, RunConfig())


def test_a_checkpoint_naming_a_node_the_graph_does_not_have_is_rejected() -> None:
    saver = InMemoryCheckpointer()
    saver.put("run-1", 2, "renamed", {"question": "why"})
    with pytest.raises(ValueError, match="unknown node 'renamed'"):
        Machine().graph(saver).invoke(None, CONFIG)


def test_compile_rejects_a_checkpointer_without_put_and_latest() -> None:
    with pytest.raises(GraphValidationError, match="has no put"):
        Machine().graph(object())


def test_the_recursion_limit_counts_the_steps_before_the_resume() -> None:
    saver = InMemoryCheckpointer()
    with pytest.raises(NodeError):
        Machine(crash_at=5).graph(saver).invoke({"question": "why"}, CONFIG)
    with pytest.raises(GraphRecursionError) as info:
        Machine().graph(saver).invoke(None, RunConfig(thread_id="run-1", recursion_limit=5))
    assert (info.value.step, info.value.node) == (5, "answer")


def test_the_in_memory_checkpointer_keeps_copies_nobody_else_can_change() -> None:
    saver = InMemoryCheckpointer()
    state = {"doc": {"rows": [1]}}
    saver.put("t", 1, "n", state)
    state["doc"]["rows"].append(2)
    first = saver.latest("t")
    assert first is not None and first.state == {"doc": {"rows": [1]}}
    first.state["doc"]["rows"].append(3)
    assert saver.latest("t") == Checkpoint("t", 1, "n", {"doc": {"rows": [1]}})
    final = Machine().graph(saver).invoke({"question": "why"}, RunConfig(thread_id="u"))
    final["events"].clear()
    latest = saver.latest("u")
    assert latest is not None and len(latest.state["events"]) == len(PATH)
    saver.delete("u")
    assert saver.latest("u") is None and saver.latest("t") is not None


def test_one_in_memory_checkpointer_serves_runs_on_many_threads() -> None:
    saver = InMemoryCheckpointer()
    app = Machine().graph(saver)
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            app.invoke({"question": f"q{n}"}, RunConfig(thread_id=f"run-{n}"))
        except BaseException as exc:  # reported below, on the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for n in range(8):
        latest = saver.latest(f"run-{n}")
        assert latest is not None and latest.step == len(PATH)
        assert latest.state["answer"] == f"q{n}: pool exhausted"
