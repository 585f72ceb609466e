"""State keys and their reducers: ``merge(current, update) -> new`` merges what a node wrote into
a key, :class:`Replace` (the update wins) or :class:`Append` (items added, optionally bounded)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Reducer:
    """Base class of reducers: ``initial()`` and the function ``merge(current, update) -> new``.

    A bounded reducer (``max_len`` set) keeps at most that many items; the engine counts what of
    ``current`` and ``update`` is not in the new value as dropped."""

    max_len: int | None = None

    def initial(self) -> Any:
        """Return the value the key holds before any input or update."""
        raise NotImplementedError

    def merge(self, current: Any, update: Any) -> Any:
        """Return the key's new value (without mutating ``current``)."""
        raise NotImplementedError


class Replace(Reducer):
    """The last written value wins. ``default`` (or ``default_factory()``) is the initial value.

    As for a dataclass field, a mutable (unhashable) default is refused, since every run would
    share it: pass ``default_factory=dict`` instead of ``default={}``.
    """

    def __init__(self, default: Any = None, *, default_factory: Callable[[], Any] | None = None):
        if type(default).__hash__ is None:
            raise ValueError(f"Replace(default={default!r}) is mutable: use default_factory")
        self.default, self.default_factory = default, default_factory

    def initial(self) -> Any:
        return self.default if self.default_factory is None else self.default_factory()

    def merge(self, current: Any, update: Any) -> Any:
        return update


class Append(Reducer):
    """Concatenation into a tuple; with ``max_len`` only the newest ``max_len`` items are kept.

    An update is a list or tuple of items (appending one item means writing ``[item]``). The
    value is a tuple, so a node cannot append behind the engine's back; the final state and
    checkpoints hold it as a list. A write copies the tuple: O(max_len), or O(length) unbounded.
    """

    def __init__(self, max_len: int | None = None) -> None:
        if max_len is not None and (type(max_len) is not int or max_len < 1):
            raise ValueError("Append(max_len=...) must be a positive integer or None")
        self.max_len = max_len

    def initial(self) -> tuple[Any, ...]:
        return ()

    def merge(self, current: Any, update: Any) -> tuple[Any, ...]:
        if not isinstance(update, (list, tuple)):
            raise TypeError(f"an Append key takes a list of items, got {type(update).__name__}")
        merged: tuple[Any, ...] = current + tuple(update)
        if self.max_len is not None and len(merged) > self.max_len:
            return merged[-self.max_len :]
        return merged
