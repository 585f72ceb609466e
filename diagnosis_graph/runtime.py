"""The compiled graph: the step loop, updates, routing, recursion limit and events."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .config import RunConfig
from .errors import GraphRecursionError, InvalidRouteError, InvalidUpdateError, NodeError
from .frozen import _FROZEN, FrozenDict, FrozenList, freeze, freeze_new, owned_list, thaw
from .graph import END, START, Branch, NodeFn, NodeSpec, Router, Target
from .mermaid import render_mermaid
from .state import Append, Reducer, Replace
from .view import StateView, as_plain

_DEFAULT_CONFIG = RunConfig()

#: What a node compiles to: its function, whether it takes the config, and its way out - a
#: fixed next node, or a router and its mapping (``None`` where it does not apply).
_Plan = tuple[NodeFn, bool, str | None, Router | None, Mapping[Any, str] | None]
_OnStep = Callable[[dict[str, Any]], None]


@dataclass
class RunResult:
    """Outcome of :meth:`CompiledGraph.run`: final state, steps taken, items dropped per key."""

    state: dict[str, Any]
    steps: int
    dropped: dict[str, int] = field(default_factory=dict)


class _NodeTable(dict[str, tuple[NodeFn, bool]]):
    """``name -> (fn, takes_config)``; replacing an entry (to instrument a node) updates the plan
    the step loop reads, so a wrapped node runs from the next run on."""

    def __init__(self, plans: dict[str, _Plan]) -> None:
        super().__init__({name: plan[:2] for name, plan in plans.items()})
        self._plans = plans

    def __setitem__(self, name: str, entry: tuple[NodeFn, bool]) -> None:
        if name not in self:
            raise KeyError(f"no node {name!r} to replace")
        fn, takes_config = entry
        super().__setitem__(name, (fn, takes_config))
        self._plans[name] = (fn, takes_config, *self._plans[name][2:])


class _Run:
    """One execution between calls of the step loop: its state (the engine's dict and the
    read-only view over it), next node, step count, drops."""

    __slots__ = ("dropped", "node", "state", "step", "view")

    def __init__(
        self, state: dict[str, Any], view: StateView[str, Any], node: str, dropped: dict[str, int]
    ) -> None:
        self.state = state
        self.view = view
        self.node = node
        self.step = 0
        self.dropped = dropped


# Updating in place without breaking snapshots. Every view a node or router was given must keep
# showing the state of its step, yet copying the state (or an append-only list in it) for every
# update makes a step cost grow with the state. So the engine writes an update into the dict
# under the current view, and extends an append-only list, in place exactly when nothing but the
# engine can see it: when the view is referenced only by the step loop's local variable (the
# dict is reachable only through the view, which never hands it out), and the list only by the
# dict and a local. A node or router that kept the view, the list, or an older view holding the
# list adds a reference, and then the dict (with a new view) or the list is copied first
# (copy-on-write). CPython's reference counts tell exactly that - the check CPython itself makes
# to concatenate strings in place. The counts are measured once here, so the check follows the
# interpreter's own counting; an interpreter without ``sys.getrefcount`` always copies.
def _no_refcount(value: object) -> int:
    return 0


_getrefcount: Callable[[Any], int] = getattr(sys, "getrefcount", _no_refcount)


def _local_refs() -> int:
    """What ``getrefcount`` reports for an object held by one local variable only."""
    value = FrozenList()
    return _getrefcount(value) if _getrefcount is not _no_refcount else -1


def _slot_refs() -> int:
    """What ``getrefcount`` reports for an object held by one dict slot and one local."""
    box = {"key": FrozenList()}
    value = box["key"]
    return _getrefcount(value) if _getrefcount is not _no_refcount else -1


_VIEW_REFS = _local_refs()
_LIST_REFS = _slot_refs()
_PLACEHOLDER: StateView[str, Any] = StateView({})  # a run's view while the loop holds it


class CompiledGraph:
    """An executable, validated graph. Safe to share between threads and runs."""

    def __init__(
        self,
        schema: Mapping[str, Reducer],
        nodes: Mapping[str, NodeSpec],
        edges: Mapping[str, Target],
    ) -> None:
        self.schema = dict(schema)
        self.specs = dict(nodes)
        self.edges = dict(edges)
        # Everything the step loop asks per node, resolved once: the loop does one lookup.
        self._plans: dict[str, _Plan] = {
            name: (spec.fn, spec.takes_config, *_way_out(edges[name]))
            for name, spec in nodes.items()
        }
        self.nodes = _NodeTable(self._plans)
        self._start_plan = _way_out(edges[START])
        self._known_keys = frozenset(self.schema)
        # Keys whose reducer is plain Replace are written inline, without a method call.
        self._replace_keys = frozenset(k for k, r in self.schema.items() if type(r) is Replace)
        # Append keys and their bounds, for the in-place append the step loop inlines.
        self._appends = {k: r.max_len for k, r in self.schema.items() if type(r) is Append}
        # Initial values: plain Replace defaults are frozen once and shared by every run; the
        # others (append-only lists, default factories) are made anew for each run.
        self._fresh_lists = tuple(k for k, r in self.schema.items() if type(r) is Append)
        self._fresh_initial = tuple(
            (k, r)
            for k, r in self.schema.items()
            if type(r) is not Append and (type(r) is not Replace or r.has_factory)
        )
        fresh = {*self._fresh_lists, *(k for k, _ in self._fresh_initial)}
        self._shared_initial = {
            k: freeze_new(r.initial()) for k, r in self.schema.items() if k not in fresh
        }

    def invoke(
        self, state: Mapping[str, Any] | None = None, config: RunConfig | None = None
    ) -> dict[str, Any]:
        """Run to END and return the final state as plain, JSON-friendly dicts and lists."""
        run = self._start(state)
        self._advance(run, config or _DEFAULT_CONFIG, None, False)
        return as_plain(run.state)

    def run(
        self,
        state: Mapping[str, Any] | None = None,
        config: RunConfig | None = None,
        *,
        on_step: _OnStep | None = None,
    ) -> RunResult:
        """Run to END and return a :class:`RunResult` (state, step count, dropped items).

        ``on_step``, when given, is called with each stream event as it happens (an observer:
        what it returns is ignored; what it raises stops the run).
        """
        run = self._start(state)
        self._advance(run, config or _DEFAULT_CONFIG, on_step, False)
        return RunResult(as_plain(run.state), run.step, run.dropped)

    def stream(
        self, state: Mapping[str, Any] | None = None, config: RunConfig | None = None
    ) -> Iterator[dict[str, Any]]:
        """Yield one plain-dict event per node execution, as it completes.

        Each event is ``{"node", "step", "update", "next"}``: the node that ran, the step number
        it completed (1-based), the update it returned (``{}`` for None) and the node that runs
        next (``END`` after the last).
        """
        run = self._start(state)
        config = config or _DEFAULT_CONFIG
        events: list[dict[str, Any]] = []
        while run.node != END:
            self._advance(run, config, events.append, True)
            yield events.pop()

    def to_mermaid(self, taken: Iterable[tuple[str, str]] = ()) -> str:
        """Render the graph as a Mermaid flowchart (conditional edges labelled with keys).

        ``taken``: ``(from, to)`` pairs of a run's route, drawn highlighted.
        """
        return render_mermaid(self.specs, self.edges, taken)

    def _start(self, state: Mapping[str, Any] | None) -> _Run:
        values = self._shared_initial.copy()
        for key in self._fresh_lists:  # Append.initial(): a new empty list of this run
            values[key] = owned_list()
        for key, reducer in self._fresh_initial:
            values[key] = freeze_new(reducer.initial())
        view = StateView(values)
        dropped: dict[str, int] = {}
        if state:
            values, view = self._apply(values, view, dropped, START, 0, state)
        fixed, router, mapping = self._start_plan
        first = fixed if fixed is not None else _route(view, START, 0, router, mapping)
        return _Run(values, view, first, dropped)

    def _advance(self, run: _Run, config: RunConfig, on_step: _OnStep | None, single: bool) -> None:
        """Run steps from ``run.node`` to END (only one if ``single``), then save the run.

        The hot loop of every run: locals only, the common update inlined. The view lives in
        the local ``view`` alone while the loop runs, so that a reference count of one local
        means no node or router kept it (see above); the engine's dict ``values`` under it is
        then written in place.
        """
        limit = config.recursion_limit
        plans, known, replace, appends = (
            self._plans,
            self._known_keys,
            self._replace_keys,
            self._appends,
        )
        frozen, list_extend, view_type = _FROZEN, list.extend, StateView
        getrefcount, view_refs, list_refs = _getrefcount, _VIEW_REFS, _LIST_REFS
        dropped = run.dropped
        values, view, node, step = run.state, run.view, run.node, run.step
        run.view = _PLACEHOLDER
        try:
            while node != END:
                if step >= limit:
                    raise GraphRecursionError(
                        f"recursion limit of {limit} reached: {step} steps ran and node "
                        f"{node!r} was next",
                        node=node,
                        step=step,
                        state=_snapshot(values),
                    )
                fn, takes_config, fixed, router, mapping = plans[node]
                step += 1
                try:
                    update = fn(view, config) if takes_config else fn(view)
                except Exception as exc:
                    raise NodeError(
                        f"node {node!r} raised {type(exc).__name__}: {exc}",
                        node=node,
                        step=step,
                        state=_snapshot(values),
                        original=exc,
                    ) from exc
                if type(update) is dict and update:
                    if getrefcount(view) != view_refs:
                        values = values.copy()  # a kept view stays as it was
                        view = view_type(values)
                    for key in update:
                        value = update[key]
                        if key in replace:
                            kind = type(value)
                            if kind in frozen:
                                values[key] = value
                            elif kind is dict:  # freeze() inlined for the common containers
                                frozen_dict = FrozenDict(value)
                                frozen_dict._source = value
                                values[key] = frozen_dict
                            elif kind is list:
                                frozen_list = FrozenList(value)
                                frozen_list._source = value
                                values[key] = frozen_list
                            else:
                                values[key] = freeze(value)
                            continue
                        if key not in known:
                            raise self._unknown_key(values, node, step, key)
                        current = values[key]
                        if (  # the common append, inlined: see _merge_key
                            type(value) is list
                            and type(current) is FrozenList
                            and key in appends
                            and getrefcount(current) == list_refs
                        ):
                            list_extend(current, value)  # items are frozen on first read
                            bound = appends[key]
                            if bound is not None and len(current) > bound:
                                dropped[key] = dropped.get(key, 0) + len(current) - bound
                                list.__delitem__(current, slice(0, len(current) - bound))
                        else:
                            self._merge_key(values, dropped, key, value, node, step)
                        del current
                elif update is not None and (update or type(update) is not dict):
                    values, view = self._apply(values, view, dropped, node, step, update)
                ran = node
                if fixed is not None:
                    node = fixed
                else:
                    try:
                        node = mapping[router(view)]  # type: ignore[index,misc]
                    except Exception:  # ask again, to report the fault (routers are pure)
                        node = _route(view, ran, step, router, mapping)
                if on_step is not None:
                    on_step({"node": ran, "step": step, "update": dict(update or {}), "next": node})
                if single:
                    break
        finally:
            run.state, run.view, run.node, run.step = values, view, node, step

    def _apply(
        self,
        values: dict[str, Any],
        view: StateView[str, Any],
        dropped: dict[str, int],
        node: str,
        step: int,
        update: Any,
    ) -> tuple[dict[str, Any], StateView[str, Any]]:
        """Validate and apply an update (the general path); return the dict and view it went
        into."""
        if type(update) is not dict and not isinstance(update, Mapping):
            raise _update_error(
                values,
                node,
                step,
                f"returned {type(update).__name__}; a node returns a dict of state updates or None",
            )
        if not self._known_keys.issuperset(update):
            unknown = next(key for key in update if key not in self.schema)
            raise self._unknown_key(values, node, step, unknown)
        # The caller's local, this parameter and getrefcount's argument: nobody else.
        if _getrefcount(view) != _VIEW_REFS + 1:
            values = values.copy()  # a kept view stays as it was
            view = StateView(values)
        for key, value in update.items():
            if key in self._replace_keys:
                values[key] = value if type(value) in _FROZEN else freeze(value)
            else:
                self._merge_key(values, dropped, key, value, node, step)
        return values, view

    def _unknown_key(
        self, values: dict[str, Any], node: str, step: int, key: Any
    ) -> InvalidUpdateError:
        declared = ", ".join(sorted(self.schema))
        return _update_error(
            values, node, step, f"wrote unknown state key {key!r}; declared keys: {declared}"
        )

    def _merge_key(
        self,
        values: dict[str, Any],
        dropped: dict[str, int],
        key: str,
        value: Any,
        node: str,
        step: int,
    ) -> None:
        """Merge one written value into a key whose reducer is not Replace."""
        reducer, current = self.schema[key], values[key]
        try:
            if (
                type(reducer) is Append
                and type(current) is FrozenList
                and _getrefcount(current) == _LIST_REFS
            ):
                merged, lost = current, reducer.extend(current, value)
            else:
                merged, lost = reducer.merge(current, value)
        except TypeError as exc:
            raise _update_error(
                values, node, step, f"wrote an invalid value to state key {key!r}: {exc}"
            ) from exc
        values[key] = merged if type(merged) in _FROZEN else freeze(merged)
        if lost:
            dropped[key] = dropped.get(key, 0) + lost


def _way_out(target: Target) -> tuple[str | None, Router | None, Mapping[Any, str] | None]:
    if isinstance(target, Branch):
        return None, target.router, dict(target.mapping)
    return target, None, None


def _route(
    values: StateView[str, Any],
    node: str,
    step: int,
    router: Router | None,
    mapping: Mapping[Any, str] | None,
) -> str:
    """The node after ``node``: ``mapping[router(values)]``, or an error naming the fault."""
    assert router is not None and mapping is not None
    try:
        key = router(values)
    except Exception as exc:
        raise NodeError(
            f"router after node {node!r} raised {type(exc).__name__}: {exc}",
            node=node,
            step=step,
            state=_snapshot(values),
            original=exc,
        ) from exc
    try:
        return mapping[key]
    except (KeyError, TypeError):
        raise InvalidRouteError(
            f"router after node {node!r} returned {key!r}, which is not one of {sorted(mapping)}",
            node=node,
            step=step,
            state=_snapshot(values),
        ) from None


def _snapshot(values: Mapping[str, Any]) -> dict[str, Any]:
    """A plain deep copy of the state so far, for errors carrying the partial state."""
    return {key: thaw(value) for key, value in values.items()}


def _update_error(
    values: Mapping[str, Any], node: str, step: int, problem: str
) -> InvalidUpdateError:
    return InvalidUpdateError(
        f"node {node!r} {problem}", node=node, step=step, state=_snapshot(values)
    )
