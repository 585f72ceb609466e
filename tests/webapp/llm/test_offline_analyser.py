"""The offline analyser on a world it was never tuned to: a generated one, names drawn at random.

Through the real diagnosis graph: the culprit behind a cascade is named with its cause kind,
several services get one finding each, a healthy service is said to be fine, and every claim
is an exact, grounded excerpt of a recorded ``detect_anomalies`` / ``log_patterns`` output.
"""

from __future__ import annotations

from typing import Any

import pytest

from eval.families import FAMILIES
from eval.scoring import categories
from eval.telemetry import write_world
from eval.world import World, build_world
from webapp.diagnosis import Diagnoser
from webapp.wiring import offline_diagnoser

FAMILY_KEYS = ["db_pool_exhaustion", "cache_eviction", "bad_deploy", "disk_full", "queue_lag"]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, Diagnoser]:
    world = build_world(404, FAMILY_KEYS)
    folder = tmp_path_factory.mktemp("world")
    write_world(world, folder)
    return world, offline_diagnoser(folder)


def ask(diagnoser: Diagnoser, question: str) -> Any:
    result = diagnoser.diagnose(question, session_id="s-analyser")
    assert result.run.status == "SUCCESS" and not result.run.degraded, result.answer
    return result


def test_each_incident_names_its_culprit_and_cause_kind(
    generated: tuple[World, Diagnoser],
) -> None:
    world, diagnoser = generated
    for incident in world.incidents:
        at = world.onset(incident).strftime("%H:%M")
        result = ask(diagnoser, f"Why is {incident.victim} misbehaving since {at}?")
        summary = result.run.state["composer_output"]["summary"]
        assert summary.startswith(f"Likely cause in {incident.culprit}"), summary
        assert incident.family in categories(summary), summary
        assert "No evidence of a problem" not in summary


def test_a_cascade_is_followed_to_a_dependency_the_question_never_named(
    generated: tuple[World, Diagnoser],
) -> None:
    world, diagnoser = generated
    incident = next(i for i in world.incidents if i.culprit != i.victim)
    result = ask(diagnoser, f"{incident.victim} is slow")
    audit: Any = diagnoser.audit
    invocations = [i for i in audit.invocations if i["run_id"] == result.run_id]
    analysed = [
        i["arguments"]["service"] for i in invocations if i["tool_name"] == "detect_anomalies"
    ]
    assert analysed[0] == incident.victim and incident.culprit in analysed
    claims = result.run.state["executor_output"]["claims"]
    assert any(
        c["statement"].startswith(f"{incident.victim} leads to {incident.culprit}") for c in claims
    )


def test_a_healthy_service_is_said_to_be_fine(generated: tuple[World, Diagnoser]) -> None:
    world, diagnoser = generated
    result = ask(diagnoser, f"Is {world.healthy[0]} healthy?")
    summary = result.run.state["composer_output"]["summary"]
    assert summary.startswith(f"No evidence of a problem with {world.healthy[0]}:"), summary
    assert not categories(summary)


def test_two_services_get_one_finding_each(generated: tuple[World, Diagnoser]) -> None:
    world, diagnoser = generated
    first, second = world.incidents[0], world.incidents[1]
    result = ask(diagnoser, f"Why are {first.victim} and {second.victim} misbehaving?")
    conclusions = [c["statement"] for c in result.run.state["composer_output"]["conclusions"]]
    for incident in (first, second):
        assert any(c.startswith(f"{incident.victim} degraded: ") for c in conclusions)
        assert any(c.startswith(f"Likely cause in {incident.culprit}") for c in conclusions)


def test_every_claim_is_a_grounded_excerpt_of_a_recorded_output(
    generated: tuple[World, Diagnoser],
) -> None:
    world, diagnoser = generated
    for incident in world.incidents:
        result = ask(diagnoser, f"{incident.victim} is {FAMILIES[incident.family].symptom}")
        rules = result.self_evaluation["rule_evaluation"]
        assert rules["gatekeeper"]["verdict"] == "PASS", rules["gatekeeper"]
        assert rules["grounding"]["ungrounded"] == []
        verifier = result.self_evaluation["verifier_evaluation"]
        assert verifier["effective_verdict"] == "PASS"
