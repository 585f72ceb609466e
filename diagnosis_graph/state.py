"""State keys and their reducers.

A graph's schema maps every state key to a reducer that says how a node's update is merged into
the current value: :class:`Replace` (the update wins) or :class:`Append` (list concatenation,
optionally bounded). Values are frozen on write (see :mod:`diagnosis_graph.frozen`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .frozen import freeze


class Reducer:
    """Base class of state-key reducers."""

    __slots__ = ()

    def initial(self) -> Any:
        """Return the value the key holds before any input or update."""
        raise NotImplementedError

    def merge(self, current: Any, update: Any) -> tuple[Any, int]:
        """Return the new (frozen) value and how many items were dropped to respect a bound."""
        raise NotImplementedError

    def describe(self) -> str:
        """Return a short human-readable description of the reducer."""
        return type(self).__name__


class Replace(Reducer):
    """The last written value wins. ``default`` (or ``default_factory()``) is the initial value.

    A written value is stored as is and belongs to the run from then on: the writer must not
    mutate it afterwards. Readers always get a read-only deep copy.
    """

    __slots__ = ("_default", "_factory")

    def __init__(
        self, default: Any = None, *, default_factory: Callable[[], Any] | None = None
    ) -> None:
        self._default = freeze(default)
        self._factory = default_factory

    def initial(self) -> Any:
        return self._factory() if self._factory is not None else self._default

    def merge(self, current: Any, update: Any) -> tuple[Any, int]:
        # Stored as written; readers get a frozen copy (see StateView).
        return update, 0

    def __repr__(self) -> str:
        return f"Replace(default={self._default!r})"


class Append(Reducer):
    """List concatenation. With ``max_len`` only the newest items are kept and drops are counted.

    The stored list is new after every write, so earlier snapshots keep their length; readers
    get read-only items, frozen incrementally as the list grows (see StateView).

    An update must be a list or tuple of items; appending a single item means returning
    ``[item]``.
    """

    __slots__ = ("max_len",)

    def __init__(self, max_len: int | None = None) -> None:
        if max_len is not None and (not isinstance(max_len, int) or max_len < 1):
            raise ValueError("Append(max_len=...) must be a positive integer or None")
        self.max_len = max_len

    def initial(self) -> Any:
        return []

    def merge(self, current: Any, update: Any) -> tuple[Any, int]:
        if type(update) is not list and not isinstance(update, (list, tuple)):
            raise TypeError(f"an Append key takes a list of items, got {type(update).__name__}")
        combined = [*current, *update]
        if self.max_len is None or len(combined) <= self.max_len:
            return combined, 0
        dropped = len(combined) - self.max_len
        return combined[dropped:], dropped

    def describe(self) -> str:
        return "Append" if self.max_len is None else f"Append(max_len={self.max_len})"

    def __repr__(self) -> str:
        return f"Append(max_len={self.max_len!r})"
