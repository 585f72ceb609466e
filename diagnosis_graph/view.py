"""The read-only view of state that nodes and routers receive, and the caller's final state."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from .frozen import RUN_OWNED, FrozenDict, FrozenList, unfreeze

#: What nodes and routers receive: a read-only mapping of every declared key to its frozen
#: value. It is a ``types.MappingProxyType`` over a plain dict only the engine holds, so a node
#: cannot write to it (no ``__setitem__``, ``pop``, ``update``...), reading a key is a C-speed
#: dict lookup, and the engine writes an update into the dict at C speed. A view is a snapshot:
#: the engine writes into the dict only while nothing but the engine holds the view, and gives
#: the next step a copy otherwise (see :mod:`diagnosis_graph.runtime`).
StateView = MappingProxyType
_list_copy = list.copy


def as_plain(values: dict[str, Any]) -> dict[str, Any]:
    """Turn the engine's dict of a finished run (no view of it left) into the caller-facing
    final state, in place, and return it: each value as it was written.

    A value a node or the caller wrote comes back as that very object, and so do the items
    appended to an append-only list (a plain list the engine makes); what the engine made
    otherwise (defaults) comes back as plain dicts and lists. A frozen container a node copied
    into its own output (or appended) from a view stays a (JSON-serialisable) read-only
    dict/list subclass.
    """
    frozen_dict, frozen_list = FrozenDict, FrozenList
    # Identity tests rather than a set's (cheaper), and one ``_source`` read per type, so that
    # each read is specialised for its type's slot.
    for key, value in values.items():  # replacing values of existing keys is allowed here
        kind = type(value)
        if kind is frozen_dict:
            try:
                source = value._source
            except AttributeError:  # a frozen value some node made itself
                source = None
            values[key] = source if source is not None else unfreeze(value)
        elif kind is frozen_list:
            try:
                source = value._source
            except AttributeError:
                source = None
            if source is RUN_OWNED:  # what nodes appended: each item as written
                values[key] = _list_copy(value)
            else:
                values[key] = source if source is not None else unfreeze(value)
    return values
