"""Clock times in text, the grammar ``timeexpr`` reads: ``10:00``, ``2:37pm``, ``10点30分``, ISO.

``find_clock_times(text)`` returns every clock time in order, each with the zone written next
to it (``11:00 CET``, ``北京时间10点``, ``18:00+08:00``). A dot never separates hours from
minutes and a clock followed by a unit is a duration, so ``1.30 s``, ``p95 is 1.30`` and
``2.8.0`` are never times.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from .timezones import ZONE_PATTERN


@dataclass(frozen=True)
class Atom:
    """One clock time found in the text, not yet placed on a date."""

    begin: int
    end: int
    hour: int
    minute: int
    second: int = 0
    zone: str | None = None
    moment: datetime | None = None  # ISO-8601 timestamps carry their own date


_NUMBERS = {
    **dict.fromkeys(("a", "an", "one"), 1),
    **dict.fromkeys(("two", "couple", "couple of"), 2),
    **dict.fromkeys(("three", "few"), 3),
    "four": 4,
    "five": 5,
    "six": 6,
    "ten": 10,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "sixty": 60,
    "ninety": 90,
    **dict.fromkeys(("half", "half an", "半"), 0.5),
}
_ZH_DIGITS = {**dict(zip("零一二三四五六七八九", range(10), strict=True)), "两": 2}
ZH_NUM = r"\d{1,3}|[零一二两三四五六七八九十]{1,3}"

_ISO = re.compile(
    r"(?<!\d)(\d{4}-\d{2}-\d{2})[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?"
    r"(Z|[+-]\d{2}:?\d{2})?(?!\d)"
)
_NOT_TIME = re.compile(r"\d+(?:\.\d+)+")  # decimals and versions: 1.30, 2.8.0
_ZONE_AFTER = re.compile(rf"\s*\(?\s*(?:in\s+)?({ZONE_PATTERN})\)?")
_ZONE_BEFORE = re.compile(r"(北京时间|北京時間|东八区|UTC|GMT)\s*$")
_CLOCK = re.compile(
    r"(?<![\d:/])(\d{1,2}):(\d{2})(?::(\d{2}))?(?![\d:])(?:\s*([ap])\.?m\b\.?)?"
    r"|(?<![\d:/])(\d{1,2})\s*([ap])\.?m\b\.?"
    r"|\b(noon|midnight)\b",
    re.I,
)
_ZH_CLOCK = re.compile(
    rf"(上午|下午|晚上|凌晨|早上|中午|傍晚|今早|早晨|夜里)?\s*({ZH_NUM})\s*[点點時时](?!间|間|候|段)"
    rf"(?:\s*(?:({ZH_NUM})\s*分|(半)|整|钟))?"
)
_DURATION_AFTER = re.compile(r"\s*(?:ms|s|sec|secs|seconds?|mins?|minutes?|%|x|秒)\b", re.I)
_ZH_PM = {"下午", "晚上", "傍晚", "夜里"}


def find_clock_times(text: str) -> list[Atom]:
    """Every clock time in ``text``, in order; ISO-8601 timestamps first, decimals masked."""
    atoms: list[Atom] = []
    masked = list(text)
    for match in _ISO.finditer(text):
        if (moment := _iso_moment(match)) is None:
            continue
        begin, end, zone = match.start(), match.end(), None
        if match.group(5) is None and (after := _ZONE_AFTER.match(text, end)):
            zone, end = after.group(1), after.end()
        atoms.append(Atom(begin, end, moment.hour, moment.minute, moment.second, zone, moment))
        masked[begin:end] = " " * (end - begin)
    plain = _NOT_TIME.sub(lambda match: " " * len(match.group()), "".join(masked))
    atoms += [a for m in _CLOCK.finditer(plain) if (a := _clock_atom(text, m)) is not None]
    atoms += [a for m in _ZH_CLOCK.finditer(plain) if (a := _zh_atom(text, m)) is not None]
    return sorted(atoms, key=lambda a: a.begin)


def _clock_atom(text: str, match: re.Match[str]) -> Atom | None:
    if _DURATION_AFTER.match(text, match.end()):
        return None
    if match.group(7):
        hour, minute, meridiem = (12 if match.group(7).lower() == "noon" else 0), 0, None
    elif match.group(5):
        hour, minute, meridiem = int(match.group(5)), 0, match.group(6).lower()
    else:
        hour, minute = int(match.group(1)), int(match.group(2))
        meridiem = match.group(4).lower() if match.group(4) else None
    if meridiem and not 1 <= hour <= 12:
        return None
    if meridiem == "p" and hour < 12:
        hour += 12
    elif meridiem == "a" and hour == 12:
        hour = 0
    second = int(match.group(3)) if match.group(3) else 0
    return _with_zone(text, match.start(), match.end(), hour, minute, second)


def _zh_atom(text: str, match: re.Match[str]) -> Atom | None:
    period, hour = match.group(1), int(parse_amount(match.group(2)))
    minute = 30 if match.group(4) else int(parse_amount(match.group(3))) if match.group(3) else 0
    if (period in _ZH_PM and hour < 12) or (period == "中午" and hour <= 2):
        hour += 12
    elif period == "凌晨" and hour == 12:
        hour = 0
    return _with_zone(text, match.start(), match.end(), hour, minute, 0)


def _with_zone(text: str, begin: int, end: int, hour: int, minute: int, second: int) -> Atom | None:
    if hour > 23 or minute > 59 or second > 59:
        return None
    zone = None
    after = _ZONE_AFTER.match(text, end)
    if after and text.startswith("-", end) and after.group(1)[:1] == "-":
        after = None  # "10:00-10:30" is a range, not 10:00 at offset -10:30
    if after:
        zone, end = after.group(1), after.end()
    elif before := _ZONE_BEFORE.search(text[:begin]):
        zone, begin = before.group(1), before.start()
    return Atom(begin, end, hour, minute, second, zone)


def _iso_moment(match: re.Match[str]) -> datetime | None:
    day, hour, minute, second, offset = match.groups()
    try:
        return datetime.fromisoformat(
            f"{day}T{int(hour):02d}:{minute}:{second or '00'}{offset or ''}"
        )
    except ValueError:
        return None


def parse_amount(text: str) -> float:
    """``30``, ``1.5``, ``an``, ``three``, ``三十``, ``两``, ``半`` as a number."""
    word = text.strip().lower()
    if word in _NUMBERS:
        return float(_NUMBERS[word])
    try:
        return float(word)
    except ValueError:
        pass
    if "十" in word:
        tens, _, ones = word.partition("十")
        return float((_ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + _ZH_DIGITS.get(ones, 0))
    return float(_ZH_DIGITS.get(word, 1))


def duration(amount: float, unit: str) -> timedelta:
    unit = unit.lower()
    if unit.startswith("d") or unit == "天":
        return timedelta(days=amount)
    if unit.startswith("h") or "时" in unit or "钟头" in unit:
        return timedelta(hours=amount)
    return timedelta(minutes=amount)
