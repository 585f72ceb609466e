"""Time expressions in English and Chinese, resolved against a fixed "now"."""

from __future__ import annotations

import unicodedata
from datetime import datetime, timezone

import pytest

from webapp.analysis.timeexpr import resolve_window

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)

# (question, kind, start, end, onset, zone); times are UTC "HH:MM" on 2026-11-30 unless dated.
CASES = [
    # clock times, with and without am/pm
    ("why is payment-service slow since 10:00?", "since", "10:00", "12:00", "10:00", "UTC"),
    ("slow since 10am", "since", "10:00", "12:00", "10:00", "UTC"),
    ("errors started at 2:37pm", "since", "29 14:37", "12:00", "29 14:37", "UTC"),
    ("it broke at 11:37am", "at", "11:37", "12:00", "11:37", "UTC"),
    ("around 11:15 checkout failed", "at", "11:15", "12:00", "11:15", "UTC"),
    ("14:37 errors", "at", "29 14:37", "12:00", "29 14:37", "UTC"),
    ("since noon yesterday", "since", "29 12:00", "12:00", "29 12:00", "UTC"),
    ("customers can't check out since 10:45", "since", "10:45", "12:00", "10:45", "UTC"),
    # zones and offsets
    ("since 11:00 CET", "since", "10:00", "12:00", "10:00", "CET"),
    ("since 11:00 CEST", "since", "09:00", "12:00", "09:00", "CEST"),
    ("since 03:00 PST", "since", "11:00", "12:00", "11:00", "PST"),
    ("since 10:00 UTC", "since", "10:00", "12:00", "10:00", "UTC"),
    ("since 18:00 +08:00", "since", "10:00", "12:00", "10:00", "+08:00"),
    ("since 18:00 北京时间", "since", "10:00", "12:00", "10:00", "北京时间"),
    ("北京时间18点以来一直报错", "since", "10:00", "12:00", "10:00", "北京时间"),
    ("since 11:00 Europe/Berlin", "since", "10:00", "12:00", "10:00", "Europe/Berlin"),
    ("outage at 2026-11-30T10:05:00+01:00", "at", "09:05", "12:00", "09:05", "+01:00"),
    ("outage at 2026-11-30T10:05:00Z", "at", "10:05", "12:00", "10:05", "UTC"),
    ("outage at 2026-11-30 10:05", "at", "10:05", "12:00", "10:05", "UTC"),
    # ranges
    ("what happened between 09:50 and 10:30", "range", "09:50", "10:30", "09:50", "UTC"),
    ("from 9:50 to 10:30 CET", "range", "08:50", "09:30", "08:50", "CET"),
    ("from 10:00 until 11:00", "range", "10:00", "11:00", "10:00", "UTC"),
    ("10:00-10:30", "range", "10:00", "10:30", "10:00", "UTC"),
    ("从10点到10点半", "range", "10:00", "10:30", "10:00", "UTC"),
    ("between 23:00 and 01:00", "range", "29 23:00", "01:00", "29 23:00", "UTC"),
    # relative windows
    ("in the last 30 minutes", "last", "11:30", "12:00", None, "UTC"),
    ("errors over the past 2 hours", "last", "10:00", "12:00", None, "UTC"),
    ("last hour", "last", "11:00", "12:00", None, "UTC"),
    ("in the last half hour", "last", "11:30", "12:00", None, "UTC"),
    ("half an hour ago the errors began", "since", "11:30", "12:00", "11:30", "UTC"),
    ("75 minutes ago the errors began", "since", "10:45", "12:00", "10:45", "UTC"),
    ("started 2 hours ago", "since", "10:00", "12:00", "10:00", "UTC"),
    ("this morning", "day", "06:00", "12:00", None, "UTC"),
    ("p99 latency on payments went up this morning", "day", "06:00", "12:00", None, "UTC"),
    ("yesterday", "day", "29 00:00", "00:00", None, "UTC"),
    ("last night", "day", "29 18:00", "06:00", None, "UTC"),
    ("yesterday 14:00", "at", "29 14:00", "12:00", "29 14:00", "UTC"),
    ("since yesterday at 9:30pm", "since", "29 21:30", "12:00", "29 21:30", "UTC"),
    ("before 10:00", "until", None, "10:00", None, "UTC"),
    # Chinese
    ("payment-service 为什么从10点开始变慢?", "since", "10:00", "12:00", "10:00", "UTC"),
    ("10点30分出现告警", "at", "10:30", "12:00", "10:30", "UTC"),
    ("从10点开始报错", "since", "10:00", "12:00", "10:00", "UTC"),
    ("十点半以来很慢", "since", "10:30", "12:00", "10:30", "UTC"),
    ("最近30分钟", "last", "11:30", "12:00", None, "UTC"),
    ("过去两小时的错误", "last", "10:00", "12:00", None, "UTC"),
    ("最近一小时", "last", "11:00", "12:00", None, "UTC"),
    ("最近半小时", "last", "11:30", "12:00", None, "UTC"),
    ("今天上午", "day", "06:00", "12:00", None, "UTC"),
    ("昨天下午3点", "at", "29 15:00", "12:00", "29 15:00", "UTC"),
    ("昨晚", "day", "29 18:00", "06:00", None, "UTC"),
    ("3小时前开始报错", "since", "09:00", "12:00", "09:00", "UTC"),
    ("10点之前", "until", None, "10:00", None, "UTC"),
    ("１０：３０ 以来", "since", "10:30", "12:00", "10:30", "UTC"),
]

