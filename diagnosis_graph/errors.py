"""Exceptions of the engine, under one root: :class:`GraphError`. :class:`GraphValidationError`:
the graph cannot be compiled; :class:`GraphRuntimeError` and its subclasses stop a run and carry
the node, the step and the partial state, so a caller can persist what happened before."""

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
        self.node, self.step, self.state = node, step, state


class GraphRecursionError(GraphRuntimeError):
    """The run needed more node executions than ``RunConfig.recursion_limit`` allows."""


class NodeError(GraphRuntimeError):
    """A node or its router raised; the exception is ``original`` (and ``__cause__``)."""

    @property
    def original(self) -> BaseException | None:
        """The exception the node or router raised."""
        return self.__cause__


class CheckpointError(NodeError):
    """The checkpointer's ``put`` after a node raised; ``state`` is what it failed to save."""


class InvalidUpdateError(GraphRuntimeError):
    """A node returned something that is not a valid state update (unknown key, wrong type)."""


class InvalidRouteError(GraphRuntimeError):
    """A conditional router returned a key that is not in its mapping."""
