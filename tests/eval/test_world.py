"""The world generator: reproducible, realistic, and every incident visible in its data."""

from __future__ import annotations

import gzip
import itertools
import json
import re
import statistics
from datetime import timedelta
from pathlib import Path

import pytest

from eval.families import FAMILIES
from eval.fixtures import families_for
from eval.metrics import SCHEMES
from eval.names import DEMO_NAMES, misspell
from eval.series import metric_name
from eval.telemetry import write_world
from eval.world import Incident, World, build_world, runbooks
from webapp.demo.backend import DemoTelemetryBackend

# Per family: (where the cause shows: "culprit" or "victim", the role that must move, direction).
KEY_SIGNALS = {
    "db_pool_exhaustion": ("culprit", "slow_statements", 1),
    "downstream_timeout": ("culprit", "gc_pause", 1),
    "cache_eviction": ("culprit", "kv_dropped", 1),
    "bad_deploy": ("victim", "version", 1),
    "disk_full": ("culprit", "volume_used", 1),
    "cert_expiry": ("culprit", "chain_ttl", -1),
    "cpu_saturation": ("victim", "cpu", 1),
    "memory_leak": ("victim", "mem", 1),
    "queue_lag": ("victim", "consumer_behind", 1),
}


def _files(folder: Path) -> dict[str, bytes]:
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            out[str(path.relative_to(folder))] = (
                gzip.decompress(data) if path.suffix == ".gz" else data
            )
    return out


def test_the_same_seed_gives_the_same_world_byte_for_byte(tmp_path: Path) -> None:
    families = families_for(0)
    write_world(build_world(5, families), tmp_path / "a")
    write_world(build_world(5, families), tmp_path / "b")
    assert _files(tmp_path / "a") == _files(tmp_path / "b")


def test_another_seed_gives_other_names_and_onsets() -> None:
    first, second = build_world(5, families_for(0)), build_world(6, families_for(0))
    assert set(first.services) != set(second.services)
    assert [i.onset_minute for i in first.incidents] != [i.onset_minute for i in second.incidents]


def test_unknown_or_repeated_families_are_rejected() -> None:
    with pytest.raises(ValueError, match="distinct"):
        build_world(1, ["bad_deploy", "bad_deploy"])
    with pytest.raises(ValueError, match="distinct"):
        build_world(1, ["solar_flare"])


def test_five_worlds_cover_every_family_at_least_twice() -> None:
    counts = {key: 0 for key in FAMILIES}
    for index in range(5):
        for family in families_for(index):
            counts[family] += 1
    assert min(counts.values()) >= 2 and len(FAMILIES) >= 8


def test_names_are_new_lowercase_and_declare_chinese_aliases(
    worlds: list[tuple[World, Path]],
) -> None:
    for world, folder in worlds:
        assert not set(world.services) & DEMO_NAMES
        assert all(name == name.lower() for name in world.services)
        dataset = json.loads((folder / "dataset.json").read_text(encoding="utf-8"))
        assert set(dataset["aliases"]) == set(world.services)
        for aliases in dataset["aliases"].values():
            assert any(re.search(r"[\u4e00-\u9fff]", alias) for alias in aliases)
        styles = {re.sub(r"[a-z]+", "x", name) for name in world.services}
        assert len(styles) >= 3  # several naming styles, not one pattern


def test_onsets_are_spread_and_never_on_a_round_half_hour(
    worlds: list[tuple[World, Path]],
) -> None:
    for world, _ in worlds:
        minutes = sorted(i.onset_minute for i in world.incidents)
        assert all(b - a >= 9 for a, b in itertools.pairwise(minutes))
        for incident in world.incidents:
            assert world.onset(incident).minute % 30 != 0
            assert world.onset(incident).second != 0


def test_worlds_have_healthy_services_and_noise(worlds: list[tuple[World, Path]]) -> None:
    for world, _ in worlds:
        touched = {name for i in world.incidents for name in i.affected}
        assert len(world.healthy) >= 2 and not set(world.healthy) & touched
        assert world.noop_deploy is not None and world.noop_deploy[0] in world.healthy
        assert len(world.noisy) == 3
        assert not set(world.unknown) & set(world.services)


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def _moved(
    backend: DemoTelemetryBackend, world: World, incident: Incident, service: str, role: str
) -> tuple[float, float]:
    onset = world.onset(incident)
    metric = metric_name(world, role)
    before = backend.query_metrics(
        service=service, metric=metric, start=world.start, end=onset - timedelta(minutes=2)
    )
    after = backend.query_metrics(
        service=service,
        metric=metric,
        start=onset + timedelta(minutes=8),
        end=onset + timedelta(minutes=14),
    )
    return (
        _median([p[1] for p in before["series"][0]["points"]]),
        _median([p[1] for p in after["series"][0]["points"]]),
    )


