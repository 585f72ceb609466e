"""LOG_DIR: JSON-lines and plain-text files, one file or one folder per service."""

from __future__ import annotations

import gzip
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from tests.webapp.tools.backends.conftest import pinned
from webapp.demo.backend import DemoTelemetryBackend
from webapp.tools.backends import TelemetryError
from webapp.tools.backends.logfiles import LogFileBackend

T0 = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)


def test_the_exported_demo_logs_answer_exactly_like_the_demo(
    exported: Path, demo: DemoTelemetryBackend
) -> None:
    files = LogFileBackend(exported / "logs", clock=pinned(demo.reference_time()))
    assert files.services() == demo.services()
    start = datetime(2026, 11, 30, 10, 0, tzinfo=timezone.utc)
    for service in demo.services():
        for level, keyword in ((None, None), ("ERROR", None), ("WARN", "timeout"), (None, "GET")):
            want = demo.query_logs(
                service=service,
                start=start,
                end=start + timedelta(hours=1),
                level=level,
                keyword=keyword,
                limit=20,
            )
            got = files.query_logs(
                service=service,
                start=start,
                end=start + timedelta(hours=1),
                level=level,
                keyword=keyword,
                limit=20,
            )
            assert got == want, (service, level, keyword)


def test_plain_text_with_levels_traces_and_stack_trace_continuations(tmp_path: Path) -> None:
    folder = tmp_path / "checkout"
    folder.mkdir()
    (folder / "app.log").write_text(
        "2026-12-01T10:00:01.250Z INFO started on :8080\n"
        "2026-12-01 10:05:00,500 [ERROR] payment failed trace_id=4bf92f3577b34da6\n"
        "java.net.SocketTimeoutException: Read timed out\n"
        "\tat com.shop.Pay.call(Pay.java:42)\n"
        "2026-12-01T10:06:00+00:00 WARNING pool at 95%\n"
        "2026-12-01T10:07:00Z FATAL out of memory\n"
    )
    with gzip.open(folder / "app.log.1.gz", "wt") as old:
        epoch_ms = int((T0 - timedelta(minutes=1)).timestamp() * 1000)
        old.write(f'{{"ts": {epoch_ms}, "lvl": "debug", "msg": "warming cache"}}\n')
    backend = LogFileBackend(tmp_path, clock=lambda: T0 + timedelta(hours=1))
    answer = backend.query_logs(
        service="checkout", start=T0 - timedelta(hours=1), end=T0 + timedelta(hours=1)
    )
    assert [r["level"] for r in answer["records"]] == ["ERROR", "WARN", "ERROR", "INFO", "INFO"]
    failed = answer["records"][2]
    assert failed["timestamp"] == "2026-12-01T10:05:00.500Z"
    assert failed["trace_id"] == "4bf92f3577b34da6"
    assert failed["message"].endswith("Read timed out\n\tat com.shop.Pay.call(Pay.java:42)")
    assert answer["records"][-1]["message"] == "warming cache"
    errors = backend.query_logs(
        service="checkout", start=T0, end=T0 + timedelta(hours=1), level="error", limit=1
    )
    assert errors["total"] == 2 and errors["truncated"] is True
    assert errors["records"][0]["message"] == "out of memory"


def test_files_are_reread_when_they_change(tmp_path: Path) -> None:
    log = tmp_path / "api.jsonl"
    log.write_text('{"timestamp": "2026-12-01T10:00:00Z", "level": "INFO", "message": "one"}\n')
    backend = LogFileBackend(tmp_path)
    end = T0 + timedelta(minutes=5)
    assert backend.query_logs(service="api", start=T0, end=end)["total"] == 1
    with log.open("a") as handle:
        handle.write('{"timestamp": "2026-12-01T10:01:00Z", "level": "ERROR", "message": "two"}\n')
    os.utime(log, ns=(log.stat().st_atime_ns, log.stat().st_mtime_ns + 10**9))
    assert backend.query_logs(service="api", start=T0, end=end)["total"] == 2


def test_unknown_services_and_a_missing_folder_are_readable_errors(tmp_path: Path) -> None:
    (tmp_path / "api.log").write_text("2026-12-01T10:00:00Z INFO up\n")
    backend = LogFileBackend(tmp_path)
    with pytest.raises(TelemetryError, match="valid services: api"):
        backend.query_logs(service="web", start=T0, end=T0)
    gone = LogFileBackend(tmp_path / "missing")
    assert gone.services() == [] and gone.probe()["reachable"] is False
    with pytest.raises(TelemetryError, match="not a readable folder"):
        gone.query_logs(service="api", start=T0, end=T0)


def test_huge_lines_are_cut_to_a_bounded_message(tmp_path: Path) -> None:
    (tmp_path / "api.log").write_text(
        "2026-12-01T10:00:00Z ERROR " + "x" * 10_000 + "\n" + "  at frame\n" * 5000
    )
    record = LogFileBackend(tmp_path).query_logs(
        service="api", start=T0, end=T0 + timedelta(minutes=1)
    )["records"][0]
    assert len(record["message"]) < 4100 and record["message"].endswith("...[truncated]")
