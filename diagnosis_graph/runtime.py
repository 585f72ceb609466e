"""The compiled graph: the step loop, updates, routing, recursion limit and events."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .config import RunConfig
from .errors import GraphRecursionError, InvalidRouteError, InvalidUpdateError, NodeError
from .frozen import _FROZEN, RUN_OWNED, FrozenDict, FrozenList, freeze, freeze_new, thaw
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
        # What the step loop's one lookup per written key tells it: None for a plain Replace key
        # (written inline), the bound of an Append key (sys.maxsize for none: the in-place
        # append is inlined too), 0 for any other reducer (merged by _merge_key). A key missing
        # here is not declared.
        self._write_kinds: dict[str, int | None] = {
            k: None
            if type(r) is Replace
            else (sys.maxsize if r.max_len is None else r.max_len)
            if type(r) is Append
            else 0
            for k, r in self.schema.items()
        }
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
        values, node, dropped = self._start(state)
        values = self._advance(values, node, 0, dropped, config or _DEFAULT_CONFIG, None, False)[0]
        return as_plain(values)

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
        values, node, dropped = self._start(state)
        values, node, step = self._advance(
            values, node, 0, dropped, config or _DEFAULT_CONFIG, on_step, False
        )
        return RunResult(as_plain(values), step, dropped)

    def stream(
        self, state: Mapping[str, Any] | None = None, config: RunConfig | None = None
    ) -> Iterator[dict[str, Any]]:
        """Yield one plain-dict event per node execution, as it completes.

        Each event is ``{"node", "step", "update", "next"}``: the node that ran, the step number
        it completed (1-based), the update it returned (``{}`` for None) and the node that runs
        next (``END`` after the last).
        """
        values, node, dropped = self._start(state)
        config = config or _DEFAULT_CONFIG
        events: list[dict[str, Any]] = []
        step = 0
        while node != END:
            values, node, step = self._advance(
                values, node, step, dropped, config, events.append, True
            )
            yield events.pop()

    def to_mermaid(self, taken: Iterable[tuple[str, str]] = ()) -> str:
        """Render the graph as a Mermaid flowchart (conditional edges labelled with keys).

        ``taken``: ``(from, to)`` pairs of a run's route, drawn highlighted.
        """
        return render_mermaid(self.specs, self.edges, taken)

    def _start(self, state: Mapping[str, Any] | None) -> tuple[dict[str, Any], str, dict[str, int]]:
        """A run's initial state (input applied), its first node and its drop counts."""
        values = self._shared_initial.copy()
        for key in self._fresh_lists:  # Append.initial(): a new empty list of this run
            fresh = FrozenList()
            fresh._source = RUN_OWNED
            values[key] = fresh
        for key, reducer in self._fresh_initial:
            values[key] = freeze_new(reducer.initial())
        dropped: dict[str, int] = {}
        if state:
            if type(state) is dict and self._replace_keys.issuperset(state):
                for key, value in state.items():  # the common input, inlined: see _apply
                    if type(value) is dict:  # freeze() inlined
                        frozen = FrozenDict(value)
                        frozen._source = value
                        values[key] = frozen
                    else:
                        values[key] = value if type(value) in _FROZEN else freeze(value)
            else:
                view = StateView(values)
                values = self._apply(values, view, dropped, START, 0, state)[0]
        fixed, router, mapping = self._start_plan
        if fixed is not None:
            return values, fixed, dropped
        view = StateView(values)
        first = _route(view, START, 0, router, mapping)
        if _getrefcount(view) != _VIEW_REFS:
            values = values.copy()  # the router kept its view: it stays as it was
        return values, first, dropped

    def _advance(
        self,
        values: dict[str, Any],
        node: str,
        step: int,
        dropped: dict[str, int],
        config: RunConfig,
        on_step: _OnStep | None,
        single: bool,
    ) -> tuple[dict[str, Any], str, int]:
        """Run steps from ``node`` to END (only one if ``single``); return the state, the next
        node and the number of steps run so far.

        The hot loop of every run: locals only, the common update inlined. The view over
        ``values`` lives in the local ``view`` alone while the loop runs, so that a reference
        count of one local means no node or router kept it (see above) and ``values`` is then
        written in place.
        """
        limit = config.recursion_limit
        plans, kinds = self._plans, self._write_kinds
        frozen, list_extend, list_delete, view_type = (
            _FROZEN,
            list.extend,
            list.__delitem__,
            StateView,
        )
        getrefcount, view_refs, list_refs = _getrefcount, _VIEW_REFS, _LIST_REFS
        view = view_type(values)
        # One iteration per step, up to the recursion limit (one step only if ``single``).
        first = step + 1
        last = first - 1 if node == END else min(limit, first) if single else limit
        for step in range(first, last + 1):
            fn, takes_config, fixed, router, mapping = plans[node]
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
            if type(update) is dict:
                if getrefcount(view) != view_refs:
                    values = values.copy()  # a kept view stays as it was
                    view = view_type(values)
                try:
                    for key, value in update.items():
                        bound = kinds[key]  # KeyError: an undeclared key
                        if bound is None:  # plain Replace
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
                        elif bound:  # Append
                            current = values[key]
                            if type(value) is list and getrefcount(current) == list_refs:
                                # The common append, in place (items are frozen when read).
                                list_extend(current, value)
                                if len(current) > bound:
                                    dropped[key] = dropped.get(key, 0) + len(current) - bound
                                    list_delete(current, slice(0, len(current) - bound))
                                del current  # so that the next check sees the list's own count
                            else:
                                del current  # (as above, for the check in _merge_key)
                                self._merge_key(values, dropped, key, value, node, step)
                        else:
                            self._merge_key(values, dropped, key, value, node, step)
                except KeyError:
                    if key in kinds:  # raised by a reducer, not by the lookup
                        raise
                    raise self._unknown_key(values, node, step, key) from None
            elif update is not None:
                values, view = self._apply(values, view, dropped, node, step, update)
            if fixed is not None:
                ran, node = node, fixed
            else:
                ran = node
                try:
                    node = mapping[router(view)]  # type: ignore[index,misc]
                except Exception:  # ask again, to report the fault (routers are pure)
                    node = _route(view, ran, step, router, mapping)
            if on_step is not None:
                on_step({"node": ran, "step": step, "update": dict(update or {}), "next": node})
            if node == END:
                break
        else:  # the limit was reached (in single steps: before this call)
            if node != END and (not single or first > limit):
                raise GraphRecursionError(
                    f"recursion limit of {limit} reached: {step} steps ran and node "
                    f"{node!r} was next",
                    node=node,
                    step=step,
                    state=_snapshot(values),
                )
        if getrefcount(view) != view_refs:
            values = values.copy()  # the last view was kept: later steps must not change it
        return values, node, step

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
