"""The analysis tools: ``detect_anomalies``, ``log_patterns`` and ``triage``, over the port.

The window defaults to the backend's recent range (``RECENT_RANGE`` before its reference time).
Over a backend that declares ``immutable = True`` an output depends on the arguments alone, so
up to ``MEMO_SIZE`` outputs per backend are kept as JSON; ``forget_outputs()`` drops them.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from ..analysis.anomalies import service_anomalies, service_log_patterns
from ..analysis.series import RECENT_RANGE, forget_reads, recent_range
from ..analysis.triage import triage
from ..telemetry import TelemetryBackend
from .registry import TELEMETRY, ToolOutput, ToolSpec, checked_window, object_schema, parse_time

#: ``triage`` reads this much calm before the start of its window (each service's baseline).
TRIAGE_BASELINE = timedelta(hours=1)
#: Outputs kept per immutable backend (the oldest goes first): a few MB at most.
MEMO_SIZE = 128

_MEMOS: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], str]] = weakref.WeakKeyDictionary()


def forget_outputs() -> None:
    """Drop every kept output (and every kept log read: ``series.log_counts``)."""
    _MEMOS.clear()
    forget_reads()


def _memoised(
    backend: TelemetryBackend, key: tuple[Any, ...], compute: Callable[[], dict[str, Any]]
) -> ToolOutput:
    """``compute()``, kept per ``key`` (as its JSON, which the output carries too: the result
    message embeds it) when ``backend`` declares its data immutable."""
    if getattr(backend, "immutable", False) is not True:
        return ToolOutput(compute())
    memo = _MEMOS.setdefault(backend, {})
    if (kept := memo.get(key)) is not None:
        return ToolOutput(json.loads(kept), raw_json=kept)
    output = compute()
    if len(memo) >= MEMO_SIZE:
        memo.pop(next(iter(memo)))
    memo[key] = text = json.dumps(output, ensure_ascii=False)
    return ToolOutput(output, raw_json=text)


TIME_SCHEMA = {"type": "string", "format": "date-time", "maxLength": 40}


def analysis_window(
    backend: TelemetryBackend, arguments: dict[str, Any]
) -> tuple[datetime, datetime]:
    """``[start, end]`` from the arguments; defaults to the backend's recent range."""
    recent_start, recent_end = recent_range(backend)
    end = parse_time("end", arguments.get("end")) or recent_end
    start = parse_time("start", arguments.get("start")) or min(recent_start, end - RECENT_RANGE)
    return checked_window(start, end)


def analysis_tools(
    backend: TelemetryBackend,
    aliases: dict[str, list[str]] | None = None,
    descriptions: dict[str, list[str]] | None = None,
) -> list[ToolSpec]:
    """``detect_anomalies``, ``log_patterns`` and ``triage`` over ``backend`` (``aliases`` and
    ``descriptions``: what each service is called and what it does, for ``triage``'s hint)."""
    services = backend.services()
    now = backend.reference_time().strftime("%Y-%m-%dT%H:%M:%SZ")
    hours = int(RECENT_RANGE.total_seconds() // 3600)
    service = {"type": "string", "enum": services}

    def anomalies(service: str, start: datetime, end: datetime) -> ToolOutput:
        return _memoised(
            backend,
            ("detect_anomalies", service, start, end),
            lambda: service_anomalies(backend, service, start, end),
        )

    def detect_anomalies(args: dict[str, Any]) -> ToolOutput:
        return anomalies(args["service"], *analysis_window(backend, args))

    def run_triage(args: dict[str, Any]) -> ToolOutput:
        start, end = analysis_window(backend, args)
        # A stated start is where trouble may begin: the baselines reach back before it.
        begin = start - TRIAGE_BASELINE if args.get("start") else start
        hint = str(args.get("hint") or "")[:500] or None
        return _memoised(
            backend,
            ("triage", begin, start, end, hint),
            lambda: triage(
                backend,
                (start, end),
                lambda service: anomalies(service, begin, end).raw_output,
                hint=hint,
                aliases=aliases,
                descriptions=descriptions,
            ),
        )

    def log_patterns(args: dict[str, Any]) -> ToolOutput:
        start, end = analysis_window(backend, args)
        service, level = args["service"], args.get("level")
        return _memoised(
            backend,
            ("log_patterns", service, start, end, level),
            lambda: service_log_patterns(backend, service, start, end, level),
        )

    return [
        ToolSpec(
            "detect_anomalies",
            "Change points of one service's every metric, ERROR/WARN log rate and log template: "
            "onset, baseline (median, spread), incident (median, peak, peak_at), change, robust "
            f"z, direction, points. Window defaults to the {hours} hours before now ({now}); "
            "start well before the suspected onset, so a baseline exists.",
            object_schema("service", service=service, start=TIME_SCHEMA, end=TIME_SCHEMA),
            detect_anomalies,
            TELEMETRY,
        ),
        ToolSpec(
            "log_patterns",
            "One service's log templates, counted before and after the onset of its log rate; "
            "new=true: not seen before it, or begun shortly before and still going on. Level "
            "defaults to ERROR and WARN. Window "
            f"defaults to the {hours} hours before now ({now}).",
            object_schema(
                "service",
                service=service,
                start=TIME_SCHEMA,
                end=TIME_SCHEMA,
                level={"type": "string", "enum": ["ERROR", "WARN", "INFO"]},
            ),
            log_patterns,
            TELEMETRY,
        ),
        ToolSpec(
            "triage",
            "For a question naming no service: every service's changes in [start, end] (signals, "
            "new or surging log templates, alerts) against the hour before, suspects ranked by "
            "onset and tied into incidents by log lines naming each other or onset order. hint: "
            "the question's words (marks the services it describes). Window defaults to the "
            f"{hours} hours before now ({now}).",
            object_schema(
                start=TIME_SCHEMA, end=TIME_SCHEMA, hint={"type": "string", "maxLength": 500}
            ),
            run_triage,
            TELEMETRY,
        ),
    ]
