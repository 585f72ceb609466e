"""LOG_DIR: JSON-lines and plain-text files, one file or one folder per service."""

from __future__ import annotations

import gzip
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from tests.webapp.telemetry.conftest import pinned
from webapp.demo.backend import DemoTelemetryBackend
from webapp.telemetry import TelemetryError
from webapp.telemetry.logfiles import LogFileBackend

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


def test_unreadable_files_are_named_and_the_readable_ones_still_answer(tmp_path: Path) -> None:
    folder = tmp_path / "api"
    folder.mkdir()
    (folder / "app.log").write_text("2026-12-01T10:00:00Z ERROR db down\n")
    (folder / "core").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4)
    (folder / "app.log.2.gz").write_bytes(b"not gzip at all\n")
    whole = gzip.compress(
        "".join(f"2026-12-01T09:{m:02d}:00Z INFO tick {m}\n" for m in range(60)).encode() * 50
    )
    (folder / "app.log.1.gz").write_bytes(whole[: len(whole) // 2])  # cut off mid-rotation
    (folder / "python.log").write_text("ERROR:root:boom\nWARNING:root:slow\n")
    answer = LogFileBackend(tmp_path).query_logs(
        service="api", start=T0 - timedelta(hours=2), end=T0 + timedelta(hours=1), limit=1
    )
    assert answer["records"][0]["message"] == "db down"
    assert answer["total"] > 1  # the truncated archive's lines before the cut
    unread = dict(line.split(": ", 1) for line in answer["unread"])
    assert set(unread) == {"api/core", "api/app.log.2.gz", "api/app.log.1.gz", "api/python.log"}
    assert unread["api/core"] == "binary file (NUL bytes)"
    assert "Not a gzipped file" in unread["api/app.log.2.gz"]
    assert "(after" in unread["api/app.log.1.gz"]
    assert unread["api/python.log"] == (
        "no line starts with a timestamp in a known format (first line: 'ERROR:root:boom')"
    )


def test_a_service_with_no_readable_file_is_an_error_that_says_why(tmp_path: Path) -> None:
    (tmp_path / "api.log").write_bytes(b"\x00\x01\x02 binary")
    backend = LogFileBackend(tmp_path)
    with pytest.raises(TelemetryError, match=r"cannot read the logs of api: api\.log: binary"):
        backend.query_logs(service="api", start=T0, end=T0 + timedelta(hours=1))


def test_a_line_longer_than_the_cap_keeps_its_start_and_the_next_line(tmp_path: Path) -> None:
    (tmp_path / "api.log").write_text(
        "2026-12-01T10:00:00Z ERROR " + "y" * 3_000_000 + "\n2026-12-01T10:00:01Z WARN after\n"
    )
    answer = LogFileBackend(tmp_path).query_logs(
        service="api", start=T0, end=T0 + timedelta(minutes=1)
    )
    assert [r["level"] for r in answer["records"]] == ["WARN", "ERROR"]
    assert answer["records"][1]["message"].startswith("yyy")
    assert len(answer["records"][1]["message"]) < 4100


def test_empty_and_blank_files_are_not_reported_as_unreadable(tmp_path: Path) -> None:
    folder = tmp_path / "api"
    folder.mkdir()
    (folder / "app.log").write_text("2026-12-01T10:00:00Z WARN slow\n")
    (folder / "new.log").write_text("")
    (folder / "blank.log").write_text("\n  \n")
    (folder / "old.log.gz").write_bytes(gzip.compress(b""))
    answer = LogFileBackend(tmp_path).query_logs(service="api", start=T0, end=T0 + timedelta(1))
    assert answer["total"] == 1 and "unread" not in answer
