"""The renamed variant shares nothing with the default but the mechanisms and the runbooks."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from demo.scenarios import ALERTS, TEMPLATES, scenario_records
from demo.system import SERVICE_KEYS
from tests.demo.helpers import parse_time


def _telemetry_text(folder: Path) -> str:
    parts = [gzip.decompress((folder / "logs.jsonl.gz").read_bytes()).decode("utf-8")]
    parts += [
        (folder / name).read_text() for name in ("metrics.json", "alerts.json", "dataset.json")
    ]
    return "\n".join(parts)


@pytest.fixture(scope="module")
def renamed_text(generated: dict[str, Path]) -> str:
    return _telemetry_text(generated["renamed"])


@pytest.fixture(scope="module")
def renamed_messages(generated: dict[str, Path]) -> str:
    with gzip.open(generated["renamed"] / "logs.jsonl.gz", "rt", encoding="utf-8") as lines:
        return "\n".join(json.loads(line)["message"] for line in lines)


def _fragments(template: str) -> list[str]:
    """The literal stretches of a template long enough to identify its phrasing."""
    pieces = re.split(r"\{[^}]*\}", template)
    return [piece.strip() for piece in pieces if len(piece.strip()) >= 12]


def test_renamed_data_has_no_default_service_name(renamed_text: str) -> None:
    for key in SERVICE_KEYS:
        assert key not in renamed_text


def test_default_data_uses_the_default_names(generated: dict[str, Path]) -> None:
    text = _telemetry_text(generated["default"])
    for key in SERVICE_KEYS:
        assert key in text


@pytest.mark.parametrize("key", sorted(TEMPLATES))
def test_renamed_logs_never_use_a_default_phrasing(key: str, renamed_messages: str) -> None:
    default = TEMPLATES[key][0]
    fragments = _fragments(default)
    assert fragments or len(default) < 40, key  # every long template has something to check
    for fragment in fragments:
        assert fragment not in renamed_messages, (key, fragment)


@pytest.mark.parametrize("key", sorted(k for k in TEMPLATES if re.match(r"s\d_", k)))
def test_renamed_logs_use_the_renamed_phrasing_of_every_scenario_template(
    key: str, renamed_messages: str
) -> None:
    for fragment in _fragments(TEMPLATES[key][1]):
        assert fragment in renamed_messages, (key, fragment)


def test_renamed_alerts_are_reworded(generated: dict[str, Path]) -> None:
    alerts = json.loads((generated["renamed"] / "alerts.json").read_text())["alerts"]
    names = {alert["alert_name"] for alert in alerts}
    assert names == {alert.names[1] for alert in ALERTS}
    assert names.isdisjoint(alert.names[0] for alert in ALERTS)
    defaults = {alert.descriptions[0].format(service="") for alert in ALERTS}
    for alert in alerts:
        assert alert["description"].replace(alert["service"], "") not in defaults


def test_runbooks_are_identical_in_both_variants(generated: dict[str, Path]) -> None:
    default = generated["default"] / "runbooks"
    renamed = generated["renamed"] / "runbooks"
    assert sorted(p.name for p in default.iterdir()) == sorted(p.name for p in renamed.iterdir())
    for path in default.iterdir():
        assert path.read_bytes() == (renamed / path.name).read_bytes()


def test_renamed_variant_keeps_the_timeline_at_other_times(generated: dict[str, Path]) -> None:
    windows = {}
    for variant, folder in generated.items():
        dataset = json.loads((folder / "dataset.json").read_text())
        windows[variant] = parse_time(dataset["start"])
    assert windows["default"] != windows["renamed"]
    default, renamed = scenario_records("default"), scenario_records("renamed")
    for left, right in zip(default, renamed, strict=True):
        assert left["id"] == right["id"] and left["failure_type"] == right["failure_type"]
        assert parse_time(left["onset"]) - windows["default"] == (
            parse_time(right["onset"]) - windows["renamed"]
        )
        assert left["question"] != right["question"]
        assert left["runbook_title"] == right["runbook_title"]
