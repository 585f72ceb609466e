"""Log styles through the ``LOG_DIR`` backend: each documented style reads as its records, a
folder or a file that mixes styles loses nothing, and timestamps and levels follow the rules."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.webapp.telemetry.log_samples import MODIFIED, SAMPLES
from webapp.telemetry.logfiles import LogFileBackend
from webapp.telemetry.logformats import any_stamp, iso_stamp, level_of, status_level

EVER = (datetime(2000, 1, 1, tzinfo=timezone.utc), datetime(2030, 1, 1, tzinfo=timezone.utc))


def _write(folder: Path, files: dict[str, str], modified: datetime = MODIFIED) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
        os.utime(folder / name, (modified.timestamp(), modified.timestamp()))


def _read(root: Path, service: str = "svc") -> list[tuple[str, str, str]]:
    answer = LogFileBackend(root).query_logs(
        service=service, start=EVER[0], end=EVER[1], limit=1000
    )
    assert "unread" not in answer, answer["unread"]
    return [(r["timestamp"], r["level"], r["message"]) for r in reversed(answer["records"])]


@pytest.mark.parametrize("style", sorted(SAMPLES))
def test_each_style_reads_as_its_documented_records(style: str, tmp_path: Path) -> None:
    text, expected = SAMPLES[style]
    _write(tmp_path / "svc", {"app.log": text})
    assert _read(tmp_path) == expected


def test_a_folder_of_every_style_reads_each_file_in_its_own_style(tmp_path: Path) -> None:
    _write(tmp_path / "svc", {f"{style}.log": text for style, (text, _) in SAMPLES.items()})
    found = _read(tmp_path)
    expected = [record for _, records in SAMPLES.values() for record in records]
    assert sorted(found) == sorted(expected)


def test_a_file_whose_style_changes_midway_keeps_every_record(tmp_path: Path) -> None:
    before = "".join(f"2024-05-01T09:{m:02d}:00Z INFO tick {m}\n" for m in range(60))
    after = "".join(
        f'{{"ts":"2024-05-01T10:{m:02d}:00Z","level":"error","msg":"tock {m}"}}\n' for m in range(5)
    )
    _write(tmp_path / "svc", {"app.log": before + after})
    found = _read(tmp_path)
    assert len(found) == 65
    assert found[-1] == ("2024-05-01T10:04:00.000Z", "ERROR", "tock 4")


def test_year_less_lines_take_the_latest_year_not_after_the_file_was_written(
    tmp_path: Path,
) -> None:
    written = datetime(2025, 1, 2, 0, 30, tzinfo=timezone.utc)
    _write(
        tmp_path / "svc",
        {
            "syslog": "Dec 31 23:59:58 h app[1]: old year\nJan  2 00:10:00 h app[1]: new year\n",
            "klog.log": "E0103 00:00:00.000000 1 x.go:1] within a day of the write\n"
            "E0105 00:00:00.000000 1 x.go:1] days after the write: last year\n",
        },
        modified=written,
    )
    assert [stamp[:10] for stamp, _, _ in _read(tmp_path)] == [
        "2024-01-05",
        "2024-12-31",
        "2025-01-02",
        "2025-01-03",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-05-01 10:00:01.123 UTC", "2024-05-01T10:00:01.123000+00:00"),
        ("2024-05-01 10:00:01 GMT", "2024-05-01T10:00:01+00:00"),
        ("2024-05-01 12:00:01 CEST", "2024-05-01T12:00:01+00:00"),  # zone names: read as UTC
        ("2024-05-01 18:00:01+08", "2024-05-01T18:00:01+08:00"),
        ("2024-05-01 10:00:01 +0000", "2024-05-01T10:00:01+00:00"),
        ("2024-05-01T10:00:01,5", "2024-05-01T10:00:01.500000+00:00"),  # naive: UTC
        ("2024-05-01T10:00:01.123456789Z", "2024-05-01T10:00:01.123456+00:00"),
        ("2024-13-01T10:00:01Z", None),
    ],
)
def test_iso_timestamps_with_zone_names_offsets_or_none(text: str, expected: str | None) -> None:
    moment = iso_stamp(text)
    assert (moment.isoformat() if moment else None) == expected


@pytest.mark.parametrize(
    "value",
    [1714557601, 1714557601.5, 1714557601500, "1714557601500000", 1714557601500000000],
)
def test_epoch_seconds_milliseconds_microseconds_and_nanoseconds(value: object) -> None:
    moment = any_stamp(value)
    assert moment is not None and moment.isoformat()[:19] == "2024-05-01T10:00:01"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (60, "ERROR"), (50, "ERROR"), (40, "WARN"), (30, "INFO"), (20, "INFO"), (10, "INFO"),
        (0, "ERROR"), (3, "ERROR"), ("3", "ERROR"), (4, "WARN"), (5, "INFO"), (7, "INFO"),
        ("Warning", "WARN"), ("dpanic", "ERROR"), ("ERROR+2", "ERROR"), ("DEBUG1", "INFO"),
        ("fail", "ERROR"), ("Information", "INFO"), ("unknown", None), (99, None), (True, None),
    ],
)  # fmt: skip
def test_levels_from_words_syslog_severities_and_bunyan_numbers(
    value: object, expected: str | None
) -> None:
    assert level_of(value) == expected


@pytest.mark.parametrize(
    ("status", "expected"),
    [(503, "ERROR"), ("500", "ERROR"), (429, "WARN"), (404, "WARN"), (304, "INFO"),
     (200, "INFO"), (0, None), ("-", None)],
)  # fmt: skip
def test_access_log_status_classes(status: object, expected: str | None) -> None:
    assert status_level(status) == expected
