"""The StateGraph builder and its compile-time validation."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from .checkpoint import Checkpointer
from .errors import GraphValidationError
from .state import Reducer

if TYPE_CHECKING:
    from .runtime import CompiledGraph

START, END = "__start__", "__end__"

NodeFn = Callable[..., "Mapping[str, Any] | None"]
Router = Callable[[Mapping[str, Any]], Any]


class Branch(NamedTuple):
    """A conditional edge: ``router(state)`` returns a key of ``mapping``."""

    router: Router
    mapping: Mapping[str, str]


Target = str | Branch


def takes_config(fn: Callable[..., Any]) -> bool:
    """True when ``fn`` needs a second positional argument or has a ``config`` parameter.

    Parameters with defaults do not count, so ``lambda state, x=x: ...`` is a one-argument node.
    """
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required = [p for p in params if p.kind in positional and p.default is p.empty]
    return len(required) >= 2 or any(p.name == "config" and p.kind in positional for p in params)


class StateGraph:
    """Builder of a graph over a declared state schema; each node has one way out: an edge or
    conditional edges. :meth:`compile` validates it all and raises :class:`GraphValidationError`
    listing every fault (``.problems``)."""

    def __init__(self, schema: Mapping[str, Reducer]) -> None:
        self.schema: dict[str, Reducer] = dict(schema)
        self._nodes: list[tuple[str, Any]] = []
        self._edges: list[tuple[str, Target]] = []

    def add_node(self, name: str, fn: NodeFn) -> StateGraph:
        """Add a node; ``fn(state)`` or ``fn(state, config)`` returns an update dict or None."""
        self._nodes.append((name, fn))
        return self

    def add_edge(self, source: str, target: str) -> StateGraph:
        """Always go from ``source`` to ``target`` (``START``/``END`` allowed)."""
        self._edges.append((source, target))
        return self

    def add_conditional_edges(
        self, source: str, router: Router, mapping: Mapping[str, str] | Iterable[str]
    ) -> StateGraph:
        """After ``source``, go to ``mapping[router(state)]``; a list maps each name to itself."""
        if not isinstance(mapping, Mapping):
            mapping = {name: name for name in mapping}
        self._edges.append((source, Branch(router, MappingProxyType(dict(mapping)))))
        return self

    def compile(self, checkpointer: Checkpointer | None = None) -> CompiledGraph:
        """Validate the definition; return a :class:`CompiledGraph` (checkpointing, if given)."""
        from .runtime import CompiledGraph

        problems = [
            f"state key {key!r} must map to a Reducer (Replace or Append), got {value!r}"
            for key, value in self.schema.items()
            if not isinstance(key, str) or not isinstance(value, Reducer)
        ]
        if checkpointer is not None and not isinstance(checkpointer, Checkpointer):
            problems.append(f"checkpointer {checkpointer!r} has no put() and latest()")
        nodes = self._collect_nodes(problems)
        edges = self._collect_edges(nodes, problems)
        if not problems:
            problems += _reachability_problems(nodes, edges)
        if problems:
            raise GraphValidationError(problems)
        return CompiledGraph(self.schema, nodes, edges, checkpointer)

    def _collect_nodes(self, problems: list[str]) -> dict[str, tuple[NodeFn, bool]]:
        nodes: dict[str, tuple[NodeFn, bool]] = {}
        for name, fn in self._nodes:
            if not isinstance(name, str) or not name:
                problems.append(f"node name must be a non-empty string, got {name!r}")
            elif name in (START, END):
                problems.append(f"node name {name!r} is reserved")
            elif name in nodes:
                problems.append(f"duplicate node name {name!r}")
            elif not callable(fn):
                problems.append(f"node {name!r} is not callable: {fn!r}")
            else:
                nodes[name] = (fn, takes_config(fn))
        return nodes

    def _collect_edges(self, nodes: Mapping[str, Any], problems: list[str]) -> dict[str, Target]:
        edges: dict[str, Target] = {}
        for source, target in self._edges:
            if source == END:
                problems.append("edge from END: END has no outgoing edges")
            elif source != START and source not in nodes:
                problems.append(f"edge from unknown node {source!r}")
            elif source in edges:
                problems.append(
                    f"node {source!r} has more than one outgoing edge; use one "
                    f"add_edge or one add_conditional_edges per node"
                )
            else:
                problems += _target_problems(source, target, nodes)
                edges[source] = target
        if START not in edges:
            problems.append("no edge from START: add_edge(START, <first node>)")
        return edges


def _targets(target: Target) -> list[str]:
    return list(target.mapping.values()) if isinstance(target, Branch) else [target]


def _target_problems(source: str, target: Target, nodes: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    if isinstance(target, Branch):
        if not callable(target.router):
            problems.append(f"router of node {source!r} is not callable")
        if not target.mapping:
            problems.append(f"conditional edges of node {source!r} have an empty mapping")
    for name in _targets(target):
        if name == START:
            problems.append(f"edge from {source!r} to START: START has no incoming edges")
        elif name != END and name not in nodes:
            problems.append(f"edge from {source!r} to unknown node {name!r}")
    return problems


def _reachability_problems(nodes: Mapping[str, Any], edges: Mapping[str, Target]) -> list[str]:
    forward = {source: _targets(target) for source, target in edges.items()}
    backward: dict[str, list[str]] = {}
    for source, targets in forward.items():
        for name in targets:
            backward.setdefault(name, []).append(source)
    reached, finishing = _closure(START, forward), _closure(END, backward)
    problems = [f"node {name!r} is unreachable from START" for name in nodes if name not in reached]
    problems += [
        f"node {name!r} cannot reach END" + ("" if name in edges else " (it has no outgoing edge)")
        for name in nodes
        if name in reached and name not in finishing
    ]
    return problems


def _closure(root: str, adjacency: Mapping[str, list[str]]) -> set[str]:
    """Every name reachable from ``root`` (itself included) along ``adjacency``."""
    seen, pending = {root}, [root]
    while pending:
        fresh = set(adjacency.get(pending.pop(), ())) - seen
        seen |= fresh
        pending += fresh
    return seen