def test_every_family_moves_its_key_signal_after_the_onset(
    worlds: list[tuple[World, Path]],
) -> None:
    seen = set()
    for world, folder in worlds:
        backend = DemoTelemetryBackend(folder)
        for incident in world.incidents:
            where, role, direction = KEY_SIGNALS[incident.family]
            service = incident.culprit if where == "culprit" else incident.victim
            before, after = _moved(backend, world, incident, service, role)
            assert (after - before) * direction > 0, (incident, before, after)
            if role not in ("version", "restarts"):
                assert abs(after - before) > 0.3 * max(abs(before), 1e-6), (incident, before, after)
            seen.add(incident.family)
    assert seen == set(FAMILIES)


def test_every_victim_logs_new_trouble_after_the_onset(worlds: list[tuple[World, Path]]) -> None:
    for world, folder in worlds:
        backend = DemoTelemetryBackend(folder)
        for incident in world.incidents:
            onset = world.onset(incident)
            window = timedelta(minutes=15)
            counts = []
            for start in (onset - window, onset):
                total = 0
                for level in ("ERROR", "WARN"):
                    total += backend.query_logs(
                        service=incident.victim, start=start, end=start + window, level=level
                    )["total"]
                counts.append(total)
            assert counts[1] >= 3 * counts[0] + 5, (incident, counts)


def test_log_lines_do_not_name_the_culprit_in_every_line(
    worlds: list[tuple[World, Path]],
) -> None:
    for world, folder in worlds:
        backend = DemoTelemetryBackend(folder)
        for incident in world.incidents:
            if incident.culprit == incident.victim:
                continue
            records = (
                backend.query_logs(
                    service=incident.victim,
                    start=world.onset(incident),
                    end=world.end,
                    limit=200,
                    level="ERROR",
                )["records"]
                or backend.query_logs(
                    service=incident.victim,
                    start=world.onset(incident),
                    end=world.end,
                    limit=200,
                    level="WARN",
                )["records"]
            )
            naming = sum(incident.culprit in r["message"] for r in records)
            assert records and naming < len(records), incident


_GENERIC = {"ms", "s", "per", "ratio", "p95", "p99", "seconds", "total", "rate", "http"}


def _phrasings(family_key: str) -> list[str]:
    family = FAMILIES[family_key]
    texts = [*family.victim_errors, *family.victim_warns, *(t for _, t in family.cause_lines)]
    texts += [text for _, text in family.cycle_lines]
    texts += [text for *_, text in family.precursor]
    return [re.sub(r"\{[a-z]+\}", " ", text).lower() for text in texts]


def test_metric_names_share_no_word_with_the_log_phrasing() -> None:
    for key, family in FAMILIES.items():
        words = set(re.findall(r"[a-z0-9]+", " ".join(_phrasings(key))))
        for scheme in SCHEMES.values():
            for shape in (*family.victim, *family.cause):
                parts = set(scheme[shape.role].split("_")) - _GENERIC
                assert not parts & words, (key, scheme[shape.role], parts & words)


def test_runbooks_do_not_quote_the_log_phrasing() -> None:
    books = " ".join(runbooks().values()).lower()
    for key in FAMILIES:
        for text in _phrasings(key):
            words = re.findall(r"[a-z0-9']+", text)
            for i in range(len(words) - 3):
                assert " ".join(words[i : i + 4]) not in books, (key, words[i : i + 4])


def test_the_folder_loads_in_the_demo_backend(worlds: list[tuple[World, Path]]) -> None:
    world, folder = worlds[0]
    backend = DemoTelemetryBackend(folder)
    assert backend.services() == sorted(world.services)
    assert backend.reference_time() == world.end
    firing = backend.query_alerts()["alerts"]
    assert {a["service"] for a in firing} >= {i.victim for i in world.incidents}
    assert backend.runbook_dir() is not None


def test_misspelling_changes_one_letter_of_the_longest_part() -> None:
    import random

    rng = random.Random(3)
    for name in ("ledger-service", "pg-settlement", "hermes"):
        typo = misspell(name, rng)
        assert typo != name and abs(len(typo) - len(name)) <= 1


def test_every_seed_yields_a_world_for_its_families() -> None:
    for seed in range(1, 61):
        world = build_world(seed, families_for(seed))
        assert [i.family for i in world.incidents] == families_for(seed)
        assert len(world.healthy) >= 2
