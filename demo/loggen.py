"""Log lines of the demo system: request logs, benign noise and the scenarios' messages.

Request logs read the metric series (latency, error rate, pool and cache gauges) of the minute
they fall in, so what a log line says agrees with what the metrics say. Every service has its
own random stream and draws the same numbers in both variants; only the wording differs.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from demo.metricgen import POINTS, Series, request_latency
from demo.scenarios import NEW_VERSION, OLD_VERSION, ONSETS, render
from demo.system import APP_SERVICES, GATEWAY_MIX, ROUTES, window

# (epoch milliseconds, service key, level, message, trace id or None)
Line = tuple[int, str, str, str, str | None]

_TERMS = ("laptops", "running-shoes", "coffee", "garden", "toys", "monitors", "headphones")
_ODD_TERMS = ("blue suede shoez", "usb-c hub 9 port", "gift wrap xmas", "kettle 3l retro")
_CARRIERS = ("DHL", "UPS", "FedEx")
_SLOW_MS = 1000
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


@dataclass
class _Ctx:
    variant: str
    seed: int
    series: Series
    start_ms: int = 0
    end_ms: int = 0
    month: str = ""
    lines: list[Line] = field(default_factory=list)

    def value(self, key: str, metric: str, t_ms: int) -> float:
        """The metric value of the minute ``t_ms`` falls in."""
        minute = min(POINTS - 1, (t_ms - self.start_ms) // 60_000)
        return self.series[(key, metric)][minute]

    def after(self, failure_type: str, t_ms: int) -> bool:
        """Whether ``t_ms`` is at or after a scenario's onset."""
        return t_ms >= self.onset_ms(failure_type)

    def onset_ms(self, failure_type: str) -> int:
        """Epoch milliseconds of a scenario's onset."""
        return self.start_ms + ONSETS[failure_type] * 60_000

    def emit(self, t_ms: int, key: str, level: str, template: str, **params: Any) -> None:
        """Append one line rendered in the variant's phrasing."""
        trace = params.pop("trace", None)
        self.lines.append((t_ms, key, level, render(self.variant, template, **params), trace))


def trace_id(rng: random.Random) -> str:
    """A random 16-hex-digit trace id."""
    return f"{rng.getrandbits(64):016x}"


def _fill(rng: random.Random, path: str) -> str:
    return path.format(
        id=rng.randint(10_000, 99_999),
        sku=f"SKU-{rng.randint(10_000, 99_999)}",
        term=rng.choice(_TERMS),
    )


def ticks(
    rng: random.Random, start_ms: int, end_ms: int, lo_s: float, hi_s: float
) -> Iterator[int]:
    """Times in ``[start_ms, end_ms)`` with random gaps of ``lo_s`` to ``hi_s`` seconds."""
    t = start_ms + int(rng.uniform(0, hi_s) * 1000)
    while t < end_ms:
        yield t
        t += int(rng.uniform(lo_s, hi_s) * 1000)


def _baseline_warn(ctx: _Ctx, rng: random.Random, key: str, t: int) -> None:
    ctx.emit(
        t,
        key,
        "WARN",
        f"warn_{key}",
        n=rng.randint(1, 4) if key == "user-service" else rng.randint(80, 95),
        k=f"{rng.getrandbits(16):04x}",
        m=rng.randint(800, 950),
        dep="payment-service",
        ms=rng.randint(800, 1500),
        sku=f"SKU-{rng.randint(10_000, 99_999)}",
        id=rng.randint(10_000, 99_999),
        term=rng.choice(_ODD_TERMS),
        carrier=rng.choice(_CARRIERS),
    )


def failure_chance(ctx: _Ctx, key: str, method: str, t: int) -> float:
    """Probability that a request to ``key`` fails, from its error rate at ``t``."""
    chance = ctx.value(key, "error_rate", t)
    if key == "shipping-service" and ctx.after("bad_deploy", t):
        # Only label creation is broken: the two POST routes of three.
        return chance * 1.5 if method == "POST" else 0.0
    return chance


