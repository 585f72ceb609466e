"""Ports of the AIOps supervisor graph: where alerts come from, and what an investigation runs on.

The supervisor's deterministic nodes reach the world only through :class:`AiOpsPorts`: the
alert source (the web app records the read as a ``query_alerts`` tool invocation of the run),
the run's invocation store, the compiled chat diagnosis graph each alert is investigated with,
the clock of the telemetry backend, and a listener for progress events.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...runtime import CompiledGraph
from ..ports import InvocationStore

#: Receives one progress event per node execution, of the supervisor and of each child graph.
Listener = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class AlertsRead:
    """The result of reading the firing alerts: ``ok``, the alerts, the invocation, a detail."""

    ok: bool
    alerts: Sequence[Mapping[str, Any]] = ()
    invocation_id: str | None = None
    detail: str | None = None


class AlertSource(Protocol):
    """Reads the alerts of the alerting backend for one run (recorded as a tool invocation)."""

    def firing_alerts(self, session_id: str, run_id: str) -> AlertsRead:
        """Every alert the backend reports as firing (pending ones are filtered by the graph)."""
        ...


def _ignore(event: dict[str, Any]) -> None:
    return None


@dataclass(frozen=True)
class AiOpsPorts:
    """Everything the supervisor graph needs from outside, handed to ``build_aiops_graph``.

    ``diagnosis`` is the chat flow's compiled diagnosis graph (``build_diagnosis_graph``); every
    alert is investigated by running it as a nested graph, so its nodes, retry budgets,
    gatekeeper and evidence retry apply unchanged. ``unreadable`` gives why each telemetry
    backend that could not be read failed (named in the alert's section, like its failed
    tool calls).
    """

    alerts: AlertSource
    invocations: InvocationStore
    diagnosis: CompiledGraph
    reference_time: Callable[[], str | None] = lambda: None
    listener: Listener = field(default=_ignore)
    unreadable: Callable[[], Sequence[str]] = tuple
