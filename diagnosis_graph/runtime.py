"""The compiled graph: the step loop, updates, routing, recursion limit and events."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .config import RunConfig
from .errors import GraphRecursionError, InvalidRouteError, InvalidUpdateError, NodeError
from .frozen import thaw
from .graph import END, START, Branch, NodeSpec, Target
from .mermaid import render_mermaid
from .state import Reducer, Replace
from .view import StateView, as_plain

_DEFAULT_CONFIG = RunConfig()


@dataclass
class RunResult:
    """Outcome of :meth:`CompiledGraph.run`: final state, steps taken, items dropped per key."""

    state: dict[str, Any]
    steps: int
    dropped: dict[str, int] = field(default_factory=dict)


class _Run:
    """The bookkeeping of one execution.

    ``values`` is replaced (copied, then changed) by every update, so each :class:`StateView`
    keeps the snapshot it was made from; ``cache`` holds frozen copies of values already read.
    """

    __slots__ = ("cache", "dropped", "step", "values")

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values
        self.cache: dict[str, tuple[Any, Any]] = {}
        self.step = 0
        self.dropped: dict[str, int] = {}

    def snapshot(self) -> dict[str, Any]:
        """A plain deep copy of the state so far, for errors carrying the partial state."""
        return {key: thaw(value) for key, value in self.values.items()}


class CompiledGraph:
    """An executable, validated graph. Safe to share between threads and runs."""

    def __init__(
        self,
        schema: Mapping[str, Reducer],
        nodes: Mapping[str, NodeSpec],
        edges: Mapping[str, Target],
    ) -> None:
        self.schema = dict(schema)
        self.nodes = {name: (spec.fn, spec.takes_config) for name, spec in nodes.items()}
        self.specs = dict(nodes)
        self.edges = dict(edges)
        # Keys whose reducer is plain Replace are written inline, without a method call.
        self._replace_keys = frozenset(k for k, r in self.schema.items() if type(r) is Replace)
        self._known_keys = frozenset(self.schema)
        # Router mappings as plain dicts: the step loop looks a key up on every routed step.
        self._routes = {
            name: (edge.router, dict(edge.mapping))
            for name, edge in self.edges.items()
            if isinstance(edge, Branch)
        }
        self._merge_keys = tuple(k for k in self.schema if k not in self._replace_keys)

    def invoke(
        self, state: Mapping[str, Any] | None = None, config: RunConfig | None = None
    ) -> dict[str, Any]:
        """Run to END and return the final state as plain, JSON-friendly dicts and lists."""
        return self.run(state, config).state

    def run(
        self,
        state: Mapping[str, Any] | None = None,
        config: RunConfig | None = None,
        *,
        on_step: Callable[[dict[str, Any]], None] | None = None,
    ) -> RunResult:
        """Run to END and return a :class:`RunResult` (state, step count, dropped items).

        ``on_step``, when given, is called with each stream event as it happens (an observer:
        what it returns is ignored; what it raises stops the run).
        """
        run = self._start(state)
        for node, step, update, target in self._steps(run, config or _DEFAULT_CONFIG):
            if on_step is not None:
                on_step({"node": node, "step": step, "update": dict(update or {}), "next": target})
        return RunResult(as_plain(run.values), run.step, run.dropped)

    def stream(
        self, state: Mapping[str, Any] | None = None, config: RunConfig | None = None
    ) -> Iterator[dict[str, Any]]:
        """Yield one plain-dict event per node execution, as it completes.

        Each event is ``{"node", "step", "update", "next"}``: the node that ran, the step number
        it completed (1-based), the update it returned (``{}`` for None) and the node that runs
        next (``END`` after the last).
        """
        run = self._start(state)
        for node, step, update, target in self._steps(run, config or _DEFAULT_CONFIG):
            yield {"node": node, "step": step, "update": dict(update or {}), "next": target}

    def to_mermaid(self, taken: Iterable[tuple[str, str]] = ()) -> str:
        """Render the graph as a Mermaid flowchart (conditional edges labelled with keys).

        ``taken``: ``(from, to)`` pairs of a run's route, drawn highlighted.
        """
        return render_mermaid(self.specs, self.edges, taken)

    def _start(self, state: Mapping[str, Any] | None) -> _Run:
        run = _Run({key: reducer.initial() for key, reducer in self.schema.items()})
        if state:
            self._apply(run, START, state)
        return run

    def _steps(self, run: _Run, config: RunConfig) -> Iterator[tuple[str, int, Any, str]]:
        # The hot loop of every run: locals only, one dict copy and one view per update.
        limit = config.recursion_limit
        nodes, edges, cache, replace_keys = self.nodes, self.edges, run.cache, self._replace_keys
        routes = self._routes
        view = StateView(run.values, cache)
        target = self._route(run, START, edges[START], view)
        while target != END:
            if run.step >= limit:
                raise GraphRecursionError(
                    f"recursion limit of {limit} reached: {run.step} steps ran and node "
                    f"{target!r} was next",
                    node=target,
                    step=run.step,
                    state=run.snapshot(),
                )
            node = target
            fn, takes_config = nodes[node]
            run.step += 1
            try:
                update = fn(view, config) if takes_config else fn(view)
            except Exception as exc:
                raise NodeError(
                    f"node {node!r} raised {type(exc).__name__}: {exc}",
                    node=node,
                    step=run.step,
                    state=run.snapshot(),
                    original=exc,
                ) from exc
            if update:
                if type(update) is dict and replace_keys.issuperset(update):
                    run.values = {**run.values, **update}
                else:
                    self._apply(run, node, update)
                view = StateView(run.values, cache)
            elif update is not None:
                self._apply(run, node, update)
            edge = edges[node]
            if type(edge) is str:
                target = edge
            else:
                router, mapping = routes[node]
                try:  # the hot path; _route re-asks a (pure) router only to report a fault
                    target = mapping[router(view)]
                except Exception:
                    target = self._route(run, node, edge, view)
            yield node, run.step, update, target

    def _apply(self, run: _Run, node: str, update: Any) -> None:
        if type(update) is not dict and not isinstance(update, Mapping):
            raise self._update_error(
                run,
                node,
                f"returned {type(update).__name__}; a node returns a dict of state updates or None",
            )
        schema = self.schema
        if not self._known_keys.issuperset(update):
            unknown = next(key for key in update if key not in schema)
            raise self._update_error(
                run,
                node,
                f"wrote unknown state key {unknown!r}; declared keys: {', '.join(sorted(schema))}",
            )
        before = run.values
        values = {**before, **update}
        for key in self._merge_keys:
            if key not in update:
                continue
            try:
                values[key], dropped = schema[key].merge(before[key], update[key])
            except TypeError as exc:
                raise self._update_error(
                    run, node, f"wrote an invalid value to state key {key!r}: {exc}"
                ) from exc
            if dropped:
                run.dropped[key] = run.dropped.get(key, 0) + dropped
        run.values = values

    @staticmethod
    def _update_error(run: _Run, node: str, problem: str) -> InvalidUpdateError:
        return InvalidUpdateError(
            f"node {node!r} {problem}", node=node, step=run.step, state=run.snapshot()
        )

    @staticmethod
    def _route(run: _Run, node: str, target: Target, view: StateView) -> str:
        if type(target) is str:
            return target
        assert isinstance(target, Branch)
        try:
            key = target.router(view)
        except Exception as exc:
            raise NodeError(
                f"router after node {node!r} raised {type(exc).__name__}: {exc}",
                node=node,
                step=run.step,
                state=run.snapshot(),
                original=exc,
            ) from exc
        try:
            return target.mapping[key]
        except (KeyError, TypeError):
            raise InvalidRouteError(
                f"router after node {node!r} returned {key!r}, which is not one of "
                f"{sorted(target.mapping)}",
                node=node,
                step=run.step,
                state=run.snapshot(),
            ) from None
