"""The compiled graph: the step loop, updates, routing, recursion limit and events."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .config import RunConfig
from .errors import GraphRecursionError, InvalidRouteError, InvalidUpdateError, NodeError
from .frozen import _FROZEN, FrozenList, freeze, freeze_new, thaw
from .graph import END, START, Branch, NodeSpec, Target
from .mermaid import render_mermaid
from .state import Append, Reducer, Replace
from .view import StateView, as_plain

_DEFAULT_CONFIG = RunConfig()


@dataclass
class RunResult:
    """Outcome of :meth:`CompiledGraph.run`: final state, steps taken, items dropped per key."""

    state: dict[str, Any]
    steps: int
    dropped: dict[str, int] = field(default_factory=dict)


class _Run:
    """The bookkeeping of one execution: the current view, the step count, dropped items."""

    __slots__ = ("dropped", "step", "values")

    def __init__(self, values: StateView) -> None:
        self.values = values
        self.step = 0
        self.dropped: dict[str, int] = {}

    def snapshot(self) -> dict[str, Any]:
        """A plain deep copy of the state so far, for errors carrying the partial state."""
        return {key: thaw(value) for key, value in dict.items(self.values)}


# Updating in place without breaking snapshots. Every view a node or router was given must keep
# showing the state of its step, yet copying the state (or an append-only list in it) for every
# update makes a step cost grow with the state. So the engine writes an update into the current
# view, and extends an append-only list, in place exactly when nothing but the engine can see
# it: when the view (or list) is referenced only by the run and by the local variable at hand.
# A node or router that kept the view, the list, or an older view holding the list adds a
# reference, and then the view or list is copied first (copy-on-write). CPython's reference
# counts tell exactly that - the check CPython itself makes to concatenate strings in place.
# ``_PRIVATE_REFS`` is what ``getrefcount`` reports for an object held in one slot and one local,
# measured once here so the check follows the interpreter's own counting; an interpreter
# without ``sys.getrefcount`` always copies.
_getrefcount: Callable[[Any], int] | None = getattr(sys, "getrefcount", None)


def _private_refs() -> int:
    if _getrefcount is None:
        return -1
    box = {"key": FrozenList()}
    value = dict.get(box, "key")
    return _getrefcount(value)


_PRIVATE_REFS = _private_refs()


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
        self._merge_key_set = frozenset(self._merge_keys)
        self._appends = {k: r.max_len for k, r in self.schema.items() if type(r) is Append}
        # Initial values: plain Replace defaults are frozen once and shared by every run; the
        # others (append-only lists, default factories) are made anew for each run.
        self._fresh_initial = tuple(
            k for k, r in self.schema.items() if type(r) is not Replace or r.has_factory
        )
        self._shared_initial = {
            k: freeze_new(r.initial())
            for k, r in self.schema.items()
            if k not in self._fresh_initial
        }

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
        values = StateView(self._shared_initial)
        for key in self._fresh_initial:
            dict.__setitem__(values, key, freeze_new(self.schema[key].initial()))
        run = _Run(values)
        if state:
            self._apply(run, START, state)
        return run

    def _steps(self, run: _Run, config: RunConfig) -> Iterator[tuple[str, int, Any, str]]:
        # The hot loop of every run: locals only. The view is read from ``run.values`` at each
        # use and never kept in a local, so that _apply can tell whether anyone else holds it.
        limit = config.recursion_limit
        nodes, edges, routes = self.nodes, self.edges, self._routes
        known_keys, merge_keys = self._known_keys, self._merge_key_set
        frozen, dict_set = _FROZEN, dict.__setitem__
        getrefcount, private_refs = _getrefcount, _PRIVATE_REFS
        dict_get, list_extend, appends = dict.get, list.extend, self._appends
        target = self._route(run, START, edges[START], run.values)
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
                update = fn(run.values, config) if takes_config else fn(run.values)
            except Exception as exc:
                raise NodeError(
                    f"node {node!r} raised {type(exc).__name__}: {exc}",
                    node=node,
                    step=run.step,
                    state=run.snapshot(),
                    original=exc,
                ) from exc
            if update:
                if type(update) is dict and known_keys.issuperset(update):
                    values = run.values
                    private = getrefcount is not None and getrefcount(values) == private_refs
                    if not private:
                        values = run.values = StateView(values)  # a kept view stays as it was
                    for key, value in update.items():
                        if key not in merge_keys:
                            dict_set(values, key, value if type(value) in frozen else freeze(value))
                            continue
                        current = dict_get(values, key)
                        if (  # the common append, inlined: see _merge_key
                            private
                            and type(value) is list
                            and type(current) is FrozenList
                            and key in appends
                            and getrefcount(current) == private_refs  # type: ignore[misc]
                        ):
                            items = [v if type(v) in frozen else freeze(v) for v in value]
                            list_extend(current, items)
                            bound = appends[key]
                            if bound is not None and len(current) > bound:
                                run.dropped[key] = run.dropped.get(key, 0) + len(current) - bound
                                list.__delitem__(current, slice(0, len(current) - bound))
                        else:
                            self._merge_key(values, private, run, key, value, node)
                        del current
                    del values
                else:
                    self._apply(run, node, update)
            elif update is not None:
                self._apply(run, node, update)
            edge = edges[node]
            if type(edge) is str:
                target = edge
            else:
                router, mapping = routes[node]
                try:  # the hot path; _route re-asks a (pure) router only to report a fault
                    target = mapping[router(run.values)]
                except Exception:
                    target = self._route(run, node, edge, run.values)
            yield node, run.step, update, target

    def _apply(self, run: _Run, node: str, update: Any) -> None:
        """Validate and apply an update (the general path; _steps inlines the common one)."""
        if type(update) is not dict and not isinstance(update, Mapping):
            raise self._update_error(
                run,
                node,
                f"returned {type(update).__name__}; a node returns a dict of state updates or None",
            )
        if not self._known_keys.issuperset(update):
            unknown = next(key for key in update if key not in self.schema)
            raise self._update_error(
                run,
                node,
                f"wrote unknown state key {unknown!r}; "
                f"declared keys: {', '.join(sorted(self.schema))}",
            )
        values = run.values
        private = _getrefcount is not None and _getrefcount(values) == _PRIVATE_REFS
        if not private:
            values = run.values = StateView(values)  # a kept view stays as it was
        self._merge_into(values, private, run, update, node)

    def _merge_into(
        self, values: StateView, private: bool, run: _Run, update: Any, node: str
    ) -> None:
        """Write ``update`` into ``values``, the run's view (only the engine's if ``private``)."""
        merge_keys = self._merge_key_set
        for key, value in update.items():
            if key in merge_keys:
                self._merge_key(values, private, run, key, value, node)
            else:
                dict.__setitem__(values, key, value if type(value) in _FROZEN else freeze(value))

    def _merge_key(
        self, values: StateView, private: bool, run: _Run, key: str, value: Any, node: str
    ) -> None:
        """Merge one written value into a key whose reducer is not Replace."""
        reducer, current = self.schema[key], dict.get(values, key)
        try:
            if (
                private
                and type(reducer) is Append
                and type(current) is FrozenList
                and _getrefcount(current) == _PRIVATE_REFS  # type: ignore[misc]
            ):
                merged, dropped = current, reducer.extend(current, value)
            else:
                merged, dropped = reducer.merge(current, value)
        except TypeError as exc:
            raise self._update_error(
                run, node, f"wrote an invalid value to state key {key!r}: {exc}"
            ) from exc
        dict.__setitem__(values, key, merged if type(merged) in _FROZEN else freeze(merged))
        if dropped:
            run.dropped[key] = run.dropped.get(key, 0) + dropped

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
