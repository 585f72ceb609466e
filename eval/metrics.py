"""Metric vocabularies of generated worlds: roles, units, baselines and two naming schemes.

A role (``latency_p95``, ``pool_busy`` ...) is what a series means; a scheme names it. Names are
chosen so they share no word with the log phrasing of ``eval.families`` (no "pool", "memory",
"timeout", "connection", "disk", "lag" ...): an analyser has to relate a metric to a log line
by when they moved, not by a shared word.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

# role -> (unit, decimals)
ROLES: dict[str, tuple[str, int]] = {
    "latency_p95": ("ms", 1),
    "latency_p99": ("ms", 1),
    "error_ratio": ("ratio", 4),
    "throughput": ("req/s", 1),
    "cpu": ("ratio", 3),
    "mem": ("ratio", 3),
    "restarts": ("count", 0),
    "version": ("version", 2),
    "chain_ttl": ("s", 0),
    "pool_busy": ("connections", 0),
    "pool_waiting": ("requests", 0),
    "gc_pause": ("ms", 1),
    "hits": ("ratio", 4),
    "consumer_behind": ("messages", 0),
    "slow_statements": ("queries/s", 2),
    "sessions": ("sessions", 0),
    "volume_used": ("ratio", 4),
    "transactions": ("tx/s", 1),
    "kv_used": ("ratio", 4),
    "kv_dropped": ("keys/s", 1),
    "kv_clients": ("clients", 0),
    "backlog": ("messages", 0),
    "published": ("msg/s", 1),
}

SCHEMES: dict[str, dict[str, str]] = {
    "prom": {
        "latency_p95": "http_server_p95_ms",
        "latency_p99": "http_server_p99_ms",
        "error_ratio": "http_5xx_ratio",
        "throughput": "http_rps",
        "cpu": "container_cpu_ratio",
        "mem": "container_rss_ratio",
        "restarts": "kube_pod_restarts",
        "version": "build_info_version",
        "chain_ttl": "serving_chain_ttl_seconds",
        "pool_busy": "hikaricp_busy",
        "pool_waiting": "hikaricp_waiters",
        "gc_pause": "jvm_stw_ms",
        "hits": "read_through_ratio",
        "consumer_behind": "consumergroup_offset_delta",
        "slow_statements": "rdbms_slowlog_per_s",
        "sessions": "rdbms_backends",
        "volume_used": "node_fs_used_ratio",
        "transactions": "rdbms_xact_per_s",
        "kv_used": "valkey_used_fraction",
        "kv_dropped": "valkey_expelled_per_s",
        "kv_clients": "valkey_clients",
        "backlog": "broker_unacked",
        "published": "broker_publish_per_s",
    },
    "short": {
        "latency_p95": "resp_p95",
        "latency_p99": "resp_p99",
        "error_ratio": "fail_ratio",
        "throughput": "rps",
        "cpu": "cpu_busy",
        "mem": "rss_frac",
        "restarts": "restarts_total",
        "version": "build_rev",
        "chain_ttl": "chain_ttl_s",
        "pool_busy": "dbcp_busy",
        "pool_waiting": "dbcp_queued",
        "gc_pause": "stw_ms",
        "hits": "kv_read_ratio",
        "consumer_behind": "offset_delta",
        "slow_statements": "slowlog_rate",
        "sessions": "backends",
        "volume_used": "vol_used",
        "transactions": "tps",
        "kv_used": "kv_fill",
        "kv_dropped": "kv_expelled",
        "kv_clients": "kv_clients",
        "backlog": "unacked",
        "published": "pub_rate",
    },
}

POOL_MAX = 40


@dataclass(frozen=True)
class Baseline:
    """A series' usual level: mean and noise standard deviation, and a slow drift per minute."""

    mean: float
    sd: float
    drift: float = 0.0


def app_baselines(
    rng: random.Random, *, database: bool, cache: bool, jvm: bool, worker: bool
) -> dict[str, Baseline]:
    """Roles and baselines of an application service (or a queue worker)."""
    p95 = rng.uniform(40.0, 170.0)
    err = rng.uniform(0.0008, 0.003)
    roles = {
        "latency_p95": Baseline(p95, p95 * 0.05),
        "latency_p99": Baseline(p95 * 1.5, p95 * 0.08),
        "error_ratio": Baseline(err, err * 0.3),
        "throughput": Baseline(rng.uniform(8.0, 80.0), 0.0),
        "cpu": Baseline(rng.uniform(0.15, 0.4), 0.02),
        "mem": Baseline(rng.uniform(0.4, 0.62), 0.008),
        "restarts": Baseline(float(rng.randint(0, 3)), 0.0),
        "version": Baseline(round(rng.uniform(1.1, 4.9), 2), 0.0),
        "chain_ttl": Baseline(rng.uniform(20, 80) * 86_400, 0.0, -60.0),
    }
    roles["throughput"] = Baseline(roles["throughput"].mean, roles["throughput"].mean * 0.04)
    if database:
        roles["pool_busy"] = Baseline(rng.uniform(4.0, 10.0), 1.5)
        roles["pool_waiting"] = Baseline(0.0, 0.0)
    if jvm:
        roles["gc_pause"] = Baseline(rng.uniform(12.0, 25.0), 4.0)
    if cache:
        roles["hits"] = Baseline(rng.uniform(0.9, 0.97), 0.006)
    if worker:
        roles["consumer_behind"] = Baseline(rng.uniform(20.0, 80.0), 10.0)
        del roles["chain_ttl"]
    return roles


def infra_baselines(rng: random.Random, kind: str) -> dict[str, Baseline]:
    """Roles and baselines of a database, cache or queue broker."""
    cpu = Baseline(rng.uniform(0.15, 0.4), 0.02)
    if kind == "database":
        return {
            "slow_statements": Baseline(rng.uniform(0.01, 0.05), 0.012),
            "sessions": Baseline(rng.uniform(40.0, 90.0), 3.0),
            "cpu": cpu,
            "volume_used": Baseline(rng.uniform(0.5, 0.7), 0.0008, 0.00005),
            "transactions": Baseline(rng.uniform(200.0, 800.0), 20.0),
        }
    if kind == "cache":
        return {
            "kv_used": Baseline(rng.uniform(0.6, 0.78), 0.002),
            "kv_dropped": Baseline(0.0, 0.0),
            "kv_clients": Baseline(rng.uniform(100.0, 250.0), 4.0),
            "cpu": cpu,
        }
    return {
        "backlog": Baseline(rng.uniform(100.0, 400.0), 30.0),
        "published": Baseline(rng.uniform(50.0, 300.0), 8.0),
        "cpu": cpu,
    }
