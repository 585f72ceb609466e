"""Time-zone names a question may use, resolved to ``tzinfo`` objects.

Abbreviations map to the fixed offset they denote (``CET`` is +01:00, whatever the date).
Ambiguous ones (``CST``, ``IST``, ``BST``) are absent: such a time falls back to the default
zone. IANA names and numeric offsets (``+08:00``, ``UTC+8``) are read as such; ``北京时间`` /
``东八区`` are China Standard Time (+08:00).
"""

from __future__ import annotations

import re
from datetime import timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_HOURS = {
    **dict.fromkeys(("UTC", "GMT", "Z", "WET"), 0),
    **dict.fromkeys(("WEST", "CET", "MET"), 1),
    **dict.fromkeys(("CEST", "MEST", "EET"), 2),
    **dict.fromkeys(("EEST", "MSK"), 3),
    **dict.fromkeys(("HKT", "SGT", "北京时间", "北京時間", "东八区"), 8),
    **dict.fromkeys(("JST", "KST"), 9),
    "AEST": 10,
    "AEDT": 11,
    "NZST": 12,
    "NZDT": 13,
    "HST": -10,
    "AKST": -9,
    **dict.fromkeys(("AKDT", "PST"), -8),
    **dict.fromkeys(("PDT", "MST"), -7),
    "MDT": -6,
    "EST": -5,
    "EDT": -4,
}

#: A zone written after (or, for the Chinese names, before) a clock time.
ZONE_PATTERN = (
    r"(?:(?:UTC|GMT)\s?[+-]\s?\d{1,2}(?::?\d{2})?|[+-]\d{2}:?\d{2}|[A-Z][a-z]+/[A-Za-z_]+"
    r"|北京时间|北京時間|东八区|\b(?:" + "|".join(k for k in _HOURS if k.isascii()) + r")\b)"
)
_OFFSET = re.compile(r"^(?:UTC|GMT)?\s?([+-])\s?(\d{1,2})(?::?(\d{2}))?$")


def zone_of(name: str | None) -> tzinfo | None:
    """The zone ``name`` denotes, or None when it is not a zone this module knows."""
    if not name:
        return None
    text = name.strip()
    if (hours := _HOURS.get(text.upper())) is not None:
        return timezone(timedelta(hours=hours), text.upper()) if hours else timezone.utc
    if offset := _OFFSET.match(text.upper()):
        sign = -1 if offset.group(1) == "-" else 1
        hours, minutes = int(offset.group(2)), int(offset.group(3) or 0)
        if hours > 14 or minutes > 59:
            return None
        return timezone(sign * timedelta(hours=hours, minutes=minutes))
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        return None
