"""A dependency no log line names, found because its trouble began with the symptom's.

A generated world whose victim's lines give the culprit database only by address: the
executor's timing candidates (catalog services sharing a distinctive name part with the asked
one) are analysed, the one whose onset falls within the executor's bound and whose evidence
shows a cause kind is the culprit, and the answer says the link rests on timing alone. A
service that is its own culprit gets no such link.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from eval.scoring import categories
from eval.telemetry import write_world
from eval.world import World, build_world
from webapp.diagnosis import Diagnoser
from webapp.llm.offline.executor import MAX_TIMING_CANDIDATES
from webapp.wiring import offline_diagnoser

FAMILIES = ["db_pool_exhaustion", "bad_deploy", "cpu_saturation"]


def unnamed(folder: Path, names: list[str]) -> None:
    """Every log line that names one of ``names`` gives an address instead."""
    path = folder / "logs.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    for row in rows:
        for name in names:
            row["message"] = row["message"].replace(name, "10.0.3.31:5432")
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in rows)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, Diagnoser]:
    world = build_world(404, FAMILIES)
    folder = tmp_path_factory.mktemp("world")
    write_world(world, folder)
    database = next(i.culprit for i in world.incidents if i.family == "db_pool_exhaustion")
    unnamed(folder, [database, *world.services[database].aliases])
    return world, offline_diagnoser(folder)


def ask(diagnoser: Diagnoser, question: str) -> Any:
    result = diagnoser.diagnose(question, session_id="s-timing")
    assert result.run.status == "SUCCESS" and not result.run.degraded, result.answer
    return result


def test_an_unnamed_dependency_is_found_by_timing_and_said_to_rest_on_it(
    generated: tuple[World, Diagnoser],
) -> None:
    world, diagnoser = generated
    incident = next(i for i in world.incidents if i.family == "db_pool_exhaustion")
    at = world.onset(incident).strftime("%H:%M")
    result = ask(diagnoser, f"Why is {incident.victim} slow since {at}?")
    summary = result.run.state["composer_output"]["summary"]
    assert summary.startswith(
        f"Likely cause in {incident.culprit} (which {incident.victim} may depend on: no log "
        "line names it"
    ), summary
    assert "rests on timing alone" in summary and incident.family in categories(summary)
    statements = [c["statement"] for c in result.run.state["executor_output"]["claims"]]
    assert any(
        s.startswith(f"{incident.victim} may depend on {incident.culprit}") for s in statements
    )
    rules = result.self_evaluation["rule_evaluation"]
    assert rules["gatekeeper"]["verdict"] == "PASS" and rules["grounding"]["ungrounded"] == []
    audit: Any = diagnoser.audit
    analysed = {
        i["arguments"]["service"]
        for i in audit.invocations
        if i["run_id"] == result.run_id and i["tool_name"] == "detect_anomalies"
    }
    assert incident.culprit in analysed and len(analysed - {incident.victim}) <= 1 + (
        MAX_TIMING_CANDIDATES
    )


def test_a_service_that_is_its_own_culprit_gets_no_link_by_timing(
    generated: tuple[World, Diagnoser],
) -> None:
    world, diagnoser = generated
    for incident in [i for i in world.incidents if i.culprit == i.victim]:
        at = world.onset(incident).strftime("%H:%M")
        result = ask(diagnoser, f"Why is {incident.victim} misbehaving since {at}?")
        summary = result.run.state["composer_output"]["summary"]
        assert summary.startswith(f"Likely cause in {incident.victim} itself"), summary
        assert "timing" not in summary and incident.family in categories(summary)


def test_the_chinese_answer_hedges_the_same_way(generated: tuple[World, Diagnoser]) -> None:
    world, diagnoser = generated
    incident = next(i for i in world.incidents if i.family == "db_pool_exhaustion")
    at = world.onset(incident).strftime("%H:%M")
    result = ask(diagnoser, f"{incident.victim} 为什么从{at}开始变慢?")
    summary = result.run.state["composer_output"]["summary"]
    assert summary.startswith(f"可能的原因在 {incident.culprit} ({incident.victim} 可能依赖它"), (
        summary
    )
    assert "仅基于时间" in summary
    assert result.self_evaluation["rule_evaluation"]["grounding"]["ungrounded"] == []
