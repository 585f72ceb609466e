"""What an answer says about what it could not read: failed reads and the data's range."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from .ports import ERROR, InvocationRecord
from .prose import shorten

#: At most this many failed reads are named in an answer.
MAX_FAILED_READS = 5
#: A failed read's error is cut (at a clause or word end) to this many characters.
MAX_ERROR_CHARS = 200
#: ``{signal: (first, last)}`` per configured signal; None where its backend cannot say.
DataRanges = Mapping[str, Sequence[str] | None]

_SIGNALS = {"en": {"metrics": "metrics", "logs": "logs"}, "zh": {"metrics": "指标", "logs": "日志"}}
_WORDS = {
    "en": {
        "data": "Data",
        "and": " and ",
        "before": "the {signals} cover {start} to {end}; nothing before {start} "
        "(the window starts {window}).",
        "after": "the {signals} cover {start} to {end}; nothing after {end} "
        "(the window ends {window}).",
        "outside": "the {signals} cover {start} to {end}; the window {wstart} to {wend} lies "
        "outside that range, so nothing in it could be read.",
        "moment": "the {signals} cover {start} to {end}; {wstart} lies outside that range, so "
        "nothing at that time could be read.",
    },
    "zh": {
        "data": "数据范围",
        "and": "和",
        "before": "{signals}覆盖 {start} 至 {end}；{start} 之前没有数据"
        "（时间窗口从 {window} 开始）。",
        "after": "{signals}覆盖 {start} 至 {end}；{end} 之后没有数据（时间窗口到 {window} 结束）。",
        "outside": "{signals}覆盖 {start} 至 {end}；时间窗口 {wstart} 至 {wend} 在此范围之外，"
        "读不到其中的任何数据。",
        "moment": "{signals}覆盖 {start} 至 {end}；{wstart} 在此范围之外，"
        "读不到那个时间的任何数据。",
    },
}


@dataclass(frozen=True)
class FailedRead:
    """A tool call of the run that failed: the tool, what it read (service or query), why."""

    tool: str
    target: str
    error: str


def failed_reads(
    records: Sequence[InvocationRecord], unreadable: Sequence[str] = ()
) -> list[FailedRead]:
    """The run's reads that failed or found no backend, after the unreadable backends."""
    seen: dict[tuple[str, str, str], None] = {("", "", str(e)): None for e in unreadable}
    for record in records:
        output = record.raw_output if isinstance(record.raw_output, Mapping) else {}
        if record.status == ERROR:
            error = str(output.get("error") or "")
        elif output.get("not_configured"):
            error = str(output.get("message") or "not configured")
        else:
            continue
        target = record.arguments.get("service") or record.arguments.get("query") or ""
        seen.setdefault((record.tool_name, str(target), error), None)
    return [FailedRead(tool, target, error) for tool, target, error in seen][:MAX_FAILED_READS]


def read_services(records: Sequence[InvocationRecord]) -> dict[str, str]:
    """Invocation id -> the service the read was about (reads of one service only)."""
    return {
        r.invocation_id: str(r.arguments["service"])
        for r in records
        if isinstance(r.arguments.get("service"), str)
    }


def failed_items(failed: Sequence[FailedRead]) -> list[tuple[str, str]]:
    """``(error, reads)`` per distinct error: what failed, then which reads it hit."""
    grouped: dict[str, list[str]] = {}
    for read in failed:
        error = shorten(read.error, MAX_ERROR_CHARS) if read.error else "-"
        reads = grouped.setdefault(error, [])
        reads.append(f"{read.tool} {read.target[:100]}".strip())
    return [
        (error, ", ".join(dict.fromkeys(r for r in reads if r))) for error, reads in grouped.items()
    ]


def parse_utc(value: Any) -> datetime | None:
    """An ISO-8601 time as an aware UTC datetime (no zone = UTC); None when it is not one."""
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.replace(tzinfo=moment.tzinfo or timezone.utc).astimezone(timezone.utc)


def _parse(value: Any, *, ceil: bool = False) -> datetime | None:
    """An ISO-8601 time in UTC at minute precision (rounded up with ``ceil``)."""
    if (moment := parse_utc(value)) is None:
        return None
    minute = moment.replace(second=0, microsecond=0)
    return minute + timedelta(minutes=1) if ceil and minute < moment else minute


@dataclass(frozen=True)
class RangeNote:
    """The data-range lines to show, and whether the window lies wholly outside the data."""

    lines: tuple[str, ...] = ()
    outside: bool = False


def range_note(
    window: Mapping[str, Any] | None, ranges: DataRanges | None, language: str
) -> RangeNote:
    """The data-range lines of an answer about ``window`` (the plan's, ISO-8601 UTC)."""
    window = window or {}
    start, end = _parse(window.get("start")), _parse(window.get("end"))
    moment = _parse(window.get("onset")) if window.get("kind") == "at" else None
    if moment is not None:
        start, end = moment, moment + timedelta(minutes=1)
    if start is None or end is None or not ranges:
        return RangeNote()
    words = _WORDS[language]
    by_range: dict[tuple[datetime, datetime], list[str]] = {}
    for signal, span in ranges.items():
        lo, hi = (
            (_parse(span[0]), _parse(span[1], ceil=True))
            if span and len(span) == 2
            else (None, None)
        )
        if lo is not None and hi is not None:
            by_range.setdefault((lo, hi), []).append(signal)
    # Wholly outside only when every signal stated its range and none reaches the window.
    outside = len(by_range) > 0 and sum(map(len, by_range.values())) == len(ranges)
    lines = []
    for (lo, hi), signals in by_range.items():
        named = words["and"].join(_SIGNALS[language].get(s, s) for s in signals)
        values = {"signals": named, "start": _iso(lo), "end": _iso(hi)}
        if end <= lo or start >= hi:
            shape = "outside" if moment is None else "moment"
            text = words[shape].format(**values, wstart=_iso(start), wend=_iso(end))
        else:
            outside = False
            if start < lo:
                text = words["before"].format(**values, window=_iso(start))
            elif end > hi:
                text = words["after"].format(**values, window=_iso(end))
            else:
                continue
        lines.append(f"**{words['data']}:** {text}")
    return RangeNote(tuple(lines), outside)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
