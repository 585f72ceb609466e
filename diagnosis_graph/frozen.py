"""Read-only containers for state values.

State values are frozen when they are written, so a node cannot corrupt the state of a run by
mutating what it was given. The frozen types subclass ``dict`` and ``list`` so ``isinstance``
checks, ``json.dumps`` and pydantic validation keep working on them; :func:`thaw` turns them
back into plain ``dict``/``list`` for the final state a caller receives.
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import is_
from typing import Any, NoReturn


def _read_only(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(
        f"graph state is read-only: return an update from the node instead of mutating "
        f"the {type(self).__mro__[1].__name__} it was given"
    )


class FrozenDict(dict):  # type: ignore[type-arg]
    """A dict that refuses mutation; shares its items safely between steps."""

    __slots__ = ()
    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _read_only
    __ior__ = _read_only

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenDict:
        return self


class FrozenList(list):  # type: ignore[type-arg]
    """A list that refuses mutation."""

    __slots__ = ()
    __setitem__ = __delitem__ = append = extend = insert = pop = remove = _read_only
    clear = sort = reverse = __iadd__ = __imul__ = _read_only

    def __copy__(self) -> FrozenList:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenList:
        return self


_SCALARS = frozenset({str, int, float, bool, type(None)})
_FROZEN = frozenset({FrozenDict, FrozenList}) | _SCALARS


def freeze(value: Any) -> Any:
    """Return ``value`` with every nested dict/list/tuple replaced by a frozen copy.

    Already-frozen values and scalars are shared, not copied; other objects are kept as they
    are (the engine cannot make arbitrary objects immutable).
    """
    kind = type(value)
    if kind in _FROZEN:
        return value
    if kind is list or kind is tuple:
        if _FROZEN.issuperset(map(type, value)):
            return FrozenList(value)
        return FrozenList([v if type(v) in _FROZEN else freeze(v) for v in value])
    if kind is dict or isinstance(value, Mapping):
        if _FROZEN.issuperset(map(type, value.values())):
            return FrozenDict(value)
        return FrozenDict({k: v if type(v) in _FROZEN else freeze(v) for k, v in value.items()})
    return value


def freeze_extension(old: list[Any], old_frozen: FrozenList, new: Any) -> FrozenList | None:
    """Freeze ``new`` reusing ``old_frozen`` when ``new`` is ``old`` plus appended items.

    Returns None when ``new`` does not start with exactly the objects of ``old``.
    """
    if type(new) is not list or len(new) < len(old) or not all(map(is_, new, old)):
        return None
    tail = [v if type(v) in _FROZEN else freeze(v) for v in new[len(old) :]]
    return FrozenList([*old_frozen, *tail])


def thaw(value: Any) -> Any:
    """Return a plain, mutable deep copy of a frozen value (other objects are returned as is)."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is FrozenDict or kind is dict:
        if _SCALARS.issuperset(map(type, value.values())):
            return dict(value)
        return {k: v if type(v) in _SCALARS else thaw(v) for k, v in value.items()}
    if kind is FrozenList or kind is list or kind is tuple:
        if _SCALARS.issuperset(map(type, value)):
            return list(value)
        return [v if type(v) in _SCALARS else thaw(v) for v in value]
    return value
