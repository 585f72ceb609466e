"""Fields of a log line: timestamps, levels, and the fields of a JSON record.

Timestamps without a zone are UTC; year-less ones (RFC 3164 syslog, klog) take the year of the
file's modification time, or the year before when that would put them over a day after it.
A level is the first of: the line's own level (word, syslog/journald severity, bunyan/pino
number), an access log's HTTP status (5xx ERROR, 4xx WARN), a marker near the start of the
message; else INFO.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import orjson

from .common import LEVEL_ALIASES, parse_timestamp

#: ``(timestamp, level, message, trace_id)``
Line = tuple[datetime, str, str, Any]
Stamp = Callable[[str, datetime], datetime | None]

TIME_KEYS = ("timestamp", "@timestamp", "time", "ts", "datetime", "@t", "timeMillis",
             "__REALTIME_TIMESTAMP", "start_time", "time_local", "asctime")  # fmt: skip
LEVEL_KEYS = ("level", "severity", "lvl", "log.level", "loglevel", "levelname", "@l",
              "PRIORITY", "error_severity")  # fmt: skip
MESSAGE_KEYS = ("message", "msg", "@m", "MESSAGE", "log", "@mt")
STATUS_KEYS = ("status", "status_code", "statusCode", "response_code", "res.statusCode",
               "http.response.status_code")  # fmt: skip
TRACE_KEYS = ("trace_id", "traceId", "trace.id", "traceID", "@tr")
STACK_KEYS = ("stacktrace", "stack_trace", "stack", "exception", "exc_info", "err.stack",
              "error.stack_trace", "@x", "detail", "hint", "statement")  # fmt: skip
_WORDS = {
    **LEVEL_ALIASES,
    **dict.fromkeys(("DPANIC", "EMERGENCY", "FAIL", "FTL", "CRT", "E", "F"), "ERROR"),
    **dict.fromkeys(("WRN", "W"), "WARN"),
    **dict.fromkeys(("INFORMATION", "INF", "LOG", "VERBOSE", "DBG", "I"), "INFO"),
}
_MARKERS = re.compile(
    r"\b(?:level|lvl|severity)\"?\s*[=:]\s*\"?(?P<kv>\w+)"
    r"|(?:^|: )(?P<klog>[IWEF])\d{4} \d\d:\d\d:\d\d"
    r"|\[(?P<tag>[A-Za-z]{3,11})\]"
    r"|(?<![\w-])(?P<word>[A-Z]{3,11})(?![\w.-])"
    r"|(?:^|: )(?P<lead>[A-Za-z]{3,11}):\s"
)
_MONTHS = {
    month: number
    for number, month in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1
    )
}
_SHORT_OFFSET = re.compile(r"(?<=\d)([+-]\d\d)$")  # PostgreSQL's "+08"
_CLF = re.compile(r"(\d\d)/([A-Z][a-z]{2})/(\d{4}):(\d\d:\d\d:\d\d) ([+-]\d{4})")


def level_of(value: Any) -> str | None:
    """A level field or word as ERROR/WARN/INFO, or None when it names no level.

    Numbers 0-7 are syslog severities (GELF, journald), 10-60 bunyan/pino levels.
    """
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if 0 <= value <= 7:
            return "ERROR" if value <= 3 else "WARN" if value == 4 else "INFO"
        if 10 <= value <= 60:
            return "ERROR" if value >= 50 else "WARN" if value >= 40 else "INFO"
        return None
    if not isinstance(value, str):
        return None
    word = value.strip().upper()
    return _WORDS.get(word) or _WORDS.get(word.rstrip("0123456789+-"))


def status_level(value: Any) -> str | None:
    """An HTTP status as a level: 5xx ERROR, 4xx WARN, other codes INFO."""
    try:
        code = int(value)
    except (TypeError, ValueError):
        return None
    if not 100 <= code <= 599:
        return None
    return "ERROR" if code >= 500 else "WARN" if code >= 400 else "INFO"


def infer_level(text: str) -> str | None:
    """The level a marker near the start of ``text`` names, or None."""
    for found in _MARKERS.finditer(text, 0, 160):
        level = level_of(found.group(found.lastindex or 0))
        if level:
            return level
    return None


def iso_stamp(text: str, modified: datetime | None = None) -> datetime | None:
    """ISO-8601 with ``Z``, an offset, ``UTC``/``GMT`` or another zone name (read as UTC)."""
    head, space, zone = text.rpartition(" ")
    if space and zone and (zone.isalpha() or zone[0] in "+-"):
        text = head + ("+00:00" if zone.isalpha() else zone)
    moment: datetime | None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        moment = parse_timestamp(_SHORT_OFFSET.sub(r"\1:00", text))
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=timezone.utc)


def any_stamp(value: Any) -> datetime | None:
    """A JSON timestamp: epoch (number or digits), ISO-8601 or Common Log Format."""
    if isinstance(value, str) and value.replace(".", "", 1).isdigit():
        value = float(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return parse_timestamp(value)
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str):
        return None
    return iso_stamp(value) or clf_stamp(value)


def clf_stamp(text: str, modified: datetime | None = None) -> datetime | None:
    """``01/May/2024:10:00:01 +0000``."""
    found = _CLF.fullmatch(text)
    if found is None or found[2] not in _MONTHS:
        return None
    day, month, year, clock, zone = found.groups()
    return iso_stamp(f"{year}-{_MONTHS[month]:02d}-{day}T{clock}{zone[:3]}:{zone[3:]}")


def _yearless(month: int, day: int, clock: str, modified: datetime) -> datetime | None:
    hour, minute, second = clock.split(":")
    whole, _, fraction = second.partition(".")
    micro = int(fraction[:6].ljust(6, "0")) if fraction else 0
    for year in (modified.year, modified.year - 1):
        try:
            moment = datetime(
                year, month, day, int(hour), int(minute), int(whole), micro, tzinfo=timezone.utc
            )
        except ValueError:
            continue
        if moment <= modified + timedelta(days=1):
            return moment
    return None


def syslog_stamp(text: str, modified: datetime) -> datetime | None:
    """``May  1 10:00:01`` in the latest year that puts it at most a day after ``modified``."""
    month, day, clock = text.split()
    return _yearless(_MONTHS[month], int(day), clock, modified) if month in _MONTHS else None


def klog_stamp(text: str, modified: datetime) -> datetime | None:
    """``0501 10:00:01.123456`` in the latest year that puts it at most a day after
    ``modified``."""
    return _yearless(int(text[:2]), int(text[2:4]), text[5:], modified)


def slashed_stamp(text: str, modified: datetime | None = None) -> datetime | None:
    """``2024/05/01 10:00:01`` (nginx, Go's ``log``)."""
    return iso_stamp(text.replace("/", "-"))


def _paths(keys: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """Each key as itself, and a dotted one also as a path into nested objects."""
    return tuple(path for key in keys for path in dict.fromkeys(((key,), tuple(key.split(".")))))


def lookup(item: dict[str, Any], key: str) -> Any:
    """``item[key]``, else a dotted key's path into nested objects; None when empty."""
    return _field(item, _paths((key,)))


def _field(item: dict[str, Any], paths: tuple[tuple[str, ...], ...]) -> Any:
    for head, *rest in paths:
        value = item.get(head)
        for part in rest:
            value = value.get(part) if isinstance(value, dict) else None
        if value is not None and value != "":
            return value
    return None


_TIME, _LEVEL, _MESSAGE, _STATUS, _TRACE, _STACK = (
    _paths(keys)
    for keys in (TIME_KEYS, LEVEL_KEYS, MESSAGE_KEYS, STATUS_KEYS, TRACE_KEYS, STACK_KEYS)
)
_STACK_HEADS = frozenset(path[0] for path in _STACK)
_TRACE_HEADS = frozenset(path[0] for path in _TRACE)


def read_json(text: str, modified: datetime) -> Line | None:
    """A JSON object with a timestamp field."""
    try:
        item = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(item, dict):
        return None
    moment = any_stamp(_field(item, _TIME))
    if moment is None:
        return None
    found = _field(item, _MESSAGE)
    message = text if found is None else str(found).rstrip("\n")
    if not _STACK_HEADS.isdisjoint(item):
        for path in _STACK:
            extra = str(_field(item, (path,)) or "")
            head, _, rest = extra.partition("\n")
            extra = rest if found and str(found) in head else extra  # "Error: <msg>" repeats it
            if extra:
                message += "\n" + extra
    level = (
        level_of(_field(item, _LEVEL))
        or status_level(_field(item, _STATUS))
        or infer_level(message)
    )
    trace = _field(item, _TRACE) if not _TRACE_HEADS.isdisjoint(item) else None
    return moment, level or "INFO", message, trace
