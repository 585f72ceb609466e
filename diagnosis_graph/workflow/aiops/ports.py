"""Ports of the AIOps supervisor graph: where alerts come from, and what investigations run on."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ...runtime import CompiledGraph
from ..ports import InvocationStore


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


@dataclass(frozen=True)
class AiOpsPorts:
    """Everything the supervisor graph needs from outside, handed to ``build_aiops_graph``.

    ``diagnosis`` is the chat's compiled diagnosis graph, run nested for every alert;
    ``listener`` receives each event of the supervisor and of the child graphs; ``unreadable``
    gives why each telemetry backend that could not be read failed.
    """

    alerts: AlertSource
    invocations: InvocationStore
    diagnosis: CompiledGraph
    reference_time: Callable[[], str | None] = lambda: None
    listener: Callable[[dict[str, Any]], None] = lambda event: None
    unreadable: Callable[[], Sequence[str]] = tuple
