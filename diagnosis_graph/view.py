"""The read-only view of state that nodes and routers receive."""

from __future__ import annotations

from typing import Any

from .frozen import FrozenDict, FrozenList, _read_only, unfreeze


class StateView(dict):  # type: ignore[type-arg]
    """Read-only state of one step: a dict of every declared key to its frozen value.

    Values are frozen when they are written (see :mod:`diagnosis_graph.frozen`), so reading a
    key is a plain dict lookup. A view is a snapshot: the engine makes a new one for every
    update, and an append-only list it extends in place is one no kept view can see (see
    :mod:`diagnosis_graph.runtime`).
    """

    __slots__ = ()
    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _read_only
    __ior__ = _read_only

    def to_dict(self) -> dict[str, Any]:
        """Return a plain dict of the (frozen) values, e.g. to merge or serialise."""
        return dict(self)

    def __copy__(self) -> StateView:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> StateView:
        return self

    def __repr__(self) -> str:
        return f"StateView({dict.__repr__(self)})"


_CONTAINERS = frozenset({FrozenDict, FrozenList})


def as_plain(values: StateView) -> dict[str, Any]:
    """Return the caller-facing final state: each value as it was written.

    A value a node or the caller wrote comes back as that very object; what the engine made
    itself (defaults, append-only lists) comes back as plain dicts and lists. A frozen container
    a node copied into its own output from a view stays a (JSON-serialisable) read-only
    dict/list subclass.
    """
    plain: dict[str, Any] = dict.copy(values)
    for key, value in plain.items():
        if type(value) in _CONTAINERS:
            try:
                source = value._source
            except AttributeError:  # a frozen value some node made itself
                source = None
            # A new value for an existing key: safe while iterating.
            plain[key] = source if source is not None else unfreeze(value)
    return plain
