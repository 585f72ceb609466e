"""Metric series of a world: a morning traffic curve, noise, then each incident's effects.

Every service gets the metrics of its technology (``eval.second.metric_catalog``) at a baseline
scaled per service, following traffic by the metric's exponent, with noise. Each incident then
changes its services' metrics from each one's own onset (victims later than the culprit):
linearly to the effect's value over ``minutes`` (a step is a short ramp), back within two
minutes when the incident recovers; a leak climbs and is OOM-killed every ``minutes`` (``saw``,
with ``kills`` counting restarts and ``spikes`` the callers' errors at each kill). Batch jobs
also run harmlessly for three minutes at five past each hour; one healthy service is deployed
with no effect.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import datetime

from eval.second.catalog import Service
from eval.second.faults import Effect
from eval.second.metric_catalog import Metric, metric_name, service_metrics
from eval.second.world import Incident, World

#: Roles whose baseline is a fixed state, not a scaled level.
FIXED = frozenset(
    {
        "cluster_ok",
        "clock_sync",
        "controller",
        "generation",
        "restarts",
        "running",
        "items",
        "slots_fail",
    }
)
_CAPS = {"ratio": 1.0, "%": 100.0}


@dataclass
class Series:
    """One metric of one service, a value per step."""

    service: str
    metric: Metric
    name: str
    values: list[float]


def traffic(world: World, index: int) -> float:
    """Relative traffic at point ``index``: 0.6 at 06:00 climbing to 1.1 at noon, with a ripple."""
    x = index / max(world.minutes() - 1, 1)
    return 0.6 + 0.5 * x * x * (3 - 2 * x) + 0.04 * math.sin(2 * math.pi * index / 47)


def _baseline(
    world: World, service: Service, metric: Metric, rng: random.Random, load: list[float]
) -> list[float]:
    scale = 1.0 if metric.role in FIXED else rng.uniform(0.7, 1.5)
    if metric.role == "generation":
        scale = rng.randint(8, 140) / metric.base
    values = []
    for index in range(world.minutes()):
        level = metric.base * scale * load[index] ** metric.traffic
        if metric.base == 0:
            value = 1.0 if rng.random() < metric.noise else 0.0
        else:
            value = level * (1 + metric.noise * rng.gauss(0, 1))
        values.append(value)
    if service.kind == "batch":
        _hourly_runs(world, metric, values)
    return values


def _hourly_runs(world: World, metric: Metric, values: list[float]) -> None:
    for index in range(world.minutes()):
        if world.at(index).minute in (5, 6, 7):
            values[index] = 1.0 if metric.role == "running" else 310.0


def _progress(effect: Effect, onset: datetime, end: datetime | None, at: datetime) -> float:
    """How far ``effect`` has gone at ``at``: 0 before the onset, 1 at full strength."""
    elapsed = (at - onset).total_seconds() / 60
    if elapsed < 0:
        return 0.0
    if effect.shape == "saw":
        return (elapsed % effect.minutes) / effect.minutes
    if effect.shape == "kills":
        return float(elapsed // effect.minutes)
    if effect.shape == "bump":
        return 1.0
    if effect.shape == "spikes":
        return 1.0 if elapsed >= effect.minutes and elapsed % effect.minutes < 2 else 0.0
    reached = min(elapsed / max(effect.minutes, 0.01), 1.0)
    if end is not None and at > end:
        reached *= max(0.0, 1 - (at - end).total_seconds() / 120)
    return reached


def _apply(
    series: Series,
    base: list[float],
    effect: Effect,
    span: tuple[datetime, datetime | None],
    world: World,
    rng: random.Random,
    damp: float,
) -> None:
    """Change ``series`` by ``effect``; relative changes add to the baseline, so incidents sharing
    a service (the edge) add up instead of multiplying."""
    value = effect.value if effect.absolute else 1 + (effect.value - 1) * damp
    for index, current in enumerate(series.values):
        done = _progress(effect, span[0], span[1], world.at(index))
        if done == 0:
            continue
        if effect.shape in ("kills", "bump"):
            series.values[index] = current + effect.value * done
        elif effect.absolute:
            target = value * (1 + _spread(series.metric) * rng.gauss(0, 1))
            series.values[index] = current + (target - current) * done
        else:
            series.values[index] = current + base[index] * (value - 1) * done


def _effects(
    incident: Incident, service: Service, culprit_kind: str
) -> tuple[tuple[Effect, ...], float]:
    """The effects ``incident`` has on ``service`` and how damped they are (further hops less)."""
    binding, fault = incident.binding, incident.fault
    if service.name == binding.culprit:
        found = fault.culprit
    elif service.name == binding.resource:
        found = fault.resource
    elif service.name in binding.victims:
        found = fault.victim
    else:
        return (), 0.0
    hop = binding.victims.index(service.name) if service.name in binding.victims else 0
    damp = 0.4 if service.kind == "edge" else 1.0 if hop == 0 else 0.6
    return tuple(e for e in found if e.when in ("", culprit_kind)), damp


def service_series(world: World, service: Service) -> dict[str, Series]:
    """Every metric of ``service`` with the incidents' effects, by role."""
    rng = random.Random(f"{world.seed}:{service.name}")
    kinds = {world.system.service(d).kind for d in service.deps}
    metrics = service_metrics(
        service.tech,
        service.kind,
        db="db" in kinds,
        external=bool(service.external),
        issuer=service.issuer,
    )
    load = [traffic(world, i) for i in range(world.minutes())]
    found = {
        m.role: Series(
            service.name, m, metric_name(m, service.name), _baseline(world, service, m, rng, load)
        )
        for m in metrics
    }
    base = {role: list(series.values) for role, series in found.items()}
    for incident in world.incidents:
        culprit_kind = world.system.service(incident.binding.culprit).kind
        effects, damp = _effects(incident, service, culprit_kind)
        span = (incident.onset_of(service.name), incident.end)
        for effect in effects:
            if effect.role in found:
                _apply(found[effect.role], base[effect.role], effect, span, world, rng, damp)
    if (
        world.noise.get("noop_deploy") == service.name
        and world.noop_deploy
        and "generation" in found
    ):
        noop = Effect("generation", 1, shape="bump")
        generation = found["generation"]
        _apply(generation, generation.values, noop, (world.noop_deploy, None), world, rng, 1.0)
    for series in found.values():
        series.values = [_finish(series.metric, v) for v in series.values]
    return found


def _spread(metric: Metric) -> float:
    """Noise on an absolute target: none on limits and states, more on queues."""
    if metric.role in FIXED or metric.role in ("fds", "pool_active"):
        return 0.0
    return 0.08 if metric.whole else 0.03


def _finish(metric: Metric, value: float) -> float:
    value = min(max(value, 0.0), _CAPS.get(metric.unit, math.inf))
    if metric.whole:
        return float(round(value))
    return float(f"{value:.4g}")


def world_series(world: World) -> dict[str, dict[str, Series]]:
    """Every service's series, by service then role."""
    return {s.name: service_series(world, s) for s in world.system.services}
