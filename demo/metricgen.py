"""Metric series of the demo system: seeded baselines plus the scenarios' effects.

A point at minute ``m`` describes the minute starting at ``start + m``. Every series gets its
own random stream (seeded by ``seed``, service key and metric), so changing one series never
shifts another, and both variants share the same numbers.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from dataclasses import dataclass

from demo.scenarios import ONSETS
from demo.system import GATEWAY_MIX, WINDOW_MINUTES

POINTS = WINDOW_MINUTES + 1

# metric -> (unit, decimals)
METRIC_UNITS: dict[str, tuple[str, int]] = {
    "latency_p95_ms": ("ms", 1),
    "latency_p99_ms": ("ms", 1),
    "error_rate": ("ratio", 4),
    "request_rate": ("req/s", 1),
    "cpu_utilization": ("ratio", 3),
    "memory_utilization": ("ratio", 3),
    "db_pool_active_connections": ("connections", 0),
    "db_pool_pending_requests": ("requests", 0),
    "jvm_gc_pause_ms": ("ms", 1),
    "cache_hit_ratio": ("ratio", 4),
    "deploy_version": ("version", 2),
    "mysql_threads_connected": ("connections", 0),
    "mysql_slow_queries_per_sec": ("queries/s", 2),
    "redis_memory_used_ratio": ("ratio", 4),
    "redis_evicted_keys_per_sec": ("keys/s", 1),
    "redis_connected_clients": ("clients", 0),
}

POOL_MAX = 50

# (baseline mean, noise standard deviation)
Baseline = tuple[float, float]


def _app(p95: float, rate: float, err: float, cpu: float, mem: float) -> dict[str, Baseline]:
    return {
        "latency_p95_ms": (p95, p95 * 0.05),
        "latency_p99_ms": (p95 * 1.5, p95 * 0.08),
        "error_rate": (err, err * 0.3),
        "request_rate": (rate, rate * 0.04),
        "cpu_utilization": (cpu, 0.02),
        "memory_utilization": (mem, 0.008),
    }


def _pool(active: float) -> dict[str, Baseline]:
    return {"db_pool_active_connections": (active, 1.5), "db_pool_pending_requests": (0.0, 0.0)}


# service key -> metric -> baseline
BASELINES: dict[str, dict[str, Baseline]] = {
    "api-gateway": _app(140.0, 120.0, 0.002, 0.30, 0.45),
    "order-service": {**_app(95.0, 22.0, 0.002, 0.28, 0.52), **_pool(6.0)},
    "payment-service": {
        **_app(120.0, 12.0, 0.002, 0.25, 0.58),
        **_pool(9.0),
        "jvm_gc_pause_ms": (18.0, 4.0),
    },
    "inventory-service": {
        **_app(60.0, 30.0, 0.001, 0.35, 0.61),
        **_pool(7.0),
        "jvm_gc_pause_ms": (22.0, 5.0),
    },
    "user-service": {**_app(70.0, 25.0, 0.001, 0.22, 0.48), **_pool(5.0)},
    "catalog-service": {**_app(80.0, 50.0, 0.002, 0.30, 0.55), "cache_hit_ratio": (0.95, 0.006)},
    "shipping-service": {
        **_app(110.0, 14.0, 0.001, 0.20, 0.50),
        **_pool(4.0),
        "deploy_version": (2.73, 0.0),
    },
    "mysql-primary": {
        "mysql_threads_connected": (62.0, 3.0),
        "mysql_slow_queries_per_sec": (0.02, 0.015),
        "cpu_utilization": (0.35, 0.025),
    },
    "redis-cache": {
        "redis_memory_used_ratio": (0.72, 0.002),
        "redis_evicted_keys_per_sec": (0.0, 0.0),
        "redis_connected_clients": (180.0, 4.0),
        "cpu_utilization": (0.18, 0.015),
    },
}


@dataclass(frozen=True)
class Effect:
    """A scenario's change to one series, from ``start`` minutes after the scenario's onset.

    ``scenario`` and ``service`` say which series it applies to (``apply_effects`` takes the
    onset); the evaluation's world generator reuses this shape with its own incidents.

    Without ``to`` the series moves linearly to ``target`` over ``ramp`` minutes and stays;
    with ``to`` it jumps to ``target`` and drifts to ``to`` over ``duration`` minutes.
    """

    scenario: str
    service: str
    metric: str
    target: float
    sd: float
    ramp: int = 3
    start: int = 0
    to: float | None = None
    duration: int = 1


EFFECTS = (
    # S1: a report query holds row locks on mysql-primary; payment's pool drains.
    Effect("db_pool_exhaustion", "payment-service", "latency_p95_ms", 3800.0, 320.0),
    Effect("db_pool_exhaustion", "payment-service", "latency_p99_ms", 5060.0, 90.0),
    Effect("db_pool_exhaustion", "payment-service", "error_rate", 0.06, 0.012),
    Effect("db_pool_exhaustion", "payment-service", "cpu_utilization", 0.31, 0.02),
    Effect("db_pool_exhaustion", "payment-service", "db_pool_active_connections", 50.0, 0.0, 2),
    Effect(
        "db_pool_exhaustion",
        "payment-service",
        "db_pool_pending_requests",
        6.0,
        2.0,
        to=38.0,
        duration=WINDOW_MINUTES - ONSETS["db_pool_exhaustion"],
    ),
    Effect("db_pool_exhaustion", "mysql-primary", "mysql_slow_queries_per_sec", 3.2, 0.5, 2),
    Effect("db_pool_exhaustion", "mysql-primary", "mysql_threads_connected", 128.0, 5.0, 4),
    Effect("db_pool_exhaustion", "mysql-primary", "cpu_utilization", 0.82, 0.035),
    # S2: inventory-service thrashes in GC; order-service's calls to it time out.
    Effect("downstream_timeout", "inventory-service", "latency_p95_ms", 2900.0, 260.0, 4),
    Effect("downstream_timeout", "inventory-service", "latency_p99_ms", 4700.0, 380.0, 4),
    Effect("downstream_timeout", "inventory-service", "jvm_gc_pause_ms", 1150.0, 210.0),
    Effect("downstream_timeout", "inventory-service", "cpu_utilization", 0.95, 0.015),
    Effect("downstream_timeout", "inventory-service", "memory_utilization", 0.94, 0.01, 5),
    Effect("downstream_timeout", "order-service", "error_rate", 0.27, 0.035),
    Effect("downstream_timeout", "order-service", "latency_p95_ms", 2080.0, 35.0),
    Effect("downstream_timeout", "order-service", "latency_p99_ms", 2210.0, 25.0),
    Effect("downstream_timeout", "order-service", "db_pool_active_connections", 11.0, 2.0),
    # S3: a batch writer fills redis-cache; LRU eviction empties catalog's working set.
    Effect("cache_eviction", "redis-cache", "redis_memory_used_ratio", 0.9995, 0.0003, 10, -10),
    Effect("cache_eviction", "redis-cache", "redis_connected_clients", 196.0, 4.0, 1, -10),
    Effect("cache_eviction", "redis-cache", "redis_evicted_keys_per_sec", 2600.0, 380.0, 2),
    Effect("cache_eviction", "redis-cache", "cpu_utilization", 0.55, 0.03),
    Effect("cache_eviction", "catalog-service", "cache_hit_ratio", 0.30, 0.03, 2),
    Effect("cache_eviction", "catalog-service", "latency_p95_ms", 1050.0, 85.0, 2),
    Effect("cache_eviction", "catalog-service", "latency_p99_ms", 1600.0, 120.0, 2),
    Effect("cache_eviction", "catalog-service", "cpu_utilization", 0.44, 0.02),
    Effect("cache_eviction", "catalog-service", "error_rate", 0.004, 0.001),
    Effect("cache_eviction", "mysql-primary", "cpu_utilization", 0.88, 0.03),
    # S4: version 2.8.0 throws on label creation; nothing else changes.
    Effect("bad_deploy", "shipping-service", "deploy_version", 2.80, 0.0, 1),
    Effect("bad_deploy", "shipping-service", "error_rate", 0.31, 0.025, 1),
    Effect(
        "bad_deploy", "shipping-service", "memory_utilization", 0.36, 0.008, to=0.5, duration=30
    ),
)

Series = dict[tuple[str, str], list[float]]


def clamp(unit: str, value: float, *, ceiling: float | None = None) -> float:
    """Keep a value in its unit's range: ratios in [0, 1], counts non-negative."""
    if ceiling is not None:
        return min(max(value, 0.0), ceiling)
    if unit == "ratio":
        return min(max(value, 0.0), 1.0)
    return max(value, 0.0)


