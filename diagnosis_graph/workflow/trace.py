"""The ``orchestration_trace`` document built from a run's orchestration events."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

from ..graph import END, START
from .topology import COMPOSER, FALLBACK

TRACE_VERSION = "stategraph-v1"
TERMINATION_RECURSION_LIMIT = "recursion_limit"
TERMINATION_ERROR = "error"
#: The reason code of the edge a run took when it was resumed from its checkpoint.
RESUMED = "resumed"


def transitions(
    events: Sequence[Mapping[str, Any]], resumed_after: Sequence[int] = ()
) -> list[dict[str, Any]]:
    """Every edge taken between two nodes (a resume adds a ``resumed`` edge)."""
    taken: list[dict[str, Any]] = []
    for index, (before, after) in enumerate(pairwise(events), start=1):
        edge = {"from": before["node"], "to": after["node"]}
        taken += [
            {**edge, "reason_code": RESUMED, "attempt": number}
            for number, count in enumerate(resumed_after, start=1)
            if count == index
        ]
        taken.append({**edge, "reason_code": before["reason_code"], "attempt": before["attempt"]})
    return taken


def termination_reason(events: Sequence[Mapping[str, Any]]) -> str:
    """``composer_completed`` or ``fallback_<from node>_<reason>`` for a finished run."""
    if not events:
        return TERMINATION_ERROR
    last = events[-1]
    if last["node"] == COMPOSER and last["reason_code"] == "completed":
        return "composer_completed"
    if last["node"] == FALLBACK and len(events) >= 2:
        source = events[-2]
        node, reason = str(source["node"]), str(source["reason_code"])
        if reason.startswith(node + "_"):
            reason = reason[len(node) + 1 :]
        return f"fallback_{node}_{reason}"
    return TERMINATION_ERROR


def build_orchestration_trace(
    events: Sequence[Mapping[str, Any]],
    evidence_retry_count: int,
    *,
    stopped_by: str | None = None,
    resumed_after: Sequence[int] = (),
) -> dict[str, Any]:
    """The run trace; ``stopped_by`` names why an unfinished run stopped."""
    final_node = str(events[-1]["node"]) if events else None
    reason = stopped_by or termination_reason(events)
    return {
        "version": TRACE_VERSION,
        "transitions": transitions(events, resumed_after),
        "final_node": final_node,
        "termination_reason": reason,
        "degraded": final_node == FALLBACK and stopped_by is None,
        "evidence_retry_count": int(evidence_retry_count),
    }


def route_edges(trace: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The ``(from, to)`` edges an orchestration trace went through, START and END included."""
    transitions = trace.get("transitions") or []
    nodes = [t["from"] for t in transitions] + ([transitions[-1]["to"]] if transitions else [])
    if not nodes and trace.get("final_node"):
        nodes = [str(trace["final_node"])]
    if not nodes:
        return []
    edges = [(START, nodes[0]), *((t["from"], t["to"]) for t in transitions)]
    if trace.get("termination_reason") not in (TERMINATION_ERROR, TERMINATION_RECURSION_LIMIT):
        edges.append((nodes[-1], END))
    return edges
