"""Ports: the protocols the diagnosis workflow reaches the outside world through."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..config import RunConfig
from .outcomes import Outcome

#: Tool invocation statuses (``tool_invocation.status``).
SUCCESS, ERROR, BLOCKED = "SUCCESS", "ERROR", "BLOCKED"


@dataclass(frozen=True)
class AgentCall:
    """One agent execution: which agent, the output contract, and its input payload."""

    agent: str
    schema_name: str
    output_schema: Mapping[str, Any]
    payload: Mapping[str, Any]
    tools: bool = False


@dataclass(frozen=True)
class AgentReply:
    """What the agent produced: its outcome and, when COMPLETED, the final text content."""

    outcome: Outcome
    content: str | None = None
    detail: str | None = None


class AgentInvoker(Protocol):
    """Runs an agent (a model call, or a ReAct loop for the executor) for a node."""

    def invoke(self, call: AgentCall, config: RunConfig) -> AgentReply:
        """Run ``call``; ``config`` is the child config carrying only session/run identity."""
        ...


@dataclass(frozen=True)
class InvocationRecord:
    """A recorded tool invocation as the gatekeeper reads it."""

    invocation_id: str
    run_id: str
    tool_name: str
    status: str
    raw_output: Any = None
    arguments: Mapping[str, Any] = field(default_factory=dict)


class InvocationStore(Protocol):
    """Read access to the tool invocations of one run (``tool_invocation`` rows)."""

    def invocations_for_run(self, run_id: str) -> Sequence[InvocationRecord]:
        """Every invocation of ``run_id``, in creation order."""
        ...


@dataclass(frozen=True)
class DiagnosisPorts:
    """Everything the diagnosis nodes need from outside."""

    invoker: AgentInvoker
    invocations: InvocationStore
    tool_catalog: Callable[[], Sequence[Mapping[str, Any]]] = tuple
    service_catalog: Callable[[], Sequence[str]] = tuple
    tool_roles: Callable[[], Mapping[str, str]] = dict
    data_range: Callable[[], Mapping[str, Sequence[str] | None]] = dict
    unreadable: Callable[[], Sequence[str]] = tuple
