"""Logs from files (``LOG_DIR``): one file or one folder per service.

Layout: ``LOG_DIR/<service>.log`` (any extension; the service is the name before the first
dot, so ``api.log.1`` and ``api.jsonl.gz`` belong to ``api``) or ``LOG_DIR/<service>/*`` (every
file in the folder, rotated and ``.gz`` ones included). Hidden files are ignored.

Lines are JSON objects or plain text:

* JSON: the timestamp from ``timestamp``, ``@timestamp``, ``time``, ``ts`` or ``datetime``
  (ISO-8601 or epoch s/ms/ns), the level from ``level``, ``severity``, ``lvl`` or
  ``log.level``, the message from ``message``, ``msg`` or ``log``, the trace id from
  ``trace_id``, ``traceId``, ``trace.id`` or ``traceID``;
* plain text: ``<ISO-8601 timestamp> [LEVEL] message`` (the level optionally in brackets);
  a line without a leading timestamp continues the previous record (stack traces).

Levels fold onto ERROR/WARN/INFO (FATAL and CRITICAL are ERROR, DEBUG and TRACE are INFO);
a record without one is INFO. Files are parsed on first use and again when one changes (size or
modification time). "Now" is the clock.
"""

from __future__ import annotations

import gzip
import json
import math
import re
import threading
import time
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from .common import (
    MAX_MESSAGE_CHARS,
    Clock,
    canonical_level,
    check_limit,
    iso_epoch,
    level_filter,
    parse_timestamp,
    record,
    unknown_service,
    utc_now,
)
from .common import window as checked_window
from .logsource import LogSource
from .port import TelemetryError

_TIME_KEYS = ("timestamp", "@timestamp", "time", "ts", "datetime")
_LEVEL_KEYS = ("level", "severity", "lvl", "log.level", "loglevel")
_MESSAGE_KEYS = ("message", "msg", "log")
_TRACE_KEYS = ("trace_id", "traceId", "trace.id", "traceID")
_PLAIN = re.compile(
    r"^(?P<ts>\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|z|[+-]\d{2}:?\d{2})?)"
    r"\s+(?:\[?(?P<level>[A-Za-z]{3,8})\]?\s+)?(?P<msg>.*)$"
)
_TRACE_IN_TEXT = re.compile(r"\btrace(?:_id|Id|ID)?[=:]\s*([0-9a-fA-F-]{8,64})")


@dataclass
class _Index:
    times: list[float] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)


