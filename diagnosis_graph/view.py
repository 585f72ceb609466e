"""The read-only view of state that nodes and routers receive."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .frozen import _FROZEN, FrozenDict, FrozenList, freeze, freeze_extension, thaw


class StateView(Mapping[str, Any]):
    """Read-only state of one step.

    Values are deep-frozen on first read (dicts and lists become read-only subclasses of dict
    and list, so ``json.dumps`` and ``isinstance`` keep working) and the frozen copy is cached
    for the whole run, keyed by the identity of the stored value; values nobody reads are never
    copied. A view is a snapshot: later steps do not change what it shows.
    """

    __slots__ = ("_cache", "_values")

    def __init__(self, values: dict[str, Any], cache: dict[str, tuple[Any, Any]]) -> None:
        self._values = values
        self._cache = cache

    def __getitem__(self, key: str) -> Any:
        value = self._values[key]
        if type(value) in _FROZEN:
            return value
        hit = self._cache.get(key)
        if hit is not None:
            if hit[0] is value:
                return hit[1]
            frozen = freeze_extension(hit[0], hit[1], value)
            if frozen is None:
                frozen = freeze(value)
        else:
            frozen = freeze(value)
        self._cache[key] = (value, frozen)
        return frozen

    def get(self, key: str, default: Any = None) -> Any:
        """Return the frozen value of ``key``, or ``default`` when the key is not declared."""
        if key in self._values:
            return self[key]
        return default

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"StateView({dict(self)!r})"

    def to_dict(self) -> dict[str, Any]:
        """Return a plain dict of the (frozen) values, e.g. to merge or serialise."""
        return {key: self[key] for key in self._values}


def as_plain(values: Mapping[str, Any]) -> dict[str, Any]:
    """Return the caller-facing final state: frozen values (defaults) thawed.

    Values written by nodes are returned as written; a frozen container a node copied into its
    own output from a view stays a (JSON-serialisable) read-only dict/list subclass.
    """
    plain = dict(values)
    for key, value in values.items():
        if type(value) is FrozenList or type(value) is FrozenDict:
            plain[key] = thaw(value)
    return plain
