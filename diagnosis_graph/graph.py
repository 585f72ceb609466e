"""The StateGraph builder and its compile-time validation."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .errors import GraphValidationError
from .state import Reducer

if TYPE_CHECKING:
    from .runtime import CompiledGraph

START = "__start__"
END = "__end__"

NodeFn = Callable[..., "Mapping[str, Any] | None"]
Router = Callable[[Mapping[str, Any]], Any]


@dataclass(frozen=True)
class Branch:
    """A conditional edge: ``router(state)`` returns a key of ``mapping``."""

    router: Router
    mapping: Mapping[str, str]


Target = str | Branch


@dataclass(frozen=True)
class NodeSpec:
    """A compiled node: its function and whether it takes ``(state, config)``."""

    name: str
    fn: NodeFn
    takes_config: bool


def takes_config(fn: Callable[..., Any]) -> bool:
    """True when ``fn`` needs a second positional argument or has a ``config`` parameter.

    Parameters with defaults do not count, so ``lambda state, x=x: ...`` is a one-argument node.
    """
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    if any(p.name == "config" and p.kind is not p.KEYWORD_ONLY for p in params):
        return True
    required = [
        p
        for p in params
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    return len(required) >= 2


class StateGraph:
    """Builder of a graph over a declared state schema.

    Every ``add_*`` call only records; :meth:`compile` validates the whole definition and
    raises :class:`GraphValidationError` listing every fault it found (``.problems``).
    Each node has exactly one way out: a fixed edge or a set of conditional edges.
    """

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

    def compile(self) -> CompiledGraph:
        """Validate the definition and return an executable :class:`CompiledGraph`."""
        from .runtime import CompiledGraph

        problems = self._schema_problems()
        nodes, node_problems = self._collect_nodes()
        problems += node_problems
        edges, edge_problems = self._collect_edges(nodes)
        problems += edge_problems
        if not problems:
            problems += _reachability_problems(nodes, edges)
        if problems:
            raise GraphValidationError(problems)
        return CompiledGraph(self.schema, nodes, edges)

    def _schema_problems(self) -> list[str]:
        return [
            f"state key {key!r} must map to a Reducer (Replace or Append), got {value!r}"
            for key, value in self.schema.items()
            if not isinstance(key, str) or not isinstance(value, Reducer)
        ]

    def _collect_nodes(self) -> tuple[dict[str, NodeSpec], list[str]]:
        nodes: dict[str, NodeSpec] = {}
        problems: list[str] = []
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
                nodes[name] = NodeSpec(name, fn, takes_config(fn))
        return nodes, problems

    def _collect_edges(self, nodes: Mapping[str, NodeSpec]) -> tuple[dict[str, Target], list[str]]:
        edges: dict[str, Target] = {}
        problems: list[str] = []
        for source, target in self._edges:
            if source == END:
                problems.append("edge from END: END has no outgoing edges")
                continue
            if source != START and source not in nodes:
                problems.append(f"edge from unknown node {source!r}")
                continue
            if source in edges:
                problems.append(
                    f"node {source!r} has more than one outgoing edge; use one "
                    f"add_edge or one add_conditional_edges per node"
                )
                continue
            problems += _target_problems(source, target, nodes)
            edges[source] = target
        if START not in edges:
            problems.append("no edge from START: add_edge(START, <first node>)")
        return edges, problems


def _targets(target: Target) -> list[str]:
    return list(target.mapping.values()) if isinstance(target, Branch) else [target]


def _target_problems(source: str, target: Target, nodes: Mapping[str, NodeSpec]) -> list[str]:
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


def _reachability_problems(nodes: Mapping[str, NodeSpec], edges: Mapping[str, Target]) -> list[str]:
    forward: dict[str, list[str]] = {source: _targets(t) for source, t in edges.items()}
    reached = _closure([START], forward)
    backward: dict[str, list[str]] = {}
    for source, targets in forward.items():
        for name in targets:
            backward.setdefault(name, []).append(source)
    finishing = _closure([END], backward)
    problems = [f"node {name!r} is unreachable from START" for name in nodes if name not in reached]
    problems += [
        f"node {name!r} cannot reach END" + ("" if name in edges else " (it has no outgoing edge)")
        for name in nodes
        if name in reached and name not in finishing
    ]
    return problems


def _closure(roots: list[str], adjacency: Mapping[str, list[str]]) -> set[str]:
    seen = set(roots)
    pending = list(roots)
    while pending:
        for name in adjacency.get(pending.pop(), ()):
            if name not in seen:
                seen.add(name)
                pending.append(name)
    return seen
