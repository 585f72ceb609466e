"""State keys and their reducers.

A graph's schema maps every state key to a reducer that says how a node's update is merged into
the current value: :class:`Replace` (the update wins) or :class:`Append` (list concatenation,
optionally bounded). Values are frozen on write (see :mod:`diagnosis_graph.frozen`), at a cost
that does not depend on their size.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .frozen import FrozenList, freeze_new, owned_list, thaw


class Reducer:
    """Base class of state-key reducers."""

    __slots__ = ()

    def initial(self) -> Any:
        """Return the value the key holds before any input or update."""
        raise NotImplementedError

    def merge(self, current: Any, update: Any) -> tuple[Any, int]:
        """Return the new value and how many items were dropped to respect a bound.

        ``current`` is read-only; the engine freezes the returned value.
        """
        raise NotImplementedError

    def describe(self) -> str:
        """Return a short human-readable description of the reducer."""
        return type(self).__name__


class Replace(Reducer):
    """The last written value wins. ``default`` (or ``default_factory()``) is the initial value.

    A written value belongs to the run from then on: the writer must not mutate it afterwards.
    Readers get a read-only version of it (frozen lazily, see :mod:`diagnosis_graph.frozen`);
    the final state hands back the very object written.
    """

    __slots__ = ("_default", "_factory")

    def __init__(
        self, default: Any = None, *, default_factory: Callable[[], Any] | None = None
    ) -> None:
        self._default = freeze_new(thaw(default))  # private, shared by runs, never written
        self._factory = default_factory

    @property
    def has_factory(self) -> bool:
        """Whether every run starts from a fresh ``default_factory()`` value."""
        return self._factory is not None

    def initial(self) -> Any:
        return self._factory() if self._factory is not None else self._default

    def merge(self, current: Any, update: Any) -> tuple[Any, int]:
        return update, 0

    def __repr__(self) -> str:
        return f"Replace(default={self._default!r})"


class Append(Reducer):
    """List concatenation. With ``max_len`` only the newest items are kept and drops are counted.

    An update must be a list or tuple of items; appending a single item means returning
    ``[item]``. Items are kept as written (the writer must not mutate them afterwards) and
    each read hands out a frozen version (see :data:`diagnosis_graph.frozen.RUN_OWNED`); the
    final state holds the very items written. The engine extends a run's list in place when no
    earlier view of the state can still see it, so appending is amortised O(1) per item and
    a bounded list costs O(max_len) per write however long the run; a view kept past its step
    still sees the list as it was (see :mod:`diagnosis_graph.runtime`).
    """

    __slots__ = ("max_len",)

    def __init__(self, max_len: int | None = None) -> None:
        if max_len is not None and (not isinstance(max_len, int) or max_len < 1):
            raise ValueError("Append(max_len=...) must be a positive integer or None")
        self.max_len = max_len

    def initial(self) -> Any:
        return []

    def merge(self, current: Any, update: Any) -> tuple[Any, int]:
        """Return a new list: ``current`` followed by the update's items (copying)."""
        combined = owned_list(list.__iter__(current))
        return combined, self.extend(combined, update)

    def extend(self, target: FrozenList, update: Any) -> int:
        """Append the update's items to ``target`` in place; return how many were dropped."""
        if type(update) is not list and not isinstance(update, (list, tuple)):
            raise TypeError(f"an Append key takes a list of items, got {type(update).__name__}")
        list.extend(target, update)
        if self.max_len is None or len(target) <= self.max_len:
            return 0
        dropped = len(target) - self.max_len
        list.__delitem__(target, slice(0, dropped))
        return dropped

    def describe(self) -> str:
        return "Append" if self.max_len is None else f"Append(max_len={self.max_len})"

    def __repr__(self) -> str:
        return f"Append(max_len={self.max_len!r})"