def _failure(ctx: _Ctx, rng: random.Random, key: str, t: int, method: str, path: str) -> str | None:
    """The template of a scenario failure for this request, or None when it succeeds."""
    failures = {
        "payment-service": ("db_pool_exhaustion", "s1_pool_error"),
        "order-service": ("downstream_timeout", "s2_timeout"),
        "shipping-service": ("bad_deploy", "s4_exception"),
    }
    if key not in failures or not ctx.after(failures[key][0], t):
        return None
    if rng.random() >= failure_chance(ctx, key, method, t):
        return None
    if key == "order-service" and rng.random() < 0.2:
        return "s2_breaker"
    return failures[key][1]


def _request_error(
    ctx: _Ctx, rng: random.Random, key: str, t: int, request: dict[str, Any]
) -> bool:
    """Emit the scenario's ERROR line if this request fails; whether it did."""
    failed = _failure(ctx, rng, key, t, request["method"], request["path"])
    if failed:
        ctx.emit(
            t,
            key,
            "ERROR",
            failed,
            active=int(ctx.value(key, "db_pool_active_connections", t)),
            pending=int(ctx.value(key, "db_pool_pending_requests", t)),
            db="mysql-primary",
            dep="inventory-service",
            sku=f"SKU-{rng.randint(10_000, 99_999)}",
            n=rng.randint(55, 70),
            **request,
        )
    return failed is not None


def _cache_miss(ctx: _Ctx, rng: random.Random, t: int, request: dict[str, Any]) -> None:
    """S3: some catalog reads miss the cache and say where they fell back to."""
    key = "catalog-service"
    if rng.random() < 0.5 * (1.0 - ctx.value(key, "cache_hit_ratio", t)):
        path = request["path"]
        product = path.rsplit("/", 1)[-1] if path[-1].isdigit() else rng.randint(10_000, 99_999)
        ctx.emit(
            t,
            key,
            "WARN",
            "s3_miss",
            trace=request["trace"],
            id=product,
            cache="redis-cache",
            ms=rng.randint(250, 900),
        )


def _app_lines(ctx: _Ctx, key: str) -> None:
    """Request logs of one app service (not the gateway), with its scenario's failures."""
    rng = random.Random(f"{ctx.seed}:logs:{key}")
    routes = ROUTES[ctx.variant][key]
    for t in ticks(rng, ctx.start_ms, ctx.end_ms, 1.0, 3.0):
        method, template = rng.choice(routes)
        request = {"method": method, "path": _fill(rng, template), "trace": trace_id(rng)}
        if _request_error(ctx, rng, key, t, request):
            continue
        if key == "catalog-service" and ctx.after("cache_eviction", t):
            _cache_miss(ctx, rng, t, request)
        ms = int(request_latency(rng, ctx.value(key, "latency_p95_ms", t)))
        if rng.random() < 0.003:
            ms = rng.randint(_SLOW_MS, 2400)
        if key == "order-service" and ctx.after("downstream_timeout", t):
            ms = min(ms, 1950 + ms % 49)  # anything slower hit the 2000 ms timeout and failed
        status = 404 if rng.random() < 0.02 else (201 if method == "POST" else 200)
        level, line = ("WARN", "slow_request") if ms >= _SLOW_MS else ("INFO", "request")
        ctx.emit(t, key, level, line, status=status, ms=ms, **request)
        if rng.random() < 0.0025:
            _baseline_warn(ctx, rng, key, t + rng.randint(5, 400))


# Upstream statuses the gateway relays while a scenario is active; otherwise 502 or 503.
_GATEWAY_ERRORS = {
    "order-service": ("downstream_timeout", (504, 504, 504, 503, 502)),
    "payment-service": ("db_pool_exhaustion", (500,)),
    "shipping-service": ("bad_deploy", (500,)),
}


