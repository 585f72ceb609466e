"""A small, standard-library-only StateGraph engine (plus the diagnosis workflow subpackage)."""

from __future__ import annotations

from .checkpoint import Checkpoint, Checkpointer, InMemoryCheckpointer
from .config import RunConfig
from .errors import (
    CheckpointError,
    GraphError,
    GraphRecursionError,
    GraphRuntimeError,
    GraphValidationError,
    InvalidRouteError,
    InvalidUpdateError,
    NodeError,
)
from .graph import END, START, StateGraph
from .runtime import CompiledGraph, RunResult
from .state import Append, Reducer, Replace

__all__ = [
    "END",
    "START",
    "Append",
    "Checkpoint",
    "CheckpointError",
    "Checkpointer",
    "CompiledGraph",
    "GraphError",
    "GraphRecursionError",
    "GraphRuntimeError",
    "GraphValidationError",
    "InMemoryCheckpointer",
    "InvalidRouteError",
    "InvalidUpdateError",
    "NodeError",
    "Reducer",
    "Replace",
    "RunConfig",
    "RunResult",
    "StateGraph",
]
