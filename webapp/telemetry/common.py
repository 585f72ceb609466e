"""Shapes and conversions every real backend shares: windows, levels, summaries, timestamps."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from typing import Any

from .port import TelemetryError

LEVELS = ("ERROR", "WARN", "INFO")
ALERT_STATES = ("firing", "pending", "all")
#: Source levels folded onto the three the tools know (anything unknown counts as INFO).
LEVEL_ALIASES = {
    **dict.fromkeys(
        ("ERROR", "ERR", "FATAL", "CRITICAL", "CRIT", "ALERT", "EMERG", "PANIC", "SEVERE"), "ERROR"
    ),
    **dict.fromkeys(("WARN", "WARNING"), "WARN"),
    **dict.fromkeys(("INFO", "NOTICE", "DEBUG", "TRACE"), "INFO"),
}
#: Every source spelling of each level, for backends that filter on the server.
LEVEL_SPELLINGS = {
    level: sorted(name for name, canon in LEVEL_ALIASES.items() if canon == level)
    for level in LEVELS
}

Clock = Callable[[], datetime]
#: Longest message a record carries (a multi-megabyte line would crowd out the model's context).
MAX_MESSAGE_CHARS = 4000


def utc_now() -> datetime:
    """The real clock, whole seconds, UTC."""
    return datetime.now(timezone.utc).replace(microsecond=0)


def utc(moment: datetime, name: str) -> datetime:
    """``moment`` as aware UTC (naive means UTC)."""
    if not isinstance(moment, datetime):
        raise TelemetryError(f"{name} must be a datetime, got {type(moment).__name__}")
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def window(start: datetime, end: datetime) -> tuple[datetime, datetime]:
    """A checked ``(start, end)`` pair in UTC."""
    start, end = utc(start, "start"), utc(end, "end")
    if start > end:
        raise TelemetryError(f"start {iso(start)} is after end {iso(end)}")
    return start, end


def iso(moment: datetime, *, millis: bool = False) -> str:
    """``2026-11-30T10:05:00Z`` (or with milliseconds)."""
    moment = utc(moment, "timestamp")
    if millis:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_epoch(seconds: float) -> str:
    """ISO-8601 UTC of an epoch in seconds."""
    return iso(datetime.fromtimestamp(seconds, tz=timezone.utc))


def parse_timestamp(text: Any) -> datetime | None:
    """An ISO-8601 string (``Z``, offsets, space separator, comma decimals) or epoch number
    (seconds, milliseconds, microseconds or nanoseconds, told apart by magnitude)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        seconds = float(text)
        if seconds > 1e17:  # nanoseconds
            seconds /= 1e9
        elif seconds > 1e14:  # microseconds (journald)
            seconds /= 1e6
        elif seconds > 1e11:  # milliseconds
            seconds /= 1e3
        return datetime.fromtimestamp(seconds, tz=timezone.utc)
    if not isinstance(text, str) or not text.strip():
        return None
    value = text.strip().replace(",", ".").replace("z", "Z")
    if value.endswith("Z"):
        value = value[:-1] + "+00:00"
    if "." in value:  # fromisoformat before 3.11 takes at most 6 fractional digits
        head, _, tail = value.partition(".")
        digits = len(tail) - len(tail.lstrip("0123456789"))
        value = f"{head}.{tail[:digits][:6].ljust(6, '0')}{tail[digits:]}"
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed.replace(tzinfo=timezone.utc) if parsed.tzinfo is None else parsed


def level_filter(level: str | None) -> str | None:
    """The canonical level a query filters on, or None for no filter."""
    if level is None or not str(level).strip():
        return None
    wanted = LEVEL_ALIASES.get(str(level).strip().upper())
    if wanted is None:
        raise TelemetryError(f"unknown level {level!r}; valid levels: {', '.join(LEVELS)}")
    return wanted


def canonical_level(raw: Any) -> str:
    """A source level as ERROR, WARN or INFO."""
    return LEVEL_ALIASES.get(str(raw or "").strip().upper(), "INFO")


def alert_state(state: str | None) -> str:
    """A checked alert state filter."""
    wanted = (state or "firing").strip().lower()
    if wanted not in ALERT_STATES:
        raise TelemetryError(
            f"unknown alert state {state!r}; valid states: {', '.join(ALERT_STATES)}"
        )
    return wanted


def check_limit(limit: int) -> None:
    """``limit`` must be positive."""
    if limit < 1:
        raise TelemetryError(f"limit must be at least 1, got {limit}")


def number(value: Any) -> float | None:
    """A sample value as a float, or None for NaN/Inf (JSON cannot carry them)."""
    try:
        found = float(value)
    except (TypeError, ValueError):
        return None
    return found if math.isfinite(found) else None


def summary(values: Iterable[float | None], unit: str, decimals: int = 4) -> dict[str, Any]:
    """``{"min", "max", "avg", "last", "unit"}`` over the finite values."""
    found = [v for v in values if v is not None]
    if not found:
        return {"min": None, "max": None, "avg": None, "last": None, "unit": unit}
    return {
        "min": min(found),
        "max": max(found),
        "avg": round(sum(found) / len(found), decimals),
        "last": found[-1],
        "unit": unit,
    }


def record(
    timestamp: datetime, service: str, level: str, message: str, trace_id: Any
) -> dict[str, Any]:
    """One ``query_logs`` record."""
    return {
        "timestamp": iso(timestamp, millis=True),
        "service": service,
        "level": level,
        "message": message
        if len(message) <= MAX_MESSAGE_CHARS
        else message[:MAX_MESSAGE_CHARS] + " ...[truncated]",
        "trace_id": str(trace_id) if trace_id not in (None, "") else None,
    }


def alert(
    name: Any, severity: Any, service: Any, notes: Any, state: str, active_at: datetime | None
) -> dict[str, Any]:
    """One ``query_alerts`` alert; ``notes``: its annotations (description, else summary)."""
    notes = notes if isinstance(notes, dict) else {}
    return {
        "alert_name": name,
        "severity": severity,
        "service": service,
        "description": notes.get("description") or notes.get("summary") or "",
        "state": state,
        "active_at": iso(active_at) if active_at else None,
    }


def unknown_service(service: str, services: list[str]) -> TelemetryError:
    """The error for a service the backend does not know, listing (some of) the valid ones."""
    shown = ", ".join(services[:50]) + (" ..." if len(services) > 50 else "")
    return TelemetryError(f"unknown service {service!r}; valid services: {shown or 'none found'}")
