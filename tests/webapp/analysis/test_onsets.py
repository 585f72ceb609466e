"""Onset detection: baselines from before the onset only, robust significance, no fixed ratio."""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta, timezone

import pytest

from webapp.analysis.onsets import (
    MIN_POINTS,
    Z_SIGNIFICANT,
    baseline_spread,
    detect_onset,
    render_change,
)

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)


def series(values: list[float]) -> list[tuple[datetime, float]]:
    return [(T0 + timedelta(minutes=i), v) for i, v in enumerate(values)]


def noisy(level: float, sigma: float, n: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [level + rng.gauss(0, sigma) for _ in range(n)]


def at(minute: int) -> datetime:
    return T0 + timedelta(minutes=minute)


def test_a_step_small_in_ratio_but_huge_in_z_is_significant() -> None:
    # Redis memory: flat around 0.72, then pinned near 0.9995 - only x1.39, but far off baseline.
    values = noisy(0.72, 0.002, 120, seed=1) + noisy(0.9995, 0.0003, 60, seed=2)
    found = detect_onset(series(values), signal="redis_memory_used_ratio")
    assert found is not None and found.direction == "up"
    assert found.onset == at(120)
    assert found.significance >= Z_SIGNIFICANT
    assert found.change == "+0.28"
    assert abs(found.baseline.median - 0.72) < 0.002 and abs(found.incident.median - 0.9995) < 0.001


def test_the_baseline_excludes_the_incident_minutes() -> None:
    # order-service error rate 0.002 -> 0.265 from minute 105 on: the baseline ends before it.
    values = noisy(0.002, 0.0004, 105, seed=3) + noisy(0.265, 0.02, 75, seed=4)
    found = detect_onset(series(values), signal="error_rate")
    assert found is not None
    assert found.onset == at(105)
    assert found.baseline.end == at(104) and found.baseline.start == at(0)
    assert found.baseline.median < 0.003
    assert found.change.startswith("x") and float(found.change[1:]) > 50


def test_a_ramp_is_dated_from_its_first_deviating_minutes() -> None:
    values = noisy(0.6, 0.005, 100, seed=5) + [0.6 + 0.01 * i for i in range(1, 41)]
    found = detect_onset(series(values), signal="memory_utilization")
    assert found is not None and found.direction == "up"
    assert at(100) <= found.onset <= at(106)
    assert found.incident.peak == pytest.approx(1.0) and found.incident.peak_at == at(139)


def test_a_drop_is_reported_as_down_with_a_signed_difference() -> None:
    values = noisy(0.95, 0.005, 90, seed=6) + noisy(0.29, 0.02, 60, seed=7)
    found = detect_onset(series(values), signal="cache_hit_ratio")
    assert found is not None and found.direction == "down"
    assert found.change.startswith("-0.6")
    assert found.incident.peak == min(values[90:])


def test_a_flat_baseline_does_not_make_every_wobble_significant() -> None:
    # MAD 0: a perfectly flat 100 then 100.4 (0.4%) is within what a gauge resolves.
    assert detect_onset(series([100.0] * 60 + [100.4] * 30), signal="flat") is None
    # ... but flat 0 then a sustained 5 (errors appearing) is a change.
    found = detect_onset(series([0.0] * 60 + [5.0] * 30), signal="ERROR", counts=True)
    assert found is not None and found.change == "+5.00" and found.onset == at(60)


def test_a_flat_all_zero_series_and_a_constant_one_have_no_onset() -> None:
    assert detect_onset(series([0.0] * 90), signal="zero") is None
    assert detect_onset(series([3.0] * 90), signal="constant") is None


def test_noise_alone_has_no_onset() -> None:
    for seed in range(10):
        assert detect_onset(series(noisy(100, 10, 180, seed)), signal="noise") is None


def test_periodic_spikes_are_not_an_onset() -> None:
    values = [
        spike if i % 15 == 0 else base
        for i, (base, spike) in enumerate(
            zip(noisy(20, 1, 180, seed=8), [200.0] * 180, strict=True)
        )
    ]
    assert detect_onset(series(values), signal="cron_cpu") is None


def test_a_real_step_among_periodic_spikes_is_found() -> None:
    base = noisy(20, 1, 180, seed=9)
    values = [200.0 if i % 15 == 0 else v + (60 if i >= 120 else 0) for i, v in enumerate(base)]
    found = detect_onset(series(values), signal="latency")
    assert found is not None and at(119) <= found.onset <= at(121)


def test_a_small_step_inside_heavy_noise_is_not_significant() -> None:
    values = noisy(100, 30, 120, seed=10) + noisy(115, 30, 60, seed=11)
    assert detect_onset(series(values), signal="noisy") is None


def test_a_short_series_is_not_assessed() -> None:
    assert detect_onset(series([1.0] * 4 + [50.0] * (MIN_POINTS - 5)), signal="short") is None


def test_an_onset_too_close_to_the_start_has_no_baseline() -> None:
    assert detect_onset(series([1.0, 1.0] + [50.0] * 60), signal="early") is None


def test_missing_and_non_finite_points_are_ignored() -> None:
    values: list[float] = [*([0.5] * 60), math.nan, *([0.9] * 30)]
    found = detect_onset(series(values), signal="gaps")
    assert found is not None and found.onset == at(61)


def test_the_finding_has_the_spec_shape() -> None:
    found = detect_onset(series([1.0] * 60 + [40.0] * 30), signal="latency_p95_ms")
    assert found is not None
    body = found.as_dict()
    assert set(body) == {
        "signal",
        "kind",
        "onset",
        "baseline",
        "incident",
        "change",
        "significance",
        "direction",
    }
    assert set(body["baseline"]) == {"start", "end", "median", "spread"}
    assert set(body["incident"]) == {"median", "peak", "peak_at"}
    assert body["onset"] == "2026-11-30T10:00:00Z" and body["change"] == "x40.0"
    assert body["kind"] == "metric" and body["direction"] == "up"


@pytest.mark.parametrize(
    ("baseline", "incident", "rendered"),
    [
        (100.0, 3820.0, "x38.2"),
        (0.002, 0.265, "x132.5"),
        (0.72, 0.9995, "+0.28"),
        (0.0, 6.0, "+6.00"),
        (0.95, 0.29, "-0.66"),
        (50.0, 90.0, "+40.0"),
        (10.0, 1500.0, "x150.0"),
        (120.0, 4000.0, "x33.3"),
        (62.0, 500.0, "x8.1"),
        (0.0, 2196.0, "+2196"),
        (5.0, 5.0, "+0"),
    ],
)
def test_changes_render_as_a_ratio_or_a_signed_difference(
    baseline: float, incident: float, rendered: str
) -> None:
    assert render_change(baseline, incident) == rendered


def test_the_spread_is_floored_relative_to_the_level_and_for_counts() -> None:
    assert baseline_spread([100.0] * 10, level=100.0) == pytest.approx(1.0)
    assert baseline_spread([0.0] * 10, level=0.0, counts=True) == 0.5
    assert baseline_spread([1.0, 2.0, 3.0, 4.0, 5.0], level=3.0) == pytest.approx(1.4826)


def test_a_periodic_burst_at_the_start_is_a_transient_not_an_onset() -> None:
    # A two-bucket burst every 20 buckets (a cron job) right after a short calm: no finding;
    # the same burst that stays up is an onset.
    values = noisy(130.0, 5.0, 60, seed=7)
    for start in range(7, 60, 20):
        values[start] = values[start + 1] = 210.0
    assert detect_onset(series(values), signal="resp_p99") is None
    values[27:] = [210.0 + v - 130.0 for v in noisy(130.0, 5.0, 33, seed=8)]
    found = detect_onset(series(values), signal="resp_p99")
    assert found is not None and found.onset == at(27)
