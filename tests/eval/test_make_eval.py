"""``python -m eval`` (what ``make eval`` runs) end to end on one small world."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.__main__ import main
from eval.report import JSON_KEYS
from eval.runner import ungrounded_claims
from tests.webapp.llm.scripted_server import ScriptedResponse, completion, serve
from webapp.replay import export_recording
from webapp.wiring import offline_diagnoser


def test_both_generators_print_their_tables_and_one_json_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    argv = ["--worlds", "1", "--questions", "50", "--no-demo", "--second-worlds", "1"]
    assert main([*argv, "--keep", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    document = json.loads(out.strip().splitlines()[-1])
    assert tuple(document) == (*JSON_KEYS, "second")
    assert document["questions"] >= 50 and document["fixtures"] == ["w1"]
    assert sum(row["n"] for row in document["by_kind"].values()) == document["questions"]
    assert 0.0 <= document["accuracy"] <= 1.0 and document["median_latency_ms"] > 0
    assert "by incident family" in out and "by question kind" in out
    assert (tmp_path / "world-1" / "dataset.json").is_file()
    second = document["second"]
    assert second["worlds"] == ["s1-streamly"] and second["questions"] >= 30
    assert sum(row["n"] for row in second["by_kind"].values()) == second["questions"]
    assert sum(row["n"] for row in second["by_mechanism"].values()) == second["questions"]
    assert 0 <= second["complete"] <= second["right_incidents"] <= second["correct"]
    assert "second generator" in out and "by mechanism" in out
    assert (tmp_path / "s1-streamly" / "logs" / "edge-proxy" / "envoy.log").is_file()


def test_one_generator_runs_alone(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    argv = ["--generator", "second", "--second-worlds", "1", "--seed", "2", "--failures"]
    assert main([*argv, "--keep", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    document = json.loads(out.strip().splitlines()[-1])
    assert tuple(document) == ("model", "second") and "by incident family" not in out
    assert document["second"]["worlds"] == ["s2-dashfood"]
    wrong = document["second"]["questions"] - document["second"]["correct"]
    assert len([line for line in out.splitlines() if line.startswith("s2-dashfood-")]) == wrong
    assert (tmp_path / "s2-dashfood" / "logs" / "order-api" / "app.log").is_file()


def test_ungrounded_claims_are_read_wherever_the_evaluation_reports_them() -> None:
    assert ungrounded_claims({"rule_evaluation": {"claim_count": 3}}) is None
    assert ungrounded_claims({"grounding": {"ungrounded_claims": ["C2", "C3"]}}) == 2
    assert ungrounded_claims({"rule_evaluation": {"ungrounded_claim_count": 0}}) == 0


def test_recorded_runs_are_replayed_as_fixtures(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    diagnoser = offline_diagnoser()
    question = "Why is shipping-service failing since 10:20?"
    result = diagnoser.diagnose(question, session_id="s-fixture")
    rows = [r for r in diagnoser.audit.invocations if r["run_id"] == result.run_id]  # type: ignore[attr-defined]
    run = {"session_id": "s-fixture", "run_id": result.run_id, "question": question}
    definitions = [spec.definition() for spec in diagnoser.tools]
    folder = tmp_path / "recorded"
    folder.mkdir()
    scored = export_recording(
        {**run, "answer": result.answer}, rows, diagnoser.backend, definitions
    )
    scored["expected"] = {"outcome": "incident", "causes": [["shipping-service", "bad_deploy"]]}
    (folder / "a-scored.json").write_text(json.dumps(scored), encoding="utf-8")
    unscored = export_recording(
        {**run, "answer": result.answer}, [], diagnoser.backend, definitions
    )
    (folder / "b-headline.json").write_text(json.dumps(unscored), encoding="utf-8")
    assert (
        main(["--generator", "first", "--worlds", "0", "--no-demo", "--recorded", str(folder)]) == 0
    )
    document = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert document["fixtures"] == ["recorded"] and document["questions"] == 2
    assert document["by_family"]["bad_deploy"]["correct"] == 1
    # With its tool outputs missing the replay cannot reach the recorded headline.
    assert document["by_family"]["recorded"]["correct"] == 0


def test_with_an_api_key_the_same_cases_run_against_that_model(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    servers = serve()
    server = next(servers)
    try:
        server.default = ScriptedResponse(json=completion("not the JSON the schema asks for"))
        monkeypatch.setenv("OPENAI_API_KEY", "sk-eval-test")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("LLM_MODEL", "scripted-eval-model")
        assert main(["--generator", "first", "--worlds", "0"]) == 0
    finally:
        next(servers, None)
    lines = [
        json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")
    ]
    offline, real = lines
    assert offline["model"] == "offline-rule-based-v1" and real["model"] == "scripted-eval-model"
    assert real["questions"] == offline["questions"] and real["fixtures"] == ["demo"]
    assert server.requests and all(
        r.header("Authorization") == "Bearer sk-eval-test" for r in server.requests
    )
    assert real["correct"] < offline["correct"] and real["fallback_rate"] > 0
