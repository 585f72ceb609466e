"""Log line formats: which style a file is written in, each line as one record, and the fields
of a line (timestamps, levels, the fields of a JSON record).

A file is read in the first of ``FORMATS`` that reads most of its first ``SAMPLE`` lines (of those
any format reads); a line that format cannot read is tried in the others, and a line none reads
continues the record before it (stack traces, PostgreSQL's DETAIL, HINT, CONTEXT and STATEMENT).
A text line's message is the line without its timestamp (and a level right after it); access
lines keep the whole line; a csvlog row reads as its stderr line would, with pgBadger's prefix.

Timestamps without a zone are UTC; year-less ones (RFC 3164 syslog, klog) take the year of the
file's modification time, or the year before when that would put them over a day after it.
A level is the first of: the line's own level (word, syslog/journald severity, bunyan/pino
number), an access log's HTTP status (5xx ERROR, 4xx WARN), a marker near the start of the
message; else INFO.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from itertools import chain, islice
from typing import Any

import orjson

from .common import LEVEL_ALIASES, MAX_MESSAGE_CHARS, parse_timestamp

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


def json_object(text: str) -> dict[str, Any] | None:
    """``text`` as a JSON object, or None."""
    try:
        item = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return item if isinstance(item, dict) else None


def read_json(text: str, modified: datetime) -> Line | None:
    """A JSON object with a timestamp field."""
    item = json_object(text)
    moment = any_stamp(_field(item, _TIME)) if item is not None else None
    if item is None or moment is None:
        return None
    level, message, trace = json_fields(item, text)
    return moment, level or "INFO", message, trace


def json_fields(item: dict[str, Any], text: str) -> tuple[str | None, str, Any]:
    """The level (None when it names none), message and trace id of the JSON record ``item``
    (the line ``text``)."""
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
    return level, message, trace


#: A line read as a record, as text that continues the record before it, or not read (None).
Reading = Line | str | None
SAMPLE = 50
#: Words read as the level right after an ISO timestamp, in any case.
_TEXT_LEVELS = "CRITICAL|WARNING|NOTICE|ERROR|FATAL|DEBUG|TRACE|CRIT|WARN|INFO|ERR"
_PG_SECONDARY = frozenset({"DETAIL", "HINT", "CONTEXT", "STATEMENT", "QUERY", "LOCATION"})
_PG_LEVELS = "DEBUG[1-5]|INFO|NOTICE|WARNING|ERROR|LOG|FATAL|PANIC|" + "|".join(_PG_SECONDARY)
_PG_SEVERITY = re.compile(_PG_LEVELS)
_ISO = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:[Zz]|[+-]\d\d(?::?\d\d)?)?"
_TRACE_IN_TEXT = re.compile(r"\btrace(?:_id|Id|ID)?[=:]\s*([0-9a-fA-F-]{8,64})")


@dataclass(frozen=True)
class Text:
    """A style read by one regular expression.

    Named groups: ``ts`` (read by ``stamp``); ``msg`` (else the line without the match);
    optionally ``level``, ``pri`` (syslog), ``status`` (HTTP) and ``body`` (where a level marker
    is looked for, else ``msg``).
    """

    name: str
    pattern: re.Pattern[str]
    stamp: Stamp
    anywhere: bool = False

    def read(self, text: str, modified: datetime) -> Reading:
        """The record ``text`` holds, or the text a PostgreSQL DETAIL-like line adds."""
        found = self.pattern.search(text) if self.anywhere else self.pattern.match(text)
        if found is None:
            return None
        groups = found.groupdict()
        word = groups.get("level")
        if word in _PG_SECONDARY:
            return text[found.end("ts") :].strip()
        moment = self.stamp(groups["ts"], modified)
        if moment is None:
            return None
        message = groups.get("msg")
        if message is None:
            message = (text[: found.start()] + text[found.end() :]).strip()
        level = (
            (level_of(word) if word else None)
            or (level_of(int(groups["pri"]) % 8) if groups.get("pri") else None)
            or status_level(groups.get("status"))
            or infer_level(groups.get("body") or message)
        )
        trace = _TRACE_IN_TEXT.search(message) if "trace" in message else None
        return moment, level or "INFO", message, trace.group(1) if trace else None


class CsvLog:
    """PostgreSQL's csvlog: read as the equivalent stderr line plus its DETAIL-like lines."""

    name = "csvlog"
    start = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? [A-Z]{2,5},")
    #: Columns of the message's own lines after the message: DETAIL, HINT, CONTEXT, STATEMENT.
    extra = ((14, "DETAIL"), (15, "HINT"), (18, "CONTEXT"), (19, "STATEMENT"))

    def read(self, text: str, modified: datetime) -> Reading:
        """One physical line as a row (a row with a quoted newline reads its first part)."""
        return self.row(next(csv.reader([text]))) if self.start.match(text) else None

    def row(self, cells: list[str]) -> Line | None:
        """A csvlog row as a record."""
        if len(cells) < 14 or not _PG_SEVERITY.fullmatch(cells[11]):
            return None
        moment = iso_stamp(cells[0])
        if moment is None:
            return None
        app = cells[22] if len(cells) > 22 else ""
        who = zip(("user", "db", "app", "client"), (cells[1], cells[2], app, cells[4]), strict=True)
        context = ",".join(f"{key}={value}" for key, value in who if value)
        head = (f"[{cells[3]}]", context, f"{cells[11]}:  {cells[13]}")
        lines = [" ".join(part for part in head if part)]
        lines += [f"{name}:  {cells[i]}" for i, name in self.extra if len(cells) > i and cells[i]]
        return moment, level_of(cells[11]) or "INFO", "\n".join(lines), None


