"""Logs from files (``LOG_DIR``): ``<service>.log`` (anything after the first dot, rotated and
``.gz`` files included) or every file of ``<service>/``, hidden files ignored.

Each file is read in its own log format (:mod:`.logformats`), re-read when its size or mtime
changes. Files that cannot be read, or have no readable timestamp, are listed in ``unread``.
"""

from __future__ import annotations

import gzip
import io
import math
import os
import threading
import zlib
from bisect import bisect_left
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime, timezone
from operator import itemgetter
from pathlib import Path
from typing import IO, Any

from .common import Clock, iso_epoch, record, unknown_service, utc_now
from .logformats import Line, records
from .partial import PartialSource, timed_probe
from .port import TelemetryError

#: Longest line read; the rest of a longer one is dropped (the record keeps its start).
MAX_LINE_CHARS = 65536


@dataclass
class _Index:
    times: list[float] = field(default_factory=list)
    rows: list[Line] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)
    #: Records built so far, by row: only rows a query returns are formatted, each once.
    built: dict[int, dict[str, Any]] = field(default_factory=dict)

    def record(self, at: int, service: str) -> dict[str, Any]:
        """Row ``at`` as a ``query_logs`` record."""
        if at not in self.built:
            moment, level, message, trace = self.rows[at]
            self.built[at] = record(moment, service, level, message, trace)
        return dict(self.built[at])


def _capped(handle: IO[str]) -> Iterator[str]:
    whole = True
    while line := handle.readline(MAX_LINE_CHARS):
        if whole:
            yield line
        whole = line.endswith("\n")


@contextmanager
def _opened(path: Path) -> Iterator[IO[str]]:
    """``path`` as text (``.gz`` decompressed); binary files (NUL bytes) are refused."""
    raw: gzip.GzipFile | io.BufferedReader
    with gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb") as raw:
        if b"\0" in raw.peek(8192)[:8192]:
            raise OSError("binary file (NUL bytes)")
        yield io.TextIOWrapper(raw, encoding="utf-8", errors="replace")


def _listing(folder: str | Path) -> list[os.DirEntry[str]]:
    """Entries of ``folder`` by name, hidden ones left out (types come from the listing)."""
    with os.scandir(folder) as entries:
        return sorted((e for e in entries if not e.name.startswith(".")), key=lambda e: e.name)


def _signature(path: Path) -> tuple[str, int, int]:
    try:
        found = path.stat()
    except OSError:  # rotated away since the folder was listed
        return str(path), -1, -1
    return str(path), found.st_size, found.st_mtime_ns


def _first_line(path: Path) -> str:
    with _opened(path) as handle:
        return next((line.strip()[:120] for line in _capped(handle) if line.strip()), "")


class LogFileBackend(PartialSource):
    """The logs signal of ``TelemetryBackend`` over a folder of log files."""

    system = "log files"

    name = "log_dir"

    def __init__(self, folder: Path, *, clock: Clock = utc_now) -> None:
        self.folder = Path(folder)
        self._clock = clock
        self._lock = threading.Lock()
        self._indexes: dict[str, tuple[tuple[Any, ...], _Index]] = {}

    def _files(self, only: str | None = None) -> dict[str, list[Path]]:
        """Files by service; with ``only``, the one service folder listed is that one."""
        try:
            entries = _listing(self.folder)
        except OSError:
            raise TelemetryError(f"LOG_DIR {self.folder} is not a readable folder") from None
        found: dict[str, list[Path]] = {}
        for entry in entries:
            if entry.is_dir() and only in (None, entry.name):
                with suppress(OSError):  # a folder that cannot be listed holds no files
                    files = [Path(e.path) for e in _listing(entry.path) if e.is_file()]
                    found.setdefault(entry.name, []).extend(files)
            elif entry.is_file():
                found.setdefault(entry.name.split(".", 1)[0], []).append(Path(entry.path))
        return {service: files for service, files in found.items() if files}

    def services(self) -> list[str]:
        """One service per file stem or folder."""
        return self._listed(lambda: sorted(self._files()))

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

    def _index(self, service: str, files: list[Path]) -> _Index:
        signature = tuple(_signature(p) for p in files)
        with self._lock:
            cached = self._indexes.get(service)
            if cached and cached[0] == signature:
                return cached[1]
            rows: list[tuple[float, Line]] = []
            unread: list[str] = []
            for path in files:
                found, problem = self._parse(path)
                rows.extend(found)
                if problem:
                    unread.append(f"{path.relative_to(self.folder)}: {problem}")
            rows.sort(key=itemgetter(0))
            index = _Index([t for t, _ in rows], [r for _, r in rows], unread)
            self._indexes[service] = (signature, index)
            return index

    @staticmethod
    def _parse(path: Path) -> tuple[list[tuple[float, Line]], str | None]:
        """The records of one file by epoch, and what kept some or all of it from being read."""
        rows: list[tuple[float, Line]] = []
        try:
            modified = datetime.fromtimestamp(path.stat().st_mtime, tz=timezone.utc)
            with _opened(path) as handle:
                rows.extend((row[0].timestamp(), row) for row in records(_capped(handle), modified))
            first = "" if rows else _first_line(path)
            problem = "no line starts with a timestamp in a known format (first line: {!r})"
            return rows, problem.format(first) if first else None
        except (OSError, EOFError, zlib.error) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            return rows, f"{reason} (after {len(rows)} records)" if rows else reason

    def _logs(
        self,
        name: str,
        start: datetime,
        end: datetime,
        level: str | None,
        keyword: str | None,
        limit: int,
    ) -> dict[str, Any]:
        files = self._files(name)
        if name not in files:
            raise unknown_service(name, sorted(self._files()))
        index = self._index(name, files[name])
        if index.unread and not index.rows:
            raise TelemetryError(f"cannot read the logs of {name}: {'; '.join(index.unread)}")
        lo = bisect_left(index.times, start.timestamp())
        hi = bisect_left(index.times, end.timestamp())
        needle = (keyword or "").strip().lower()
        rows = index.rows
        matches = [
            at
            for at in range(lo, hi)
            if (level is None or rows[at][1] == level)
            and (not needle or needle in rows[at][2].lower())
        ]
        answer: dict[str, Any] = {
            "records": [index.record(at, name) for at in matches[: -limit - 1 : -1]],
            "total": len(matches),
            "truncated": len(matches) > limit,
        }
        if index.unread:
            answer["unread"] = list(index.unread)
        return answer

    def probe(self) -> dict[str, Any]:
        """Whether the folder is readable, and how long listing it took."""
        return timed_probe("log files", str(self.folder), self._files)
