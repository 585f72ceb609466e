"""A small, standard-library-only StateGraph engine (plus the diagnosis workflow subpackage).

>>> from diagnosis_graph import StateGraph, START, END, Replace
>>> graph = StateGraph({"n": Replace(default=0)})
>>> _ = graph.add_node("inc", lambda s: {"n": s["n"] + 1}).add_edge(START, "inc")
>>> _ = graph.add_edge("inc", END)
>>> graph.compile().invoke({"n": 41})
{'n': 42}
"""

from __future__ import annotations

from .config import RunConfig
from .errors import (
    GraphError,
    GraphRecursionError,
    GraphRuntimeError,
    GraphValidationError,
    InvalidRouteError,
    InvalidUpdateError,
    NodeError,
)
from .frozen import freeze, thaw
from .graph import END, START, StateGraph
from .runtime import CompiledGraph, RunResult
from .state import Append, Reducer, Replace

__all__ = [
    "END",
    "START",
    "Append",
    "CompiledGraph",
    "GraphError",
    "GraphRecursionError",
    "GraphRuntimeError",
    "GraphValidationError",
    "InvalidRouteError",
    "InvalidUpdateError",
    "NodeError",
    "Reducer",
    "Replace",
    "RunConfig",
    "RunResult",
    "StateGraph",
    "freeze",
    "thaw",
]
