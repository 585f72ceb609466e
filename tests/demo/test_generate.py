"""The generator: reproducible, committed data is its output, realistic volume and shapes."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from demo.generate import generate, main
from demo.metricgen import METRIC_UNITS
from demo.scenarios import SCENARIOS
from demo.system import APP_SERVICES, SERVICE_KEYS, service_name
from tests.demo.helpers import read_logs
from webapp.demo.backend import DEFAULT_DATA_DIR, DemoTelemetryBackend

_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_same_seed_generates_identical_bytes(generated: dict[str, Path], tmp_path: Path) -> None:
    generate(tmp_path, variant="default")
    assert _files(tmp_path) == _files(generated["default"])


def test_another_seed_generates_other_data(generated: dict[str, Path], tmp_path: Path) -> None:
    generate(tmp_path, seed=8, variant="default")
    again, first = _files(tmp_path), _files(generated["default"])
    assert again["logs.jsonl.gz"] != first["logs.jsonl.gz"]
    assert again["runbooks/db_pool_exhaustion.md"] == first["runbooks/db_pool_exhaustion.md"]


def test_committed_data_is_the_generator_output(generated: dict[str, Path]) -> None:
    committed, fresh = _files(DEFAULT_DATA_DIR), _files(generated["default"])
    assert sorted(committed) == sorted(fresh)
    for name, content in fresh.items():
        if name.endswith(".gz"):
            # Compare content, not the compressor's bytes, which may vary with the zlib build.
            assert gzip.decompress(committed[name]) == gzip.decompress(content), name
        else:
            assert committed[name] == content, name


def test_cli_writes_the_renamed_variant(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--out", str(tmp_path), "--variant", "renamed", "--seed", "3"]) == 0
    dataset = json.loads((tmp_path / "dataset.json").read_text())
    assert dataset["generator"] == {"seed": 3, "variant": "renamed"}
    assert "log lines" in capsys.readouterr().out


def test_unknown_variant_is_rejected_before_writing(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown variant"):
        generate(tmp_path / "out", variant="shuffled")
    assert not (tmp_path / "out").exists()


def test_log_volume_is_realistic(generated: dict[str, Path]) -> None:
    records = read_logs(generated["default"])
    assert 40_000 <= len(records) <= 70_000
    info = Counter(record["service"] for record in records if record["level"] == "INFO")
    for key in APP_SERVICES:
        assert info[key] >= 2_500, key  # a request line every 1-3 s for three hours
    size = sum(len(content) for content in _files(generated["default"]).values())
    assert size < 3_000_000


def test_every_app_service_has_a_low_rate_of_benign_warnings(generated: dict[str, Path]) -> None:
    records = read_logs(generated["default"])
    first_onset = min(scenario.onset_minutes for scenario in SCENARIOS)
    before = [r for r in records if r["timestamp"] < f"2026-11-30T{9 + first_onset // 60:02d}:00"]
    warnings = Counter(r["service"] for r in before if r["level"] == "WARN")
    for key in APP_SERVICES:
        assert 3 <= warnings[key] <= 40, (key, warnings[key])
    errors = Counter(r["service"] for r in records if r["level"] == "ERROR")
    assert errors["user-service"] == 0
    assert errors["api-gateway"] <= 3


def test_log_records_have_the_contract_shape(generated: dict[str, Path]) -> None:
    records = read_logs(generated["default"])
    names = {service_name("default", key) for key in SERVICE_KEYS}
    for record in records[:2000] + records[-2000:]:
        assert list(record) == ["timestamp", "service", "level", "message", "trace_id"]
        assert _TIMESTAMP.match(record["timestamp"])
        assert record["service"] in names
        assert record["level"] in {"ERROR", "WARN", "INFO"}
        assert record["trace_id"] is None or re.fullmatch(r"[0-9a-f]{16}", record["trace_id"])
    stamps = [record["timestamp"] for record in records]
    assert stamps == sorted(stamps)
    assert stamps[0] >= "2026-11-30T09:00:00.000Z"
    assert stamps[-1] < "2026-11-30T12:00:00.000Z"


def test_dataset_json_declares_the_window_and_no_answers(generated: dict[str, Path]) -> None:
    text = (generated["default"] / "dataset.json").read_text()
    dataset = json.loads(text)
    assert set(dataset) == {
        "name",
        "reference_time",
        "start",
        "end",
        "step_seconds",
        "services",
        "aliases",
        "generator",
    }
    assert dataset["reference_time"] == dataset["end"] == "2026-11-30T12:00:00Z"
    assert dataset["start"] == "2026-11-30T09:00:00Z"
    assert dataset["step_seconds"] == 60
    for scenario in SCENARIOS:
        assert scenario.failure_type not in text


def test_metric_series_are_complete_and_united(generated: dict[str, Path]) -> None:
    for folder in generated.values():
        document = json.loads((folder / "metrics.json").read_text())
        assert document["step_seconds"] == 60
        for row in document["series"]:
            assert len(row["points"]) == 181
            assert row["unit"] == METRIC_UNITS[row["metric"]][0]
            assert row["labels"]["service"] == row["service"]
            assert row["points"][0][0].endswith(":00Z")


def test_both_variants_share_the_metric_vocabulary(generated: dict[str, Path]) -> None:
    shapes = []
    for folder in generated.values():
        document = json.loads((folder / "metrics.json").read_text())
        shapes.append([(row["metric"], row["unit"]) for row in document["series"]])
    assert shapes[0] == shapes[1]


def test_every_service_declares_aliases_including_a_chinese_name(
    backends: dict[str, DemoTelemetryBackend],
) -> None:
    for backend in backends.values():
        aliases = backend.service_aliases()
        assert sorted(aliases) == backend.services()
        for service, names in aliases.items():
            assert any(re.search(r"[\u4e00-\u9fff]", name) for name in names), service
            assert service not in names