def _clamp(metric: str, value: float) -> float:
    if metric == "db_pool_active_connections":
        return clamp("connections", value, ceiling=POOL_MAX)
    if metric == "cpu_utilization":
        return min(max(value, 0.01), 0.995)
    return clamp(METRIC_UNITS[metric][0], value)


def rounded(decimals: int, value: float) -> float:
    """``value`` to ``decimals`` places (whole numbers as floats)."""
    return float(round(value)) if decimals == 0 else round(value, decimals)


def _round(metric: str, value: float) -> float:
    return rounded(METRIC_UNITS[metric][1], value)


def apply_effects(
    mean: float, sd: float, effects: Iterable[tuple[Effect, int]], minute: int
) -> tuple[float, float]:
    """Mean and noise of a series at ``minute`` under ``(effect, onset minute)`` pairs."""
    for effect, onset in effects:
        since = minute - onset - effect.start
        if since < 0:
            continue
        if effect.to is None:
            frac = min(1.0, (since + 1) / effect.ramp)
            mean, sd = mean + (effect.target - mean) * frac, sd + (effect.sd - sd) * frac
        else:
            frac = min(1.0, since / effect.duration)
            mean, sd = effect.target + (effect.to - effect.target) * frac, effect.sd
    return mean, sd


def _mean_sd(service: str, metric: str, minute: int) -> tuple[float, float]:
    mean, sd = BASELINES[service][metric]
    if metric == "request_rate":
        # Morning traffic grows by about a fifth over the three hours.
        mean *= 1.0 + 0.2 * minute / WINDOW_MINUTES
    effects = [
        (effect, ONSETS[effect.scenario])
        for effect in EFFECTS
        if effect.service == service and effect.metric == metric
    ]
    return apply_effects(mean, sd, effects, minute)


