"""``python -m eval`` (what ``make eval`` runs) end to end on one small world."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.__main__ import main
from eval.report import JSON_KEYS
from eval.runner import ungrounded_claims


def test_one_world_runs_every_question_and_prints_the_tables_and_a_json_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["--worlds", "1", "--questions", "50", "--no-demo", "--keep", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    document = json.loads(out.strip().splitlines()[-1])
    assert tuple(document) == JSON_KEYS
    assert document["questions"] >= 50 and document["fixtures"] == ["w1"]
    assert sum(row["n"] for row in document["by_kind"].values()) == document["questions"]
    assert 0.0 <= document["accuracy"] <= 1.0 and document["median_latency_ms"] > 0
    assert "by incident family" in out and "by question kind" in out
    assert (tmp_path / "world-1" / "dataset.json").is_file()


def test_ungrounded_claims_are_read_wherever_the_evaluation_reports_them() -> None:
    assert ungrounded_claims({"rule_evaluation": {"claim_count": 3}}) is None
    assert ungrounded_claims({"grounding": {"ungrounded_claims": ["C2", "C3"]}}) == 2
    assert ungrounded_claims({"rule_evaluation": {"ungrounded_claim_count": 0}}) == 0