def _field(item: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if key in item:
            return item[key]
        head, _, tail = key.partition(".")
        if tail and isinstance(item.get(head), dict) and tail in item[head]:
            return item[head][tail]
    return None


def _lines(path: Path) -> Iterator[str]:
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as handle:
            yield from handle
    else:
        with path.open(encoding="utf-8", errors="replace") as handle:
            yield from handle


def parse_line(line: str) -> tuple[datetime, str, str, Any] | None:
    """``(timestamp, level, message, trace_id)`` of one line, or None when it has no timestamp."""
    text = line.rstrip("\r\n")
    if text.lstrip().startswith("{"):
        try:
            item = json.loads(text)
        except ValueError:
            item = None
        if isinstance(item, dict):
            moment = parse_timestamp(_field(item, _TIME_KEYS))
            if moment is None:
                return None
            message = _field(item, _MESSAGE_KEYS)
            return (
                moment,
                canonical_level(_field(item, _LEVEL_KEYS)),
                str(message) if message is not None else text,
                _field(item, _TRACE_KEYS),
            )
    match = _PLAIN.match(text)
    if not match:
        return None
    moment = parse_timestamp(match["ts"])
    if moment is None:
        return None
    level, message = match["level"], match["msg"]
    if level and level.upper() not in (
        "ERROR",
        "ERR",
        "FATAL",
        "CRITICAL",
        "CRIT",
        "WARN",
        "WARNING",
        "INFO",
        "NOTICE",
        "DEBUG",
        "TRACE",
    ):
        message, level = f"{level} {message}".strip(), None
    trace = _TRACE_IN_TEXT.search(message)
    return moment, canonical_level(level), message, trace.group(1) if trace else None


class LogFileBackend(LogSource):
    """The logs signal of ``TelemetryBackend`` over a folder of log files."""

    system = "log files"

    name = "log_dir"

    def __init__(
        self, folder: Path, *, aliases: dict[str, list[str]] | None = None, clock: Clock = utc_now
    ) -> None:
        self.folder = Path(folder)
        self._aliases = aliases or {}
        self._clock = clock
        self._lock = threading.Lock()
        self._indexes: dict[str, tuple[tuple[Any, ...], _Index]] = {}

    def reference_time(self) -> datetime:
        """The clock."""
        return self._clock()

    def _files(self) -> dict[str, list[Path]]:
        if not self.folder.is_dir():
            raise TelemetryError(f"LOG_DIR {self.folder} is not a readable folder")
        found: dict[str, list[Path]] = {}
        for entry in sorted(self.folder.iterdir()):
            if entry.name.startswith("."):
                continue
            if entry.is_dir():
                files = [p for p in sorted(entry.iterdir()) if p.is_file()]
                found.setdefault(entry.name, []).extend(
                    p for p in files if not p.name.startswith(".")
                )
            elif entry.is_file():
                found.setdefault(entry.name.split(".", 1)[0], []).append(entry)
        return {service: files for service, files in found.items() if files}

    def services(self) -> list[str]:
        """One service per file stem or folder."""
        try:
            found = sorted(self._files())
        except TelemetryError as exc:
            self.catalog_error = str(exc)
            return []
        self.catalog_error = None
        return found

    def service_aliases(self) -> dict[str, list[str]]:
        """Configured aliases of services that have log files."""
        known = set(self.services())
        return {s: list(names) for s, names in self._aliases.items() if s in known}

    def _index(self, service: str, files: list[Path]) -> _Index:
        signature = tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files)
        with self._lock:
            cached = self._indexes.get(service)
            if cached and cached[0] == signature:
                return cached[1]
            rows: list[tuple[float, dict[str, Any]]] = []
            for path in files:
                rows.extend(self._parse(service, path))
            rows.sort(key=lambda row: row[0])
            index = _Index([t for t, _ in rows], [r for _, r in rows])
            self._indexes[service] = (signature, index)
            return index

    @staticmethod
    def _parse(service: str, path: Path) -> list[tuple[float, dict[str, Any]]]:
        rows: list[tuple[float, dict[str, Any]]] = []
        for line in _lines(path):
            parsed = parse_line(line)
            if parsed is None:
                last = rows[-1][1] if rows else None
                if last is not None and line.strip() and len(last["message"]) < MAX_MESSAGE_CHARS:
                    last["message"] += "\n" + line.rstrip("\r\n")  # a stack trace continues
                continue
            moment, level, message, trace = parsed
            rows.append((moment.timestamp(), record(moment, service, level, message, trace)))
        return rows

    def data_range(self) -> dict[str, tuple[str, str] | None]:
        """The first and last timestamp over every service's files (None: no records)."""
        times = [
            moment
            for service, paths in self._files().items()
            for index in (self._index(service, paths),)
            if index.times
            for moment in (index.times[0], index.times[-1])
        ]
        if not times:
            return {"logs": None}
        return {"logs": (iso_epoch(min(times)), iso_epoch(math.ceil(max(times))))}

    def query_logs(
        self,
        *,
        service: str,
        start: datetime,
        end: datetime,
        level: str | None = None,
        keyword: str | None = None,
        limit: int = 50,
    ) -> dict[str, Any]:
        """Records of ``service`` in ``[start, end)``, newest first."""
        files = self._files()
        name = str(service).strip()
        if name not in files:
            raise unknown_service(service, sorted(files))
        start, end = checked_window(start, end)
        check_limit(limit)
        wanted = level_filter(level)
        index = self._index(name, files[name])
        lo = bisect_left(index.times, start.timestamp())
        hi = bisect_left(index.times, end.timestamp())
        needle = (keyword or "").strip().lower()
        matches = [
            row
            for row in index.rows[lo:hi]
            if (wanted is None or row["level"] == wanted)
            and (not needle or needle in row["message"].lower())
        ]
        chosen = matches[: -limit - 1 : -1]
        return {
            "records": [dict(row) for row in chosen],
            "total": len(matches),
            "truncated": len(matches) > limit,
        }

    def probe(self) -> dict[str, Any]:
        """Whether the folder is readable, how many services it holds, and how long listing took."""
        started = time.perf_counter()
        try:
            count = len(self._files())
            error = None
        except TelemetryError as exc:
            count, error = 0, str(exc)
        return {
            "system": "log files",
            "url": str(self.folder),
            "reachable": error is None,
            "version": None,
            "latencyMs": round((time.perf_counter() - started) * 1000, 1),
            "services": count,
            "error": error,
        }
