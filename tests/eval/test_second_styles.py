"""Every log style of the second generator reaches the product's backends intact.

Raw files are read back through ``LOG_DIR`` (``LogFileBackend``), folder-format records through
``TELEMETRY_DIR`` (``DemoTelemetryBackend``): each record has the event's timestamp, the level
the style carries and the message a reader of that style gets.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from eval.second.logs import world_events
from eval.second.run import WorldFixture
from eval.second.styles import LOG_DIR_STYLES, Event, render, stored
from eval.second.writer import _context, log_dir
from webapp.demo.backend import DemoTelemetryBackend
from webapp.tools.backends.logfiles import LogFileBackend

FOLDER_STYLES = {
    "envoy_access",
    "envoy_app",
    "nginx_access",
    "nginx_error",
    "syslog3164",
    "syslog5424",
    "csvlog",
    "bunyan",
    "zap",
    "log4j2",
    "journald_json",
}
#: Styles whose timestamps have whole seconds.
SECONDS = {"nginx_json", "journald_iso"}


def _expected_from_files(style: str, event: Event) -> tuple[str, str]:
    """``(level, message)`` a ``LOG_DIR`` reader gets: the text after the timestamp (and the
    level when the style has one)."""
    raw = render(style, event)
    if style == "zap":
        return event.level, event.text.split("\n")[0]
    if style == "nginx_json":
        return "INFO", raw
    if style == "journald_iso":
        return "INFO", raw.split(" ", 1)[1]
    return event.level, re.split(r"\s+", raw, maxsplit=2)[2]


def _samples(events: list[tuple[Event, str]], style: str) -> list[Event]:
    found = [e for e, s in events if s == style]
    errors = [e for e in found if e.level != "INFO"]
    return (errors[:15] + found[:: max(1, len(found) // 15)])[:30]


def _record(backend: object, event: Event, style: str, message: str) -> dict[str, str]:
    width = timedelta(seconds=1) if style in SECONDS else timedelta(milliseconds=1)
    start = event.moment.replace(microsecond=0) if style in SECONDS else event.moment
    found = backend.query_logs(service=event.service, start=start, end=start + width, limit=200)  # type: ignore[attr-defined]
    matches = [r for r in found["records"] if r["message"] == message]
    assert matches, (
        style,
        event.service,
        message[:120],
        [r["message"][:120] for r in found["records"]],
    )
    return matches[0]


@pytest.mark.parametrize("style", sorted(LOG_DIR_STYLES))
def test_raw_files_round_trip_through_the_log_dir_backend(
    style: str, second_worlds: dict[int, WorldFixture]
) -> None:
    fixture = second_worlds[2]
    folder = log_dir(fixture.folder)
    assert folder is not None
    backend = LogFileBackend(folder)
    samples = _samples(world_events(fixture.world), style)
    assert samples
    for event in samples:
        level, message = _expected_from_files(style, event)
        record = _record(backend, event, style, message)
        assert record["level"] == level
        precision = 19 if style in SECONDS else 23
        assert record["timestamp"][:precision] == _stamp(event)[:precision]


@pytest.mark.parametrize("style", sorted(FOLDER_STYLES))
def test_collected_records_round_trip_through_the_folder_backend(
    style: str, second_worlds: dict[int, WorldFixture]
) -> None:
    fixture = second_worlds[1]
    backend = DemoTelemetryBackend(fixture.folder)
    samples = _samples(world_events(fixture.world), style)
    assert samples
    for event in samples:
        context = _context(fixture.world, event) if style == "csvlog" else None
        level, message = stored(style, event, render(style, event, context))
        record = _record(backend, event, style, message)
        assert record["level"] == level and record["timestamp"] == _stamp(event)


def test_stack_traces_stay_with_their_record_and_levels_come_from_the_style(
    second_worlds: dict[int, WorldFixture],
) -> None:
    fixture = second_worlds[2]
    backend = LogFileBackend(log_dir(fixture.folder))  # type: ignore[arg-type]
    world = fixture.world
    found = backend.query_logs(
        service="order-api", start=world.start, end=world.end, keyword="lock timeout", limit=5
    )
    assert found["total"] > 20
    assert all(
        r["level"] == "ERROR" and "\n\tat com.dashfood" in r["message"] for r in found["records"]
    )
    csv = next(e for e, s in world_events(second_worlds[1].world) if s == "csvlog")
    row = render("csvlog", csv, _context(second_worlds[1].world, csv))
    assert row.count(",") >= 25 and ",LOG,00000," in row
    assert stored(
        "envoy_access", Event(world.start, "x", "INFO", request=_request(503)), "line"
    ) == ("ERROR", "line")
    assert stored(
        "nginx_access", Event(world.start, "x", "INFO", request=_request(404)), "line"
    ) == ("WARN", "line")


def _stamp(event: Event) -> str:
    return event.moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{event.moment.microsecond // 1000:03d}Z"


def _request(status: int) -> dict[str, object]:
    return {
        "method": "GET",
        "path": "/",
        "status": status,
        "bytes": 1,
        "ms": 1,
        "client": "1.2.3.4",
        "ua": "t",
    }
