"""Log templates, counted before and after an onset; services named in logs.

``mine_patterns(records, split)`` groups the messages into events (``logevents``),
deterministically, then counts each template's records before and after ``split``. A template
is ``new`` when it has records after the split and none before it.

A template is its event's oldest message with its values masked - ``<UUID>``, ``<IP>``,
``<HEX>``, ``<ID>`` (8 or more hex digits), ``<NUM>`` - and ``<*>`` for each other word that
differs between the event's messages (``user=<*>`` for a ``key=value`` word).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any

from ..telemetry.common import iso
from .logevents import constant_words, group
from .series import Row, log_rows, parse_stamp

#: Masked messages remembered.
MASK_CACHE = 32768
#: Mined line sets remembered (keyed by the lines: the two analysis tools of one service and
#: window mine the same ones).
TEMPLATE_CACHE = 16

_MASKS = (
    (r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b", "UUID"),
    (r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b", "IP"),
    (r"\b0x[0-9a-fA-F]+\b", "HEX"),
    (r"\b(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{8,}\b", "ID"),
    (r"(?<![A-Za-z0-9_])[-+]?\d+(?:\.\d+)?(?:ms|us|µs|s|m|h|%|[KMGT]i?B)?(?![A-Za-z0-9_])", "NUM"),
)

# One pass over the message: the alternatives are tried in the order above at each position.
# The lookahead lets positions that cannot start a mask fail at once (a third faster).
_COMBINED = re.compile(
    "(?=[-+0-9a-fA-F])(?:" + "|".join(f"(?P<{name}>{pattern})" for pattern, name in _MASKS) + ")"
)


@dataclass(frozen=True)
class LogPattern:
    """One template and how often it occurred on each side of the split."""

    template: str
    example: str
    count_before: int
    count_after: int
    first_seen: datetime
    new: bool
    levels: tuple[str, ...] = ()
    #: When each record of the template was logged, oldest first (for per-bucket counts).
    times: tuple[datetime, ...] = field(default=(), repr=False, compare=False)

    def as_dict(self) -> dict[str, Any]:
        """The raw-output shape of a ``log_patterns`` pattern."""
        shown = ("template", "example", "count_before", "count_after", "first_seen", "new")
        return {k: iso(self.first_seen) if k == "first_seen" else getattr(self, k) for k in shown}


_NAMES = {name: f"<{name}>" for _, name in _MASKS}


@lru_cache(maxsize=MASK_CACHE)
def mask(message: str) -> str:
    """``message`` with ids, addresses, numbers and durations replaced by ``<UUID>``... masks."""
    return _COMBINED.sub(lambda match: _NAMES[match.lastgroup or ""], message)


def clear_caches() -> None:
    """Forget every masked message and mined line set (benchmarks measure cold runs)."""
    mask.cache_clear()
    _templates.cache_clear()


def mine_patterns(
    records: Sequence[Mapping[str, Any]], split: datetime | None = None
) -> list[LogPattern]:
    """Templates of ``records`` (``timestamp``/``message``/``level`` dicts): new ones first,
    then by count after the split, count before, template text. With ``split`` None every
    record counts as "after" and nothing is new."""
    stamps = [parse_stamp(r["timestamp"]) for r in records]
    return mine_rows(log_rows(records, stamps), split)


def mine_rows(rows: tuple[Row, ...], split: datetime | None = None) -> list[LogPattern]:
    """``mine_patterns`` of the records whose ``log_rows`` are ``rows``."""
    patterns = []
    for template, members in _templates(rows):
        before = 0 if split is None else bisect_left(members, (split,))
        after = len(members) - before
        levels = {level for _, _, level in members} - {""}
        patterns.append(
            LogPattern(
                template,
                members[0][1],
                before,
                after,
                members[0][0],
                split is not None and before == 0 and after > 0,
                tuple(sorted(levels)),
                tuple(moment for moment, _, _ in members),
            )
        )
    patterns.sort(key=lambda p: (not p.new, -p.count_after, -p.count_before, p.template))
    return patterns


@lru_cache(maxsize=TEMPLATE_CACHE)
def _templates(rows: tuple[Row, ...]) -> tuple[tuple[str, tuple[Row, ...]], ...]:
    """``(time, message, level)`` rows grouped by event (``logevents``), in order of first
    appearance, each with its template (cached: both analysis tools mine the same lines)."""
    ordered = sorted(rows)
    messages = [message for _, message, _ in ordered]
    masked = list(map(mask, messages))
    raw = dict(zip(masked, messages, strict=True))
    shapes = list(raw)
    events = group([constant_words(raw[shape]) for shape in shapes])
    event_of = dict(zip(shapes, events, strict=True))
    grouped: dict[int, list[Row]] = defaultdict(list)
    for row, shape in zip(ordered, masked, strict=True):
        grouped[event_of[shape]].append(row)
    common = _common_words(shapes, events)
    return tuple(
        (_template(members[0][1], common[n]), tuple(members))
        for n, members in sorted(grouped.items())
    )


def _common_words(shapes: list[str], events: list[int]) -> list[frozenset[str]]:
    """The words (masked) every distinct message of each event holds, by event number."""
    common: dict[int, frozenset[str]] = {}
    for shape, event in zip(shapes, events, strict=True):
        words = frozenset(_GAPS.split(shape)[::2])
        common[event] = common[event] & words if event in common else words
    return [common[n] for n in range(len(common))]


_GAPS = re.compile(r"([\s|]+)")


def _template(message: str, common: frozenset[str]) -> str:
    """``message`` masked, with ``<*>`` for each word that differs within its event (separators
    kept, so a template's literal parts are substrings of its lines)."""
    parts = _GAPS.split(mask(message))
    for i in range(0, len(parts), 2):
        if parts[i] not in common:
            key, equals, value = parts[i].partition("=")
            parts[i] = f"{key}=<*>" if equals and key and value else "<*>"
    return "".join(parts)


def named_services(
    records: Iterable[Mapping[str, Any]],
    services: Sequence[str],
    exclude: str | None = None,
    aliases: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, int]:
    """For each known service other than ``exclude``: how many messages name it (if any), by
    ``named_in``."""
    table = owners(services, aliases or {}, exclude)
    messages = (str(record.get("message", "")).lower() for record in records)
    counts = Counter(service for m in messages for service in named_in(m, table))
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def owners(
    services: Sequence[str], names: Mapping[str, Sequence[str]], exclude: str | None = None
) -> dict[str, list[str]]:
    """Each lower-case name of a service other than ``exclude`` (its own, then ``names`` of it:
    aliases, hosts) -> the services it names."""
    found: dict[str, list[str]] = {}
    for service in services:
        for name in (service, *names.get(service, ())) if service != exclude else ():
            if name:
                found.setdefault(name.lower(), []).append(service)
    return found


def named_in(text: str, table: Mapping[str, Sequence[str]]) -> dict[str, bool]:
    """The services lower-case ``text`` names by a name of ``table`` (``owners``), each with
    whether by its own name. An ASCII name counts whole or as one of its hosts
    (``HOST_SUFFIX``), never inside a longer word or hyphenated name; a Chinese name anywhere;
    of names that begin at one place, the longest."""
    present = tuple(sorted((name for name in table if name in text), key=len, reverse=True))
    named: dict[str, bool] = {}
    for match in _any_name(present).finditer(text) if present else ():
        name = present[int(str(match.lastgroup)[1:])]
        for service in table[name]:
            named[service] = named.get(service, False) or name == service.lower()
    return named


#: What may follow a service's name in the name of one of its hosts or pods: one or two parts
#: with a digit each (``ledger-db-2``, ``checkout-7d9f8-x2kq4``), never a word (``-replica``).
HOST_SUFFIX = r"(?:-(?=[a-z]*\d)[a-z0-9]+){0,2}"


@lru_cache(maxsize=256)
def _any_name(names: tuple[str, ...]) -> re.Pattern[str]:
    """Any of ``names`` (lower case, longest first), the n-th as group ``n<n>``."""
    return re.compile(
        "|".join(
            rf"(?<![\w-])(?P<n{i}>{re.escape(name)}){HOST_SUFFIX}(?![\w-])"
            if name.isascii()
            else f"(?P<n{i}>{re.escape(name)})"
            for i, name in enumerate(names)
        )
    )