class TextOrJson:
    """The general style: a JSON object, or ``<ISO-8601> [LEVEL] message``."""

    name = "text"

    def read(self, text: str, modified: datetime) -> Reading:
        """``text`` as JSON when it starts with ``{``, else as ISO-stamped text."""
        return read_json(text, modified) if text.startswith("{") else _ISO_TEXT.read(text, modified)


def _text(name: str, pattern: str, stamp: Stamp = iso_stamp, anywhere: bool = False) -> Text:
    return Text(name, re.compile(pattern), stamp, anywhere)


_ISO_TEXT = _text(
    "text",
    rf"^(?P<ts>{_ISO})\s+(?:\[?(?P<level>(?i:{_TEXT_LEVELS}))\]?\s+)?(?P<msg>.*)$",
)
CSVLOG = CsvLog()
Format = Text | CsvLog | TextOrJson
FORMATS: tuple[Format, ...] = (
    _text("cri", rf"^(?P<ts>{_ISO}) (?:stdout|stderr) [FP] (?P<msg>.*)$"),
    _text("envoy_access", rf'^(?P<msg>\[(?P<ts>{_ISO})\] "[^"]*" (?P<status>\d{{3}}) .*)$'),
    _text(
        "access",
        r"^(?P<msg>\S+ \S+ \S+ \[(?P<ts>\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4})\] "
        r'"[^"]*" (?P<status>\d{3})\b.*)$',
        clf_stamp,
    ),
    _text(
        "postgres",
        r"^(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?(?: [A-Z]{2,5}| ?[+-]\d\d(?::?\d\d)?)?) "
        rf"(?P<msg>.{{0,200}}?\b(?P<level>{_PG_LEVELS}):  .*)$",
    ),
    CSVLOG,
    _text(
        "syslog5424",
        r"^<(?P<pri>\d{1,3})>1 (?P<ts>\S+) "
        r"(?P<msg>\S+ \S+ \S+ \S+ (?:-|(?:\[.*?\])+) ?(?P<body>.*))$",
    ),
    _text(
        "syslog3164",
        r"^(?:<(?P<pri>\d{1,3})>)?(?P<ts>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d) "
        r"(?P<msg>\S+ (?:[^\s:\[]+(?:\[\d+\])?: )?(?P<body>.*))$",
        syslog_stamp,
    ),
    _text(
        "klog", r"^(?P<level>[IWEF])(?P<ts>\d{4} \d\d:\d\d:\d\d\.\d+) +(?P<msg>\d+ .*)$", klog_stamp
    ),
    _text(
        "slashed",
        r"^(?P<ts>\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d+)?) "
        r"(?:\[(?P<level>[a-z]+)\] )?(?P<msg>.*)$",
        slashed_stamp,
    ),
    _text(
        "bracketed",
        r"^\[(?P<ts>\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?"
        r'(?: ?(?:[Zz]|[+-]\d\d(?::?\d\d)?))?)\](?! ?") ?(?P<msg>.*)$',
    ),
    _text(
        "logfmt",
        r'(?:^|\s)(?:time|ts|t|timestamp)=(?P<q>"?)(?P<ts>\d{4}-\d\d-\d\d[T ][\d:.,]+'
        r"(?:[Zz]|[+-]\d\d:?\d\d)?)(?P=q)(?=\s|$)",
        anywhere=True,
    ),
    TextOrJson(),
)


def choose(head: list[str], modified: datetime) -> Format:
    """The first format that reads most of the lines of ``head`` any format reads."""
    texts = [line.rstrip("\r\n") for line in head if line.strip()]
    read = [[f.read(t, modified) is not None for t in texts] for f in FORMATS]
    readable = sum(map(any, zip(*read, strict=True)))
    return next(
        (f for f, hits in zip(FORMATS, read, strict=True) if 2 * sum(hits) > readable), FORMATS[-1]
    )


def records(lines: Iterable[str], modified: datetime) -> Iterator[Line]:
    """The records of one file's lines, read in the file's format; ``modified`` is its mtime."""
    lines = iter(lines)
    head = list(islice(lines, SAMPLE))
    chosen = choose(head, modified)
    stream = chain(head, lines)
    if chosen is CSVLOG:
        return _joined(_rows(stream))
    return _joined(_readings(stream, chosen, modified))


def _readings(
    stream: Iterable[str], chosen: Format, modified: datetime
) -> Iterator[tuple[str, Reading]]:
    others = [f for f in FORMATS if f is not chosen]
    for line in stream:
        text = line.rstrip("\r\n")
        reading = chosen.read(text, modified)
        # an indented line continues a record (stack frames): not worth trying every format
        if reading is None and text and not text[0].isspace():
            reading = next((r for f in others if (r := f.read(text, modified)) is not None), None)
        yield text, reading


def _rows(stream: Iterable[str]) -> Iterator[tuple[str, Reading]]:
    rows = csv.reader(stream)
    while True:
        try:
            cells = next(rows)
        except StopIteration:
            return
        except csv.Error as exc:  # a field over csv's size limit: say so in the record
            yield f"[unreadable csv row: {exc}]", None
            continue
        yield ",".join(cells), CSVLOG.row(cells)


def _joined(readings: Iterable[tuple[str, Reading]]) -> Iterator[Line]:
    last: Line | None = None
    for text, reading in readings:
        if isinstance(reading, tuple):
            if last is not None:
                yield last
            last = reading
        elif last is not None and text.strip() and len(last[2]) < MAX_MESSAGE_CHARS:
            more = text if reading is None else reading
            last = (last[0], last[1], f"{last[2]}\n{more}", last[3])
    if last is not None:
        yield last
