"""Log line formats: which style a file is written in, and each line as one record.

A file is read in the first of ``FORMATS`` that reads most of its first ``SAMPLE`` lines (of those
any format reads); a line that format cannot read is tried in the others, and a line none reads
continues the record before it (stack traces, PostgreSQL's DETAIL, HINT, CONTEXT and STATEMENT).
A text line's message is the line without its timestamp (and a level right after it); access
lines keep the whole line; a csvlog row reads as its stderr line would, with pgBadger's prefix.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from itertools import chain, islice

from .common import MAX_MESSAGE_CHARS
from .logfields import (
    Line,
    Stamp,
    clf_stamp,
    infer_level,
    iso_stamp,
    klog_stamp,
    level_of,
    read_json,
    slashed_stamp,
    status_level,
    syslog_stamp,
)

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