# Never times: durations, decimals, versions, ratios - and nothing at all.
NOT_TIMES = [
    "payment-service",
    "latency is 1.30 s",
    "p95 is 1.30",
    "version 2.8.0 was deployed",
    "the ratio is 0.72 now",
    "gc pauses of 10:30 ms",
    "error rate 5.5%",
    "redis memory at 99.95%",
    "timeout after 30s",
    "订单服务报错了,帮我看看",
    "what is the mysql_threads_connected metric?",
]


def _utc(text: str | None) -> datetime | None:
    if text is None:
        return None
    day, _, clock = text.rpartition(" ")
    hour, minute = map(int, clock.split(":"))
    return datetime(2026, 11, int(day) if day else 30, hour, minute, tzinfo=timezone.utc)


@pytest.mark.parametrize(("question", "kind", "start", "end", "onset", "zone"), CASES)
def test_time_expressions_resolve_to_the_expected_window(
    question: str, kind: str, start: str | None, end: str, onset: str | None, zone: str
) -> None:
    window = resolve_window(question, NOW)
    assert window.found and window.kind == kind, window
    assert window.start == _utc(start)
    assert window.end == _utc(end)
    assert window.onset == _utc(onset)
    assert window.zone == zone
    assert window.text
    for part in window.text.split():  # the matched words (a day word may be joined to a time)
        assert part in unicodedata.normalize("NFKC", question)


@pytest.mark.parametrize("question", NOT_TIMES)
def test_durations_decimals_and_versions_are_never_times(question: str) -> None:
    window = resolve_window(question, NOW)
    assert not window.found and window.kind == "none"
    assert window.start is None and window.onset is None and window.end == NOW
    assert window.text is None


def test_a_zone_less_time_is_read_in_the_configured_default_zone() -> None:
    window = resolve_window("since 11:00", NOW, "Europe/Paris")
    assert window.onset == datetime(2026, 11, 30, 10, 0, tzinfo=timezone.utc)
    assert window.zone == "Europe/Paris"
    assert resolve_window("since 11:00 UTC", NOW, "Europe/Paris").onset == datetime(
        2026, 11, 30, 11, 0, tzinfo=timezone.utc
    )


def test_an_unknown_default_zone_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown time zone"):
        resolve_window("since 10:00", NOW, "Mars/Olympus")


def test_a_clock_time_later_than_now_is_yesterdays() -> None:
    window = resolve_window("since 13:00", NOW)
    assert window.onset == datetime(2026, 11, 29, 13, 0, tzinfo=timezone.utc)


def test_the_resolved_window_is_json_ready() -> None:
    window = resolve_window("since 11:00 CET", NOW)
    assert window.as_dict() == {
        "start": "2026-11-30T10:00:00Z",
        "end": "2026-11-30T12:00:00Z",
        "onset": "2026-11-30T10:00:00Z",
        "text": "since 11:00 CET",
        "zone": "CET",
        "kind": "since",
        "utc_offset_minutes": 60,
        "found": True,
    }


def test_a_naive_now_is_taken_as_utc() -> None:
    naive = NOW.replace(tzinfo=None)
    assert resolve_window("since 10:00", naive).onset == datetime(
        2026, 11, 30, 10, 0, tzinfo=timezone.utc
    )


def test_the_window_carries_its_zones_offset_from_utc() -> None:
    assert resolve_window("since 18:00 北京时间", NOW).utc_offset_minutes == 480
    assert resolve_window("since 03:00 PST", NOW).utc_offset_minutes == -480
    assert resolve_window("since 10:00", NOW, "Asia/Kolkata").utc_offset_minutes == 330
    # A named zone's offset at the window's own time (summer time in Berlin).
    summer = datetime(2026, 7, 1, 12, 0, tzinfo=timezone.utc)
    assert resolve_window("since 11:00", summer, "Europe/Berlin").utc_offset_minutes == 120
    assert resolve_window("payment-service", NOW).utc_offset_minutes == 0
