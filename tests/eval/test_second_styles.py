"""Every log style of the second generator reaches the product intact through ``LOG_DIR``.

Each world's raw files are read back with ``LogFileBackend``: each record has the event's
timestamp, the level the style carries (its own severity, an access line's status class; a
style without one, journald's ``short-iso``, gets the level its text names, else INFO) and the
message a reader of that style gets (the line without its timestamp, a JSON record's message
with its stack, an access line whole, a csvlog row as its stderr line).
"""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest

from eval.second.logs import world_events
from eval.second.run import WorldFixture
from eval.second.styles import Event, render
from eval.second.writer import _context, log_dir
from webapp.telemetry.logfiles import LogFileBackend

#: Styles by the world that writes them: 1 self-hosted (streaming video), 2 managed (food).
STYLES = {
    1: ("bunyan", "csvlog", "envoy_access", "envoy_app", "journald_json", "log4j2",
        "nginx_access", "nginx_error", "syslog3164", "syslog5424", "zap"),
    2: ("journald_iso", "log4j2", "nginx_json", "zap"),
}  # fmt: skip
#: Styles whose timestamps have whole seconds.
SECONDS = {"nginx_json", "journald_iso", "nginx_access", "nginx_error", "syslog3164"}
_STATUS = {"envoy_access", "nginx_access", "nginx_json"}
_NAMED = {"ERROR": "ERROR", "WARNING": "WARN", "INFO": "INFO"}


def _expected(style: str, event: Event, raw: str) -> tuple[str, str]:
    """``(level, message)`` a reader of ``style`` gets from ``raw``."""
    head, _, rest = event.text.partition("\n")
    if style in _STATUS:
        status = int(event.request["status"])
        return ("ERROR" if status >= 500 else "WARN" if status >= 400 else "INFO"), raw
    if style == "zap":
        return event.level, f"{head}\n{rest}" if rest else head
    if style == "bunyan":  # err.stack repeats the message on its first line: read once
        return event.level, f"{head}\n{rest}" if rest and event.level == "ERROR" else head
    if style == "journald_json":
        return event.level, json.loads(raw)["MESSAGE"]
    if style == "journald_iso":
        named = re.search(r"\]: \[(ERROR|WARNING|INFO)\] ", raw)
        return (_NAMED[named.group(1)] if named else "INFO"), raw.split(" ", 1)[1]
    if style == "envoy_app":
        return event.level, raw[raw.index("]") + 1 :]
    if style == "nginx_error":
        return event.level, re.split(r" ", raw, maxsplit=3)[3]
    if style == "syslog3164":
        return event.level, re.sub(r"^<\d+>\w{3} +\d+ \S+ ", "", raw)
    if style == "syslog5424":
        return event.level, raw.split(" ", 2)[2]
    return event.level, re.split(r"\s+", raw, maxsplit=2)[2]  # log4j2


def _samples(events: list[tuple[Event, str]], style: str) -> list[Event]:
    found = [e for e, s in events if s == style]
    errors = [e for e in found if e.level != "INFO"]
    return (errors[:15] + found[:: max(1, len(found) // 15)])[:30]


def _records(backend: LogFileBackend, event: Event, style: str) -> list[dict[str, str]]:
    width = timedelta(seconds=1) if style in SECONDS else timedelta(milliseconds=1)
    start = event.moment.replace(microsecond=0) if style in SECONDS else event.moment
    found = backend.query_logs(service=event.service, start=start, end=start + width, limit=200)
    assert "unread" not in found, found["unread"]
    return list(found["records"])


def _stamp(event: Event) -> str:
    return event.moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{event.moment.microsecond // 1000:03d}Z"


@pytest.mark.parametrize(
    ("seed", "style"), [(seed, style) for seed, styles in STYLES.items() for style in styles]
)
def test_raw_files_round_trip_through_the_log_dir_backend(
    seed: int, style: str, second_worlds: dict[int, WorldFixture]
) -> None:
    fixture = second_worlds[seed]
    backend = LogFileBackend(log_dir(fixture.folder))
    samples = _samples(world_events(fixture.world), style)
    assert samples
    for event in samples:
        context = _context(fixture.world, event) if style == "csvlog" else None
        raw = render(style, event, context)
        records = _records(backend, event, style)
        if style == "csvlog":
            level, message = event.level, event.text.partition("|")[0]
            matches = [r for r in records if f":  {message}" in r["message"]]
            assert matches and f"app={context['app']}" in matches[0]["message"], records  # type: ignore[index]
        else:
            level, message = _expected(style, event, raw)
            matches = [r for r in records if r["message"] == message]
        assert matches, (style, event.service, message[:120], [r["message"][:120] for r in records])
        assert matches[0]["level"] == level, (style, message[:120])
        precision = 19 if style in SECONDS else 23
        assert matches[0]["timestamp"][:precision] == _stamp(event)[:precision]


def test_stack_traces_stay_with_their_record_and_csv_rows_have_every_column(
    second_worlds: dict[int, WorldFixture],
) -> None:
    fixture = second_worlds[2]
    backend = LogFileBackend(log_dir(fixture.folder))
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