def _gateway_lines(ctx: _Ctx) -> None:
    """Edge access logs: each request is forwarded to an upstream and shares its fate."""
    key = "api-gateway"
    rng = random.Random(f"{ctx.seed}:logs:{key}")
    upstreams = [name for name, _ in GATEWAY_MIX]
    weights = [share for _, share in GATEWAY_MIX]
    for t in ticks(rng, ctx.start_ms, ctx.end_ms, 0.4, 1.2):
        upstream = rng.choices(upstreams, weights)[0]
        method, template = rng.choice(ROUTES[ctx.variant][upstream])
        path, trace = _fill(rng, template), trace_id(rng)
        ms = 8 + int(request_latency(rng, ctx.value(upstream, "latency_p95_ms", t)))
        params = {"trace": trace, "method": method, "path": path, "upstream": upstream}
        if rng.random() < failure_chance(ctx, upstream, method, t):
            failure_type, statuses = _GATEWAY_ERRORS.get(upstream, ("", (502, 503)))
            if failure_type and not ctx.after(failure_type, t):
                statuses = (502, 503)
            status = rng.choice(statuses)
            if status == 504:
                ms = 2000 + rng.randint(3, 40)
            ctx.emit(t, key, "WARN", "gateway_upstream_error", status=status, ms=ms, **params)
        else:
            status = 404 if rng.random() < 0.02 else 200
            ctx.emit(t, key, "INFO", "gateway_request", status=status, ms=ms, **params)
        if rng.random() < 0.001:
            _baseline_warn(ctx, rng, key, t + rng.randint(5, 400))


def _benign_errors(ctx: _Ctx) -> None:
    """A handful of harmless errors, away from any scenario on the same service."""
    for key, count, lo, hi in (
        ("api-gateway", 2, 5, 175),
        ("order-service", 1, 15, 95),
        ("catalog-service", 1, 5, 125),
    ):
        rng = random.Random(f"{ctx.seed}:benign:{key}")
        for _ in range(count):
            t = ctx.start_ms + rng.randint(lo * 60_000, hi * 60_000)
            ctx.emit(
                t,
                key,
                "ERROR",
                f"benign_error_{key}",
                n=rng.randint(2, 250),
                id=rng.randint(10_000, 99_999),
                trace=trace_id(rng),
            )


def _inventory_lines(ctx: _Ctx) -> None:
    """S2's cause: long GC pauses and a saturated worker pool on the inventory service."""
    key = "inventory-service"
    rng = random.Random(f"{ctx.seed}:logs:{key}:jvm")
    onset = ctx.onset_ms("downstream_timeout")
    for t in ticks(rng, onset, ctx.end_ms, 12.0, 35.0):
        ms = int(ctx.value(key, "jvm_gc_pause_ms", t) * rng.uniform(0.85, 1.15))
        before = rng.randint(3900, 4090)
        ctx.emit(
            t,
            key,
            "WARN",
            "s2_gc_pause",
            ms=ms,
            before=before,
            after=before - rng.randint(20, 180),
            pct=rng.randint(90, 98),
        )
    for t in ticks(rng, onset + 20_000, ctx.end_ms, 30.0, 90.0):
        ctx.emit(t, key, "WARN", "s2_threads", q=rng.randint(20, 90))


