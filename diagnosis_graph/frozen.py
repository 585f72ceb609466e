"""Read-only containers for state values, frozen lazily one level at a time.

State values are frozen when they are written, so a node cannot corrupt the state of a run by
mutating what it was given. The frozen types subclass ``dict`` and ``list`` so ``isinstance``
checks, ``json.dumps`` and pydantic validation keep working on them.

Freezing is *shallow and lazy*, so its cost never depends on the size of a value: ``freeze``
copies only the top level of a container (a C-speed copy of its item pointers); a nested
container is frozen the first time it is read through the frozen parent, and the frozen copy
replaces the raw one inside the parent, so later reads return the same object. Every way of
reading items through a frozen container (indexing, slicing, iteration, ``get``, ``values``,
``items``, ``copy``, ``+``, ``|``, ``reversed``, ``dict()``, ``json.dumps``) goes through
those accessors and so hands out frozen items. The raw value a frozen container was made from
is never written to, so :func:`unfreeze` can give the caller back exactly what was written.

One way around remains, and it is deliberate: C code that reads a dict's or list's storage
directly (pydantic-core validating a model, orjson) sees a nested value that was not read yet
as the raw object. It reads the same content, but a pydantic ``Any`` field keeps that raw
object, so a node could mutate state through it; copying every nested value eagerly would close
it at a cost that grows with the state.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, NoReturn, SupportsIndex, overload

_SCALARS = frozenset({str, int, float, bool, type(None)})


def _read_only(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(
        f"graph state is read-only: return an update from the node instead of mutating "
        f"the {type(self).__mro__[1].__name__} it was given"
    )


_dict_get = dict.get
_dict_set = dict.__setitem__
_list_get = list.__getitem__
_list_set = list.__setitem__
_list_iter = list.__iter__


class FrozenDict(dict):  # type: ignore[type-arg]
    """A dict that refuses mutation and hands out its nested values frozen."""

    __slots__ = ("_source",)
    _source: Any
    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _read_only
    __ior__ = _read_only

    def __getitem__(self, key: Any) -> Any:
        value = _dict_get(self, key, _MISSING)
        if type(value) in _FROZEN:
            return value
        if value is _MISSING:
            return dict.__getitem__(self, key)  # KeyError, or __missing__ of a subclass
        frozen = _child(self, value)
        _dict_set(self, key, frozen)
        return frozen

    def get(self, key: Any, default: Any = None) -> Any:
        """The frozen value of ``key``, or ``default``."""
        return self[key] if dict.__contains__(self, key) else default

    def __iter__(self) -> Iterator[Any]:
        # Overridden so that dict(), {**d} and d | x take the keys()/[] path (frozen values).
        return dict.__iter__(self)

    def keys(self) -> Any:
        """The keys (a live view, as for a dict)."""
        return dict.keys(self)

    def values(self) -> list[Any]:  # type: ignore[override]
        """The frozen values, in order."""
        return [self[key] for key in dict.__iter__(self)]

    def items(self) -> list[tuple[Any, Any]]:  # type: ignore[override]
        """``(key, frozen value)`` pairs, in order."""
        return [(key, self[key]) for key in dict.__iter__(self)]

    def copy(self) -> FrozenDict:
        """A frozen dict is its own copy."""
        return self

    def __or__(self, other: Any) -> dict[Any, Any]:
        return {**self, **other}

    def __ror__(self, other: Any) -> dict[Any, Any]:
        return {**other, **self}

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenDict:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self),))


class FrozenList(list):  # type: ignore[type-arg]
    """A list that refuses mutation and hands out its nested items frozen."""

    __slots__ = ("_source",)
    _source: Any
    __setitem__ = __delitem__ = append = extend = insert = pop = remove = _read_only
    clear = sort = reverse = __iadd__ = __imul__ = _read_only

    @overload
    def __getitem__(self, index: SupportsIndex) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: Any) -> Any:
        value = _list_get(self, index)
        kind = type(value)
        if kind is not dict and kind in _FROZEN:
            return value
        try:
            source = self._source
        except AttributeError:  # a frozen list some node made itself
            source = None
        if kind is dict and source is RUN_OWNED:  # the common read: _item() inlined
            frozen = FrozenDict(value)
            frozen._source = value
            return frozen  # an append-only list keeps each item as it was appended
        if type(index) is slice:
            return [
                _item(self, i, v)
                for i, v in zip(range(*index.indices(len(self))), value, strict=True)
            ]
        frozen = _child(self, value)
        if source is not RUN_OWNED:
            _list_set(self, index, frozen)
        return frozen

    def __iter__(self) -> Iterator[Any]:
        for index, value in enumerate(_list_iter(self)):
            yield value if type(value) in _FROZEN else _item(self, index, value)

    def __reversed__(self) -> Iterator[Any]:
        for index in range(len(self) - 1, -1, -1):
            yield self[index]

    def copy(self) -> FrozenList:
        """A frozen list is its own copy."""
        return self

    def __add__(self, other: Any) -> list[Any]:
        return [*self, *other]

    def __radd__(self, other: Any) -> list[Any]:
        # Called before list.__add__ of a plain left operand, because FrozenList subclasses list.
        return [*other, *self]

    def __mul__(self, count: SupportsIndex) -> list[Any]:
        return [*self] * count

    __rmul__ = __mul__

    def __copy__(self) -> FrozenList:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenList:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))


def _item(frozen: FrozenList, index: int, value: Any) -> Any:
    """Item ``index`` (``value``) of ``frozen``, frozen; kept in its place, except in an
    append-only list, which keeps each item as it was appended (see :data:`RUN_OWNED`)."""
    if type(value) in _FROZEN:
        return value
    item = _child(frozen, value)
    try:
        owned = frozen._source is RUN_OWNED
    except AttributeError:  # a frozen list some node made itself
        owned = False
    if not owned:
        _list_set(frozen, index, item)
    return item


def _child(parent: FrozenDict | FrozenList, value: Any) -> Any:
    """Freeze a nested value on first read; the child of a sourceless value is sourceless."""
    kind = type(value)
    if kind is dict:  # freeze() inlined for the common containers
        frozen: Any = FrozenDict(value)
    elif kind is list or kind is tuple:
        frozen = FrozenList(value)
    else:
        frozen = freeze(value)
        if type(frozen) is not FrozenDict and type(frozen) is not FrozenList:
            return frozen
    try:
        frozen._source = None if parent._source is None else value
    except AttributeError:  # a frozen value some node made itself: treated as sourceless
        frozen._source = None
    return frozen


_MISSING = object()
_FROZEN = frozenset({FrozenDict, FrozenList}) | _SCALARS


class _RunOwned:
    __slots__ = ()

    def __repr__(self) -> str:
        return "RUN_OWNED"


#: The ``_source`` of a list the engine made for one run (an append-only list): its items are
#: what nodes appended, kept as written; each read hands out a frozen version of an item (made
#: anew, the list is not written to), and :func:`unfreeze` gives back a plain list of them.
RUN_OWNED: Any = _RunOwned()


def owned_list(items: Iterable[Any] = ()) -> FrozenList:
    """A new append-only list of one run (see :data:`RUN_OWNED`) holding ``items``."""
    fresh = FrozenList(items)
    fresh._source = RUN_OWNED
    return fresh


def freeze(value: Any) -> Any:
    """Return a read-only version of ``value`` (O(1) in its size beyond the top level).

    Scalars and frozen values are returned as they are; a dict, list or tuple becomes a
    FrozenDict/FrozenList holding the same items, nested containers frozen on first read; other
    objects are kept as they are (the engine cannot make arbitrary objects immutable).
    """
    kind = type(value)
    if kind is dict:
        frozen: Any = FrozenDict(value)
    elif kind is list or kind is tuple:
        frozen = FrozenList(value)
    elif kind in _FROZEN or not isinstance(value, Mapping):
        return value
    else:
        frozen = FrozenDict(value)
    frozen._source = value
    return frozen


def freeze_new(value: Any) -> Any:
    """Like :func:`freeze`, but with no source: :func:`unfreeze` copies it (shared defaults)."""
    frozen = freeze(value)
    if type(frozen) is FrozenDict or type(frozen) is FrozenList:
        frozen._source = None
    return frozen


def unfreeze(value: Any) -> Any:
    """Return what was written, for the caller-facing final state.

    A frozen value made from a written dict or list gives back that very object (the engine
    never writes to it); an append-only list of the run becomes a plain list of the items as
    they were appended (a frozen item a node appended stays frozen); one the engine made
    otherwise (a default) becomes a plain container whose frozen items are unfrozen the same
    way and whose other containers are copied (they belong to a value shared between runs).
    Other values are returned as they are.
    """
    kind = type(value)
    if kind is not FrozenList and kind is not FrozenDict:
        return value
    source = getattr(value, "_source", None)
    if source is RUN_OWNED:
        return list.copy(value)
    if source is not None:
        return source
    if kind is FrozenDict:
        return dict(zip(dict.keys(value), _unfrozen_items(dict.values(value)), strict=True))
    return _unfrozen_items(_list_iter(value))


def _unfrozen_items(items: Iterable[Any]) -> list[Any]:
    out: list[Any] = []
    append = out.append
    for item in items:
        kind = type(item)
        if kind is FrozenDict or kind is FrozenList:
            try:
                source = item._source
            except AttributeError:
                source = None
            append(source if source is not None and source is not RUN_OWNED else unfreeze(item))
        else:
            append(item if kind in _SCALARS else thaw(item))
    return out


def thaw(value: Any) -> Any:
    """Return a plain, mutable deep copy of a frozen value or of a node's view of the state
    (other objects are returned as is)."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is FrozenDict or kind is dict:
        return {k: v if type(v) in _SCALARS else thaw(v) for k, v in dict.items(value)}
    if kind is MappingProxyType:  # the view (copy.deepcopy cannot copy a mappingproxy)
        return {k: v if type(v) in _SCALARS else thaw(v) for k, v in value.items()}
    if kind is FrozenList or kind is list or kind is tuple:
        items = _list_iter(value) if kind is FrozenList else value
        return [v if type(v) in _SCALARS else thaw(v) for v in items]
    return value
