"""Grounding: the numbers, times and services a statement states must be in its evidence."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache
from typing import Any

# Boundaries are ASCII word characters: Chinese writes a time next to its words with no space
# ("从10:00开始", "于2026-03-05T08:38Z"), and a Unicode ``\w`` would hide such a time.
_ISO = (
    r"(?<![A-Za-z0-9_-])\d{4}-\d{2}-\d{2}"
    r"(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?![A-Za-z0-9_:])"
)
_CLOCK = r"(?<![A-Za-z0-9_:.])\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?![A-Za-z0-9_:])"
_TOKEN = r"[A-Za-z0-9_.\-]+(?:,\d{3}(?!\d))*%?"
_SCAN = re.compile(f"(?P<iso>{_ISO})|(?P<clock>{_CLOCK})|(?P<token>{_TOKEN})")
_NUMBER = re.compile(r"^([+-]?)(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?([A-Za-z]+|%)?$")
_ISO_PARTS = re.compile(
    r"(\d{4}-\d{2}-\d{2})(?:[T ](\d{1,2}):(\d{2})(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?"
)


@dataclass(frozen=True)
class Number:
    """A number token: its value, the decimals written, and whether it is a percentage."""

    text: str
    value: Decimal
    decimals: int
    percent: bool


@dataclass(frozen=True)
class Tokens:
    """What a text states: numbers, minute-precision times and dates, each as written."""

    numbers: tuple[Number, ...]
    times: tuple[tuple[str, str], ...]  # (key, token as written)
    dates: tuple[tuple[str, str], ...]


def _number(token: str) -> Number | None:
    token = token.rstrip(".-")
    match = _NUMBER.match(token)
    if match is None:
        return None
    sign, whole, fraction, unit = match.groups()
    value = Decimal(f"{sign}{whole.replace(',', '')}.{fraction or '0'}")
    return Number(token, value, len(fraction or ""), unit == "%")


def _time_keys(iso: str) -> tuple[str | None, str]:
    """``(YYYY-MM-DD HH:MM or None, YYYY-MM-DD)`` of an ISO text, in UTC (no zone = UTC)."""
    parts = _ISO_PARTS.match(iso)
    assert parts is not None  # called on _ISO matches only
    day, hour, minute, zone = parts.groups()
    if hour is None:
        return None, day
    moment = datetime.fromisoformat(f"{day}T{int(hour):02d}:{minute}")
    if zone and zone != "Z":
        sign = -1 if zone[0] == "-" else 1
        moment -= sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[-2:]))
    return moment.strftime("%Y-%m-%d %H:%M"), moment.strftime("%Y-%m-%d")


@lru_cache(maxsize=8192)
def scan(text: str) -> Tokens:
    """The numbers, times and dates ``text`` states."""
    numbers: list[Number] = []
    times: list[tuple[str, str]] = []
    dates: list[tuple[str, str]] = []
    for match in _SCAN.finditer(text):
        if iso := match.group("iso"):
            full, day = _time_keys(iso)
            if full:
                times.append((full, iso))
            else:
                dates.append((day, iso))
        elif clock := match.group("clock"):
            hour, minute = clock.split(":")[:2]
            times.append((f"{int(hour):02d}:{minute}", clock))
        elif (number := _number(match.group("token"))) is not None:
            numbers.append(number)
    return Tokens(tuple(numbers), tuple(times), tuple(dates))


@dataclass(frozen=True)
class Context:
    """The evidence a statement may draw on: numbers, times, dates and the text (lower case)."""

    numbers: frozenset[Decimal]
    times: frozenset[str]
    dates: frozenset[str]
    text: str

    @staticmethod
    def merge(contexts: Iterable[Context]) -> Context:
        """One context holding everything of ``contexts``."""
        items = list(contexts)
        return Context(
            frozenset().union(*(c.numbers for c in items)),
            frozenset().union(*(c.times for c in items)),
            frozenset().union(*(c.dates for c in items)),
            "\n".join(c.text for c in items),
        )


def _scalars(holder: Mapping[str, Any] | None) -> list[Any]:
    """Scalar fields of ``holder`` and of its flat object fields (a series' ``labels``)."""
    found: list[Any] = []
    for value in (holder or {}).values():
        if isinstance(value, dict):
            found += [v for v in value.values() if not isinstance(v, (dict, list))]
        elif not isinstance(value, list):
            found.append(value)
    return found


def context_of(
    leaf: Any, holder: Mapping[str, Any] | None, arguments: Mapping[str, Any] | None
) -> Context:
    """The context of one binding: leaf, the holder's scalar fields, the invocation arguments."""
    values: list[Any] = list(leaf) if isinstance(leaf, list) else [leaf]
    values += _scalars(holder)
    values += [v for v in (arguments or {}).values() if not isinstance(v, (dict, list))]
    numbers: set[Decimal] = set()
    times: set[str] = set()
    dates: set[str] = set()
    texts: list[str] = []
    for value in values:
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, (int, float)):
            numbers.add(Decimal(repr(value)) if isinstance(value, float) else Decimal(value))
            continue
        text = str(value)
        texts.append(text.lower())
        tokens = scan(text)
        numbers.update(n.value for n in tokens.numbers)
        for key, _ in tokens.times:
            times.add(key)
            if len(key) > 5:  # a full timestamp also matches its clock time and its date
                times.add(key[11:])
                dates.add(key[:10])
        dates.update(key for key, _ in tokens.dates)
    return Context(frozenset(numbers), frozenset(times), frozenset(dates), "\n".join(texts))