def _mysql_lines(ctx: _Ctx) -> None:
    """Database server log: housekeeping, and from S1 on the report query and its lock waits."""
    key = "mysql-primary"
    rng = random.Random(f"{ctx.seed}:logs:{key}")
    lsn = 8_273_645_123
    for t in ticks(rng, ctx.start_ms, ctx.end_ms, 50.0, 70.0):
        lsn += rng.randint(2_000_000, 9_000_000)
        ctx.emit(t, key, "INFO", "db_checkpoint", n=rng.randint(200, 2000), lsn=lsn)
    for number, t in enumerate(ticks(rng, ctx.start_ms, ctx.end_ms, 1200.0, 1800.0)):
        ctx.emit(t, key, "INFO", "db_binlog", n=4521 + number)
    for t in ticks(rng, ctx.start_ms, ctx.end_ms, 1500.0, 3000.0):
        ctx.emit(
            t, key, "WARN", "db_aborted", cid=rng.randint(40_000, 90_000), n=rng.randint(2, 250)
        )
    onset = ctx.onset_ms("db_pool_exhaustion")
    ctx.emit(onset + 350, key, "INFO", "s1_report_connect", cid=88213)
    for t in ticks(rng, onset + 20_000, ctx.end_ms, 4.0, 12.0):
        secs = round(rng.uniform(5.0, 49.9), 2)
        ctx.emit(
            t,
            key,
            "WARN",
            "s1_slow_update",
            secs=secs,
            lock=round(secs - rng.uniform(0.05, 0.4), 2),
            n=rng.randint(10, 40),
            id=rng.randint(1_000_000, 9_999_999),
        )
    for t in ticks(rng, onset + 120_000, ctx.end_ms, 150.0, 300.0):
        ctx.emit(
            t,
            key,
            "WARN",
            "s1_slow_report",
            secs=round(rng.uniform(120.0, 290.0), 2),
            rows=rng.randint(8_100_000, 9_400_000),
            month=ctx.month,
        )
    for t in ticks(rng, onset + 50_000, ctx.end_ms, 15.0, 45.0):
        ctx.emit(t, key, "ERROR", "s1_lock_wait", n=rng.randint(10, 40))


def _redis_lines(ctx: _Ctx) -> None:
    """Cache server log: snapshots and memory reports, and from S3 on the evictions."""
    key = "redis-cache"
    rng = random.Random(f"{ctx.seed}:logs:{key}")
    for t in ticks(rng, ctx.start_ms, ctx.end_ms, 295.0, 305.0):
        ctx.emit(t, key, "INFO", "cache_bgsave", pid=rng.randint(2000, 9000))
    for t in ticks(rng, ctx.start_ms, ctx.end_ms, 59.0, 61.0):
        used = ctx.value(key, "redis_memory_used_ratio", t) * 4.0
        ctx.emit(t, key, "INFO", "cache_memory", used=f"{used:.2f}")
    for t in ticks(rng, ctx.start_ms, ctx.end_ms, 1800.0, 3600.0):
        ctx.emit(
            t,
            key,
            "WARN",
            "cache_idle_client",
            n=rng.randint(2, 250),
            port=rng.randint(30_000, 60_000),
        )
    onset = ctx.onset_ms("cache_eviction")
    ctx.emit(onset - 600_000 + 2100, key, "INFO", "s3_batch_client", cid=9121, port=51_734)
    for t in range(onset + 4_000, ctx.end_ms, 10_000):
        evicted = ctx.value(key, "redis_evicted_keys_per_sec", t) * 10 * rng.uniform(0.9, 1.1)
        ctx.emit(t, key, "WARN", "s3_evicting", n=int(evicted))


def _deploy_lines(ctx: _Ctx) -> None:
    """S4's rollout of the new version on the shipping service."""
    key, onset = "shipping-service", ctx.onset_ms("bad_deploy")
    versions = {"old": OLD_VERSION, "new": NEW_VERSION}
    ctx.emit(onset - 9_000, key, "INFO", "s4_shutdown", **versions)
    ctx.emit(onset + 150, key, "INFO", "s4_deployed", **versions)
    ctx.emit(onset + 8_600, key, "INFO", "s4_started", **versions)


def generate_lines(variant: str, seed: int, series: Series) -> list[Line]:
    """Every log line of the variant, sorted by time."""
    start, end = window(variant)
    ctx = _Ctx(variant, seed, series)
    ctx.start_ms, ctx.end_ms = _epoch_ms(start), _epoch_ms(end)
    ctx.month = start.strftime("%Y-%m-01")
    _gateway_lines(ctx)
    for key in APP_SERVICES[1:]:
        _app_lines(ctx, key)
    _benign_errors(ctx)
    _inventory_lines(ctx)
    _mysql_lines(ctx)
    _redis_lines(ctx)
    _deploy_lines(ctx)
    lines = [line for line in ctx.lines if ctx.start_ms <= line[0] < ctx.end_ms]
    lines.sort(key=lambda line: (line[0], line[1]))
    return lines


def _epoch_ms(moment: datetime) -> int:
    return (moment - _EPOCH) // timedelta(milliseconds=1)