def _series(seed: int, service: str, metric: str) -> list[float]:
    rng = random.Random(f"{seed}:metric:{service}:{metric}")
    values = []
    for minute in range(POINTS):
        mean, sd = _mean_sd(service, metric, minute)
        value = mean + rng.gauss(0.0, sd) if sd else mean
        values.append(_round(metric, _clamp(metric, value)))
    return values


_SIGMA = math.log(2.6) / 1.645


def request_latency(rng: random.Random, p95: float) -> float:
    """One request's latency in ms, log-normal with the given 95th percentile."""
    return rng.lognormvariate(math.log(p95 / 2.6), _SIGMA)


def _quantile(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def _gateway(seed: int, series: Series) -> None:
    """The gateway's latency and errors are those of the mix of upstreams it forwards to."""
    rng = random.Random(f"{seed}:metric:api-gateway:derived")
    keys = [key for key, _ in GATEWAY_MIX]
    weights = [share for _, share in GATEWAY_MIX]
    p95s, p99s, errors = [], [], []
    for minute in range(POINTS):
        samples = sorted(
            8.0 + request_latency(rng, series[(key, "latency_p95_ms")][minute])
            for key in rng.choices(keys, weights, k=400)
        )
        p95s.append(round(_quantile(samples, 0.95), 1))
        p99s.append(round(_quantile(samples, 0.99), 1))
        upstream = sum(share * series[(key, "error_rate")][minute] for key, share in GATEWAY_MIX)
        errors.append(round(max(0.0, upstream + rng.gauss(0.0005, 0.0003)), 4))
    series[("api-gateway", "latency_p95_ms")] = p95s
    series[("api-gateway", "latency_p99_ms")] = p99s
    series[("api-gateway", "error_rate")] = errors


def generate_series(seed: int) -> Series:
    """Every series of the system, keyed by (service key, metric), one value per minute."""
    series: Series = {}
    for service, metrics in BASELINES.items():
        for metric in metrics:
            series[(service, metric)] = _series(seed, service, metric)
    _gateway(seed, series)
    return series
