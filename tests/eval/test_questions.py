"""Question sets: every kind, expected outcomes that match the world's ground truth."""

from __future__ import annotations

import re
from pathlib import Path

from eval.questions import KINDS, world_cases
from eval.telemetry import world_alerts
from eval.world import World


def _cases(world: World) -> list:  # type: ignore[type-arg]
    firing = [a["alert_name"] for a in world_alerts(world) if a["state"] == "firing"]
    return world_cases(world, firing, 50)


def test_every_world_gets_at_least_fifty_cases_of_every_kind(
    worlds: list[tuple[World, Path]],
) -> None:
    for world, _ in worlds:
        cases = _cases(world)
        assert len(cases) >= 50
        assert {c.kind for c in cases} == set(KINDS)
        assert len({c.id for c in cases}) == len(cases)


def test_cases_are_reproducible(worlds: list[tuple[World, Path]]) -> None:
    world = worlds[0][0]
    assert _cases(world) == _cases(world)


def test_expected_outcomes_follow_the_ground_truth(worlds: list[tuple[World, Path]]) -> None:
    for world, _ in worlds:
        truth = {(i.culprit, i.family) for i in world.incidents}
        for case in _cases(world):
            expected = case.expected
            if expected.outcome == "incident":
                assert set(expected.causes) <= truth
                assert len(expected.causes) == (2 if case.kind == "two_services" else 1)
            elif expected.outcome == "healthy":
                assert expected.service in world.healthy
            elif expected.outcome == "unknown":
                assert expected.service not in world.services
                assert expected.service in case.turns[0]
            else:
                assert "Watchdog" in expected.alerts
                assert len(expected.alerts) == len(world.incidents) + 1


def test_follow_ups_refer_back_and_chinese_questions_are_chinese(
    worlds: list[tuple[World, Path]],
) -> None:
    for world, _ in worlds:
        for case in _cases(world):
            if case.kind == "follow_up":
                first, second = case.turns
                assert any(name in first for name in world.services)
                assert not any(name in second for name in world.services)
                assert re.search(r"\bit\b|\bits\b|它", second)
            elif case.kind == "chinese":
                assert re.search(r"[\u4e00-\u9fff]{2}", case.turns[0])
            elif case.kind == "misspelling":
                assert not any(
                    re.search(rf"\b{re.escape(n)}\b", case.turns[0]) for n in world.services
                )


def test_times_in_questions_are_never_the_exact_onset(worlds: list[tuple[World, Path]]) -> None:
    for world, _ in worlds:
        onsets = {f"{world.onset(i):%H:%M}" for i in world.incidents}
        for case in _cases(world):
            if case.kind in ("direct", "misspelling"):
                stated = re.findall(r"\d\d:\d\d", case.turns[0])
                assert stated and not set(stated) & onsets
