"""Metric series of a world: baselines, drift, incident shapes and noise, one point a minute.

Ramp and drift shapes go through the demo generator's ``apply_effects``; the world adds the
shapes the demo never needed (a leak's sawtooth, a restart counter, a countdown to expiry) and
the noise: a periodic spike on one healthy service and a deploy that changed nothing.
"""

from __future__ import annotations

import random

from demo.metricgen import Effect, apply_effects, clamp, rounded
from eval.families import FAMILIES, Shape
from eval.metrics import POOL_MAX, ROLES, SCHEMES
from eval.world import WINDOW_MINUTES, Incident, Service, World

POINTS = WINDOW_MINUTES + 1
# role -> {service: values}
Series = dict[tuple[str, str], list[float]]


def _shapes(world: World, service: Service) -> list[tuple[Shape, Incident]]:
    shapes: list[tuple[Shape, Incident]] = []
    for incident in world.incidents:
        family = FAMILIES[incident.family]
        victims = [
            n for n in incident.affected if n != incident.culprit or family.culprit == "self"
        ]
        if family.culprit == "queue":
            victims = [incident.victim]
        if service.name in victims:
            shapes += [(shape, incident) for shape in family.victim]
        elif service.name in incident.affected:
            shapes += [(shape, incident) for shape in family.cause]
    return shapes


def _special(shape: Shape, since: int, base: float, onset: int, minute: int) -> float:
    if shape.kind == "saw":
        phase = since % shape.ramp
        return base + (shape.value - base) * (phase + 1) / shape.ramp
    if shape.kind == "steps":
        return base + since // shape.ramp
    if shape.kind == "bump":
        return base + shape.value
    return max(0.0, float(onset - minute) * 60.0)  # countdown


def _mean_sd(
    service: Service, role: str, minute: int, shapes: list[tuple[Shape, Incident]]
) -> tuple[float, float]:
    baseline = service.roles[role]
    mean, sd = baseline.mean + baseline.drift * minute, baseline.sd
    ramps: list[tuple[Effect, int]] = []
    for shape, incident in shapes:
        if shape.role != role:
            continue
        since = minute - incident.onset_minute
        if shape.kind == "countdown":
            mean = _special(shape, since, mean, incident.onset_minute, minute)
            continue
        if shape.kind != "ramp":
            if since >= 0:
                mean, sd = (
                    _special(shape, since, baseline.mean, incident.onset_minute, minute),
                    (shape.sd),
                )
            continue
        target = baseline.mean * shape.value if shape.rel else shape.value
        spread = target * shape.sd if shape.rel else shape.sd
        to = shape.to * (baseline.mean if shape.rel else 1.0) if shape.to is not None else None
        effect = Effect(incident.id, service.name, role, target, spread, shape.ramp, shape.start)
        if to is not None:
            effect = Effect(
                incident.id, service.name, role, target, spread, to=to, duration=shape.duration
            )
        ramps.append((effect, incident.onset_minute))
    return apply_effects(mean, sd, ramps, minute)


def _noise(world: World, service: Service, role: str, minute: int, mean: float) -> float:
    # A cron job every 20 minutes on one healthy service, visible in the baseline too.
    spike = world.spiky == service.name and minute % 20 in (7, 8)
    if spike and role in ("cpu", "latency_p95", "latency_p99"):
        return mean + 0.25 if role == "cpu" else mean * 1.6
    if world.noop_deploy and world.noop_deploy[0] == service.name and role == "version":
        return mean + 0.01 if minute >= world.noop_deploy[1] else mean
    return mean


def _limit(role: str, value: float) -> float:
    unit = ROLES[role][0]
    if role == "pool_busy":
        return clamp(unit, value, ceiling=POOL_MAX)
    if role == "cpu":
        return min(max(value, 0.01), 0.995)
    if role == "chain_ttl":
        return max(value, 0.0)
    return clamp(unit, value)


def service_series(world: World, service: Service) -> dict[str, list[float]]:
    """Every role of ``service``: one value per minute of the window."""
    shapes = _shapes(world, service)
    out: dict[str, list[float]] = {}
    for role in service.roles:
        rng = random.Random(f"{world.seed}:metric:{service.name}:{role}")
        values = []
        for minute in range(POINTS):
            mean, sd = _mean_sd(service, role, minute, shapes)
            mean = _noise(world, service, role, minute, mean)
            value = mean + rng.gauss(0.0, sd) if sd else mean
            values.append(rounded(ROLES[role][1], _limit(role, value)))
        out[role] = values
    return out


def _edge(world: World, series: dict[str, dict[str, list[float]]], edge: Service) -> None:
    """The edge's errors and latency are those of the apps it forwards to."""
    apps = [s.name for s in world.apps() if s.kind == "app"]
    rng = random.Random(f"{world.seed}:metric:{edge.name}:derived")
    share = 1.0 / len(apps)
    own = series[edge.name]
    for minute in range(POINTS):
        errors = sum(series[a]["error_ratio"][minute] for a in apps) * share
        p95 = max(series[a]["latency_p95"][minute] for a in apps) * 0.6 + 8.0
        own["error_ratio"][minute] = round(max(0.0, errors + rng.gauss(0.0004, 0.0002)), 4)
        own["latency_p95"][minute] = round(p95, 1)
        own["latency_p99"][minute] = round(p95 * 1.4, 1)


def world_series(world: World) -> dict[str, dict[str, list[float]]]:
    """service -> role -> values."""
    series = {name: service_series(world, s) for name, s in world.services.items()}
    for service in world.services.values():
        if service.kind == "edge":
            _edge(world, series, service)
    return series


def metric_name(world: World, role: str) -> str:
    """The world's name for a metric role."""
    return SCHEMES[world.scheme][role]