def _in_utc(key: str, offset_minutes: int) -> str:
    """A statement time written in the question's zone (UTC + offset), as a UTC key."""
    if not offset_minutes:
        return key
    if len(key) == 5:
        total = (int(key[:2]) * 60 + int(key[3:]) - offset_minutes) % (24 * 60)
        return f"{total // 60:02d}:{total % 60:02d}"
    moment = datetime.strptime(key, "%Y-%m-%d %H:%M") - timedelta(minutes=offset_minutes)
    return moment.strftime("%Y-%m-%d %H:%M")


def _rounds_to(evidence: Decimal, number: Number) -> bool:
    quantum = Decimal(1).scaleb(-number.decimals)
    candidates = [evidence, evidence * 100] if number.percent else [evidence]
    wanted = abs(number.value)
    return any(abs(c).quantize(quantum, rounding=ROUND_HALF_UP) == wanted for c in candidates)


@lru_cache(maxsize=1024)
def _service_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9_-]){re.escape(name.lower())}(?![A-Za-z0-9_-])")


@lru_cache(maxsize=64)
def _catalog_pattern(catalog: tuple[str, ...]) -> re.Pattern[str] | None:
    names = sorted({n.lower() for n in catalog if n}, key=len, reverse=True)
    if not names:
        return None
    alternatives = "|".join(re.escape(n) for n in names)
    return re.compile(rf"(?<![A-Za-z0-9_-])(?:{alternatives})(?![A-Za-z0-9_-])")


def mentioned_services(statement: str, catalog: Sequence[str]) -> list[str]:
    """The catalog services ``statement`` names (case-insensitive, whole names)."""
    pattern = _catalog_pattern(tuple(catalog))
    if pattern is None:
        return []
    found = {m.group(0) for m in pattern.finditer(statement.lower())}
    return [name for name in catalog if name.lower() in found]


def ungrounded_tokens(
    statement: str, context: Context, catalog: Sequence[str] = (), offset_minutes: int = 0
) -> list[str]:
    """The tokens of ``statement`` that ``context`` does not ground, in order; [] = grounded."""
    tokens = scan(statement)
    offending = [
        written
        for key, written in tokens.times
        if key not in context.times and _in_utc(key, offset_minutes) not in context.times
    ]
    offending += [written for key, written in tokens.dates if key not in context.dates]
    for number in tokens.numbers:
        if not any(_rounds_to(value, number) for value in context.numbers):
            offending.append(number.text)
    for name in mentioned_services(statement, catalog):
        lowered = name.lower()  # the pattern's literal text: the plain search rules most out
        if lowered not in context.text or not _service_pattern(name).search(context.text):
            offending.append(name)
    return list(dict.fromkeys(offending))


_INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget|override)\b[^.\n]{0,40}?\b(?:previous|prior|above|earlier|all|"
    r"your)\b[^.\n]{0,20}?\b(?:instructions?|prompts?|rules|context)\b"
    r"|\byou are now\b|\bnew instructions?\b|^\s*(?:system|assistant|developer)\s*:"
    r"|\b(?:report|say|state|conclude|answer|tell the user)\b[^.\n]{0,20}?\bthat\b[^.\n]{0,20}?"
    r"\broot cause\b",
    re.IGNORECASE | re.MULTILINE,
)


def instruction_like(text: Any) -> bool:
    """True when a tool-output string reads like an instruction to the model."""
    return isinstance(text, str) and _INSTRUCTION.search(text) is not None


def quotes(statement: str, excerpt: str) -> bool:
    """True when ``statement`` quotes ``excerpt`` verbatim between quotation marks."""
    flat = " ".join(statement.split())
    wanted = " ".join(excerpt.split())
    return any(f"{q}{wanted}{e}" in flat for q, e in ('""', "''", "“”", "「」"))


def describe(tokens: Sequence[str]) -> str:
    """``ungrounded: "97%" not in its evidence`` (every offending token, quoted)."""
    quoted = ", ".join(f'"{token}"' for token in tokens)
    return f"ungrounded: {quoted} not in its evidence"
