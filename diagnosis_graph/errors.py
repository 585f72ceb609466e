"""Exceptions raised by the engine.

One root, :class:`GraphError`; :class:`GraphValidationError` is a definition-time error (the
graph is malformed and cannot be compiled); :class:`GraphRuntimeError` and its subclasses are
raised while a run executes and carry the node, the step and the partial state, so a caller can
persist what happened before the failure.
"""

from __future__ import annotations

from typing import Any


class GraphError(Exception):
    """Root of every error the engine raises."""


class GraphValidationError(GraphError):
    """The graph definition is invalid; the message names every offending node, edge or key."""

    def __init__(self, problems: list[str] | str) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("invalid graph: " + "; ".join(self.problems))


class GraphRuntimeError(GraphError):
    """A run stopped; ``node``, ``step`` and ``state`` describe where and with what state."""

    def __init__(self, message: str, *, node: str, step: int, state: dict[str, Any]) -> None:
        super().__init__(message)
        self.node = node
        self.step = step
        self.state = state


class GraphRecursionError(GraphRuntimeError):
    """The run needed more node executions than ``RunConfig.recursion_limit`` allows."""


class NodeError(GraphRuntimeError):
    """A node function raised; the original exception is ``__cause__`` and ``original``."""

    def __init__(
        self, message: str, *, node: str, step: int, state: dict[str, Any], original: BaseException
    ) -> None:
        super().__init__(message, node=node, step=step, state=state)
        self.original = original


class InvalidUpdateError(GraphRuntimeError):
    """A node returned something that is not a valid state update (unknown key, wrong type)."""


class InvalidRouteError(GraphRuntimeError):
    """A conditional router returned a key that is not in its mapping."""
