"""The second generator's worlds: deterministic, and their ground truth is what the telemetry shows."""

from __future__ import annotations

import statistics
from datetime import timedelta
from pathlib import Path

from eval.second.logs import world_events
from eval.second.mechanisms import FAULTS
from eval.second.run import WorldFixture
from eval.second.signals import FIXED, traffic, world_series
from eval.second.templates import service_address
from eval.second.truth import world_truths
from eval.second.world import ORDER, build_world
from eval.second.writer import write_world


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_seed_writes_the_same_world_byte_for_byte(tmp_path: Path) -> None:
    write_world(build_world(2), tmp_path / "a")
    write_world(build_world(2), tmp_path / "b")
    first, second = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert first == second and "logs/order-api/app.log" in first


def test_four_worlds_use_every_mechanism_and_every_domain() -> None:
    worlds = [build_world(seed) for seed in range(1, 5)]
    assert {i.fault.key for w in worlds for i in w.incidents} == set(ORDER) == set(FAULTS)
    assert len({w.system.key for w in worlds}) == 4
    assert {w.system.log_styles for w in worlds} == {"self_hosted", "managed"}


def test_the_culprit_signal_steps_at_its_onset_and_not_before() -> None:
    for seed in range(1, 5):
        world = build_world(seed)
        series = world_series(world)
        for incident in world.incidents:
            name = incident.binding.culprit
            truth = world_truths(world, series)[incident.slot]
            quantity = next(
                q
                for q in truth.quantities
                if q.service == name or q.service == incident.binding.resource
            )
            values = next(
                s for s in series[quantity.service].values() if s.name == quantity.metric
            ).values
            onset = int((incident.onset - world.start).total_seconds() // 60)
            before, after = values[onset - 20 : onset], values[onset + 12 : onset + 30]
            jump = abs(statistics.median(after) - statistics.median(before))
            spread = max(before) - min(before)
            assert jump > 3 * spread + 1e-9, (world.label, incident.fault.key, quantity.metric)
            assert abs(quantity.plateau - quantity.baseline) > 3 * spread


def test_victims_feel_it_after_the_culprit_and_their_lines_name_the_upstream() -> None:
    world = build_world(2)
    events = [e for e, _ in world_events(world)]
    for incident in world.incidents:
        assert all(d > 0 for d in incident.delays)
        first = next(
            (v for v in incident.binding.victims if world.system.service(v).kind == "app"), None
        )
        if first is None:
            continue
        upstream = incident.binding.resource or incident.binding.culprit
        after = [
            e
            for e in events
            if e.service == first and e.level == "ERROR" and e.moment >= incident.onset
        ]
        # A database's own errors (a replay conflict, a lock timeout) name it only implicitly.
        marks = (upstream, service_address(world.system, upstream), "recovery", "lock timeout")
        assert any(any(m in e.text for m in marks) for e in after), (incident.fault.key, first)
        assert min(e.moment for e in after) > incident.onset


def test_healthy_services_have_no_step_beyond_what_traffic_explains() -> None:
    for seed in range(1, 5):
        world = build_world(seed)
        series = world_series(world)
        load = [traffic(world, i) for i in range(world.minutes())]
        for name in world.healthy:
            for found in series[name].values():
                if found.metric.role in FIXED or found.metric.base == 0:
                    continue
                level = [v / load[i] ** found.metric.traffic for i, v in enumerate(found.values)]
                overall = statistics.median(level)
                # Noisy small rates (a few errors a minute) wander more than latencies do.
                tolerance = 0.3 if found.metric.noise < 0.2 else 0.5
                for start in range(0, len(level) - 15, 15):
                    window = statistics.median(level[start : start + 15])
                    assert abs(window - overall) <= tolerance * overall, (name, found.name)


def test_concurrent_incidents_have_two_unrelated_culprits_minutes_apart(
    second_worlds: dict[int, WorldFixture],
) -> None:
    for fixture in second_worlds.values():
        slots = {i.slot: i for i in fixture.world.incidents}
        first, second = slots["first"], slots["second"]
        edges = {s.name for s in fixture.world.system.of_kind("edge")}
        assert first.binding.culprit != second.binding.culprit
        assert not (set(first.binding.involved) & set(second.binding.involved)) - edges
        assert timedelta(minutes=3) <= second.onset - first.onset <= timedelta(minutes=9)
        concurrent = [c for c in fixture.cases if c.kind == "concurrent"]
        assert concurrent and all(
            {t.culprit for t in c.expect.truths} == {first.binding.culprit, second.binding.culprit}
            for c in concurrent
        )


def test_every_question_kind_is_asked_in_english_and_chinese(
    second_worlds: dict[int, WorldFixture],
) -> None:
    cases = [c for f in second_worlds.values() for c in f.cases]
    kinds = {c.kind for c in cases}
    assert kinds == {
        "named",
        "business",
        "symptom",
        "chinese",
        "in_incident",
        "state",
        "concurrent",
        "healthy",
        "point_value",
        "out_of_range",
    }
    chinese = [c for c in cases if any("\u4e00" <= ch <= "\u9fff" for ch in c.turns[-1])]
    assert {c.expect.outcome for c in chinese} >= {"incident", "healthy", "value", "out_of_range"}
    for fixture in second_worlds.values():
        assert 30 <= len(fixture.cases) <= 60
        early = next(i for i in fixture.world.incidents if i.slot == "early")
        inside = [c for c in fixture.cases if c.kind == "in_incident"]
        assert inside and early.onset <= fixture.world.end - timedelta(hours=2)
        healthy = {c.expect.service for c in fixture.cases if c.expect.outcome == "healthy"}
        assert set(fixture.world.noise.values()) <= healthy
        involved = {n for i in fixture.world.incidents for n in i.binding.involved}
        assert not healthy & involved
