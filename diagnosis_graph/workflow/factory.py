"""Build the diagnosis graph from its ports and run it with the workflow's configuration."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..checkpoint import Checkpointer
from ..config import RunConfig
from ..errors import GraphRecursionError, GraphRuntimeError
from ..runtime import CompiledGraph
from .nodes import DiagnosisNodes
from .ports import DiagnosisPorts
from .topology import RECURSION_LIMIT, build_topology
from .trace import TERMINATION_ERROR, TERMINATION_RECURSION_LIMIT, build_orchestration_trace


def build_diagnosis_graph(
    ports: DiagnosisPorts, checkpointer: Checkpointer | None = None
) -> CompiledGraph:
    """The compiled diagnosis StateGraph with its nodes bound to ``ports``."""
    return build_topology(DiagnosisNodes(ports).nodes()).compile(checkpointer=checkpointer)


def diagnosis_config(
    session_id: str, run_id: str, recursion_limit: int = RECURSION_LIMIT
) -> RunConfig:
    """``thread_id = run_id``, metadata ``{session_id, run_id}``, the recursion limit (32)."""
    return RunConfig(
        thread_id=run_id,
        metadata={"session_id": session_id, "run_id": run_id},
        recursion_limit=recursion_limit,
    )


def initial_state(
    question: str, *, reference_time: str | None = None, history: Sequence[Mapping[str, Any]] = ()
) -> dict[str, Any]:
    """The input state of a run: the question and its context."""
    return {
        "diagnosis_context": {
            "question": question,
            "reference_time": reference_time,
            "history": [dict(turn) for turn in history],
        }
    }


@dataclass(frozen=True)
class DiagnosisRun:
    """The result of one run: SUCCESS with an answer (maybe degraded) or FAILED."""

    status: str
    answer: str | None
    degraded: bool
    state: dict[str, Any]
    orchestration_trace: dict[str, Any]
    error: str | None = None


OnEvent = Callable[[dict[str, Any]], None]
TraceOf = Callable[[Mapping[str, Any], str | None], dict[str, Any]]


def execute(
    graph: CompiledGraph,
    start: dict[str, Any] | None,
    config: RunConfig,
    on_event: OnEvent | None,
    trace_of: TraceOf,
) -> DiagnosisRun:
    """Run ``graph`` once; a node error or the recursion limit gives a FAILED run, no raise."""

    def forward(event: dict[str, Any]) -> None:
        if on_event is not None:
            for item in event["update"].get("orchestration_events", []):
                on_event(dict(item))

    try:
        result = graph.run(start, config, on_step=forward)
    except GraphRuntimeError as exc:
        limited = isinstance(exc, GraphRecursionError)
        trace = trace_of(exc.state, TERMINATION_RECURSION_LIMIT if limited else TERMINATION_ERROR)
        return DiagnosisRun("FAILED", None, False, exc.state, trace, error=str(exc))
    state, trace = result.state, trace_of(result.state, None)
    answer = state.get("final_answer")
    if not answer:
        return DiagnosisRun("FAILED", None, False, state, trace, error="the run produced no answer")
    return DiagnosisRun("SUCCESS", answer, bool(trace["degraded"]), state, trace)


def _trace_of(state: Mapping[str, Any], stopped_by: str | None) -> dict[str, Any]:
    return build_orchestration_trace(
        state.get("orchestration_events", []),
        state.get("evidence_retry_count", 0),
        stopped_by=stopped_by,
        resumed_after=state.get("resumed_after", ()),
    )


def run_diagnosis(
    graph: CompiledGraph,
    question: str,
    *,
    session_id: str,
    run_id: str,
    reference_time: str | None = None,
    history: Sequence[Mapping[str, Any]] = (),
    on_event: OnEvent | None = None,
    config: RunConfig | None = None,
    resume: bool = False,
) -> DiagnosisRun:
    """Run the diagnosis graph once; ``resume`` continues after its latest checkpoint."""
    run_config = config or diagnosis_config(session_id, run_id)
    start: dict[str, Any] | None = initial_state(
        question, reference_time=reference_time, history=history
    )
    if resume and _mark_resumed(graph.checkpointer, run_config):
        start = None
    return execute(graph, start, run_config, on_event, _trace_of)


def _mark_resumed(checkpointer: Checkpointer | None, config: RunConfig) -> bool:
    """Note in the latest checkpoint that the run resumes from it; False without one."""
    if checkpointer is None or config.thread_id is None:
        return False
    saved = checkpointer.latest(config.thread_id)
    if saved is None:
        return False
    state = dict(saved.state)
    events = state.get("orchestration_events") or []
    state["resumed_after"] = [*(state.get("resumed_after") or []), len(events)]
    checkpointer.put(saved.thread_id, saved.step, saved.node, state)
    return True
