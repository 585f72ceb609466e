"""The compiled graph: the step loop, updates, routing, recursion limit, events and checkpoints.

The engine holds a run's state in a dict that only it writes. Nodes and routers read it through
a ``types.MappingProxyType``, a read-only view that refuses every write to the mapping itself
(assignment, deletion, ``update``...); append-only keys hold tuples, so nothing can be appended
behind the engine's back either. The view is shallow: a nested dict or list written with
:class:`~diagnosis_graph.state.Replace` is the very object that was written, so a node must treat
it as read-only and return an update instead. Each step's update goes into a new dict, so a view
kept past its step keeps showing the state of that step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .checkpoint import Checkpoint, Checkpointer
from .config import RunConfig
from .errors import (
    CheckpointError,
    GraphRecursionError,
    GraphRuntimeError,
    InvalidRouteError,
    InvalidUpdateError,
    NodeError,
)
from .graph import END, START, Branch, NodeFn, Target
from .mermaid import render_mermaid
from .state import Append, Reducer

_DEFAULT_CONFIG = RunConfig()
State = Mapping[str, Any]
Event = dict[str, Any]
OnStep = Callable[[Event], None] | None


@dataclass
class RunResult:
    """Outcome of :meth:`CompiledGraph.run`: final state, steps taken, items dropped per key."""

    state: dict[str, Any]
    steps: int
    dropped: dict[str, int] = field(default_factory=dict)


class CompiledGraph:
    """An executable, validated graph. Safe to share between threads and runs.

    ``nodes`` maps each node name to ``(fn, takes_config)`` and is read at every step, so
    replacing an entry (to instrument a node) takes effect from the next step on.
    """

    def __init__(
        self,
        schema: Mapping[str, Reducer],
        nodes: Mapping[str, tuple[NodeFn, bool]],
        edges: Mapping[str, Target],
        checkpointer: Checkpointer | None = None,
    ) -> None:
        self.schema, self.nodes, self.edges = dict(schema), dict(nodes), dict(edges)
        self.checkpointer = checkpointer
        self._list_keys = frozenset(k for k, r in self.schema.items() if isinstance(r, Append))

    def invoke(self, state: State | None, config: RunConfig | None = None) -> dict[str, Any]:
        """Run to END and return the final state as plain dicts and lists.

        ``state`` is a fresh run's input (``{}``: the defaults). ``None`` resumes the thread
        ``config.thread_id`` after its latest checkpoint; with none to resume, ``ValueError``.
        """
        return self.run(state, config).state

    def run(
        self, state: State | None, config: RunConfig | None = None, *, on_step: OnStep = None
    ) -> RunResult:
        """Run as :meth:`invoke` does; ``on_step(event)`` observes each event (and may stop
        the run by raising). ``dropped`` counts what bounded keys dropped during this call."""
        result = RunResult({}, 0)
        for ran, step, update, after in self._execute(state, config or _DEFAULT_CONFIG, result):
            if on_step is not None:
                on_step(_event(ran, step, update, after))
        return result

    def stream(self, state: State | None, config: RunConfig | None = None) -> Iterator[Event]:
        """Yield ``{"node", "step", "update", "next"}`` per node execution, as it completes.

        ``step`` is 1-based (continuing a resumed run's count), ``update`` is what the node
        returned (``{}`` for None) and ``next`` the node that runs next (``END`` after the last).
        """
        for fields in self._execute(state, config or _DEFAULT_CONFIG, RunResult({}, 0)):
            yield _event(*fields)

    def to_mermaid(self, taken: Iterable[tuple[str, str]] = ()) -> str:
        """Render the graph as a Mermaid flowchart; ``taken`` ``(from, to)`` pairs highlighted."""
        return render_mermaid(self.nodes, self.edges, taken)

    def _execute(
        self, state: State | None, config: RunConfig, result: RunResult
    ) -> Iterator[tuple[str, int, Any, str]]:
        """The step loop: yield each node execution's (node, step, update, next node); fill in
        ``result`` as it goes."""
        if self.checkpointer is not None and config.thread_id is None:
            raise ValueError("a graph compiled with a checkpointer needs RunConfig(thread_id=...)")
        step, node = 0, START
        if state is None:
            saved = self._latest(config.thread_id)
            step, node, state = saved.step, saved.node, saved.state
        initial = {key: reducer.initial() for key, reducer in self.schema.items()}
        values = self._apply(initial, START, step, state, result.dropped)
        view = MappingProxyType(values)
        node = self._next(node, view, step)
        while node != END:
            if step >= config.recursion_limit:
                message = f"recursion limit of {config.recursion_limit} reached; {node!r} was next"
                raise self._stop(GraphRecursionError, message, node, step, values)
            step += 1
            fn, takes_config = self.nodes[node]
            try:
                update = fn(view, config) if takes_config else fn(view)
            except Exception as exc:
                message = f"node {node!r} raised {type(exc).__name__}: {exc}"
                raise self._stop(NodeError, message, node, step, values) from exc
            if update is not None:
                values = self._apply(values, node, step, update, result.dropped)
                view = MappingProxyType(values)
            if self.checkpointer is not None:
                self._save(config, node, step, values)
            ran, node = node, self._next(node, view, step)
            yield ran, step, update, node
        result.state, result.steps = self._plain(values), step

    def _latest(self, thread: str | None) -> Checkpoint:
        if self.checkpointer is None or thread is None:
            raise ValueError("no state to start from, and no checkpointer to resume from")
        saved = self.checkpointer.latest(thread)
        if saved is None:
            raise ValueError(f"thread {thread!r} has no checkpoint to resume from")
        if saved.node not in self.nodes:
            raise ValueError(f"thread {thread!r} stopped at unknown node {saved.node!r}")
        return saved

    def _apply(
        self, values: dict[str, Any], node: str, step: int, update: Any, dropped: dict[str, int]
    ) -> dict[str, Any]:
        """Return a new state: ``values`` with ``update`` merged by each key's reducer (the one
        place the state changes: the input, a resumed checkpoint and every node's update)."""
        if type(update) is not dict and not isinstance(update, Mapping):
            kind = type(update).__name__
            message = f"node {node!r} returned {kind}; a node returns a dict of updates or None"
            raise self._stop(InvalidUpdateError, message, node, step, values)
        new, schema = values.copy(), self.schema
        for key, value in update.items():
            reducer = schema.get(key)
            if reducer is None:
                declared = ", ".join(sorted(schema))
                message = f"node {node!r} wrote unknown state key {key!r}; declared: {declared}"
                raise self._stop(InvalidUpdateError, message, node, step, values)
            current = values[key]
            try:
                new[key] = merged = reducer.merge(current, value)
            except (TypeError, ValueError) as exc:
                message = f"node {node!r} wrote an invalid value to state key {key!r}: {exc}"
                raise self._stop(InvalidUpdateError, message, node, step, values) from exc
            if reducer.max_len is not None and len(current) + len(value) > len(merged):
                dropped[key] = dropped.get(key, 0) + len(current) + len(value) - len(merged)
        return new

    def _next(self, node: str, view: State, step: int) -> str:
        """The node after ``node``: its edge, or ``mapping[router(view)]``."""
        target = self.edges[node]
        if not isinstance(target, Branch):
            return target
        try:
            key = target.router(view)
        except Exception as exc:
            message = f"router after node {node!r} raised {type(exc).__name__}: {exc}"
            raise self._stop(NodeError, message, node, step, view) from exc
        try:
            return target.mapping[key]
        except (KeyError, TypeError):
            mapping = sorted(target.mapping)
            message = f"router after node {node!r} returned {key!r}, which is not one of {mapping}"
            raise self._stop(InvalidRouteError, message, node, step, view) from None

    def _save(self, config: RunConfig, node: str, step: int, values: dict[str, Any]) -> None:
        assert self.checkpointer is not None and config.thread_id is not None
        try:
            self.checkpointer.put(config.thread_id, step, node, self._plain(values))
        except Exception as exc:
            message = f"checkpointer failed after node {node!r}: {type(exc).__name__}: {exc}"
            raise self._stop(CheckpointError, message, node, step, values) from exc

    def _plain(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The state as the caller gets it: a new dict, append-only keys as new lists."""
        plain = dict(values)
        for key in self._list_keys:
            plain[key] = list(plain[key])
        return plain

    def _stop(
        self, kind: type[GraphRuntimeError], message: str, node: str, step: int, values: State
    ) -> GraphRuntimeError:
        return kind(message, node=node, step=step, state=self._plain(values))


def _event(node: str, step: int, update: Any, after: str) -> Event:
    return {"node": node, "step": step, "update": dict(update or {}), "next": after}
