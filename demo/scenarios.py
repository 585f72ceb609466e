"""The incident scenarios of the demo system, as data: services, onsets, message templates.

Every log message is a template with one phrasing per variant: the ``renamed`` variant says
the same thing in other words, so a test can prove that a diagnosis relies on what the tools
return rather than on knowledge of this file. The generator (``demo.generate``) turns
this into telemetry; ``scenario_records`` is the ground truth the tests (and only the tests)
use.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from demo.system import service_name, variant_index, window


@dataclass(frozen=True)
class Scenario:
    """One incident (or the healthy control): where it shows, where it lives, when it starts."""

    id: str
    failure_type: str
    service: str
    cause_service: str
    onset_minutes: int
    question: str
    runbook_title: str | None


SCENARIOS = (
    Scenario(
        "S1",
        "db_pool_exhaustion",
        "payment-service",
        "mysql-primary",
        60,
        "Why is {service} slow since {onset}?",
        "Database connection pool exhaustion",
    ),
    Scenario(
        "S2",
        "downstream_timeout",
        "order-service",
        "inventory-service",
        105,
        "Why is {service} returning errors since {onset}?",
        "Downstream dependency timeouts",
    ),
    Scenario(
        "S3",
        "cache_eviction",
        "catalog-service",
        "redis-cache",
        135,
        "Why is {service} slow since {onset}?",
        "Cache eviction and falling cache hit ratio",
    ),
    Scenario(
        "S4",
        "bad_deploy",
        "shipping-service",
        "shipping-service",
        80,
        "Why is {service} failing since {onset}?",
        "Errors after a bad deployment",
    ),
)
HEALTHY = Scenario(
    "H1",
    "healthy",
    "user-service",
    "user-service",
    60,
    "Is {service} healthy? Anything wrong since {onset}?",
    None,
)
ONSETS = {scenario.failure_type: scenario.onset_minutes for scenario in SCENARIOS}

# Versions of the S4 deploy; the deploy_version metric encodes major + minor/10 + patch/100.
OLD_VERSION = "2.7.3"
NEW_VERSION = "2.8.0"

# key -> (default phrasing, renamed phrasing). Placeholders: {dep}, {db}, {cache} name services.
TEMPLATES: dict[str, tuple[str, str]] = {
    # Baseline, every app service.
    "request": (
        "{method} {path} {status} {ms}ms",
        "handled {method} {path} status={status} in {ms} ms",
    ),
    "slow_request": (
        "Slow request: {method} {path} took {ms}ms (threshold 1000ms)",
        "{method} {path} exceeded latency budget: {ms} ms (budget 1000 ms)",
    ),
    "gateway_request": (
        "{method} {path} {status} {ms}ms upstream={upstream}",
        "proxied {method} {path} to {upstream}: status={status} in {ms} ms",
    ),
    "gateway_upstream_error": (
        "{method} {path} {status} {ms}ms upstream={upstream} upstream_status={status}",
        "proxied {method} {path} to {upstream}: upstream answered {status} after {ms} ms",
    ),
    # Baseline, one service each (benign noise).
    "warn_api-gateway": (
        "Rate limit at {n}% for API key ak_{k} ({m}/1000 requests per minute)",
        "Client key ak_{k} close to quota: {m} of 1000 requests this minute ({n}%)",
    ),
    "warn_order-service": (
        "Retrying call to {dep} (attempt 2/3) after connection reset by peer",
        "Transient connection reset talking to {dep}; retry 2 of 3 scheduled",
    ),
    "warn_payment-service": (
        "Fraud screening provider answered slowly ({ms} ms), proceeding with cached risk score",
        "Risk scoring vendor latency {ms} ms above soft limit; using the cached score",
    ),
    "warn_inventory-service": (
        "Stock for SKU {sku} below reorder point ({n} units left)",
        "Reorder threshold crossed for item {sku}: {n} units remaining",
    ),
    "warn_user-service": (
        "Failed login for user {id}: invalid password (attempt {n}/5)",
        "Authentication rejected for account {id}: bad credentials ({n} of 5 tries)",
    ),
    "warn_catalog-service": (
        "Search for '{term}' returned 0 results",
        "Empty result set for query '{term}'",
    ),
    "warn_shipping-service": (
        "Carrier API {carrier} rate-limited the request (HTTP 429), retrying in 1s",
        "Carrier {carrier} throttled us with 429; backing off for 1 s",
    ),
    "benign_error_api-gateway": (
        "TLS handshake failed from 203.0.113.{n}: no shared cipher",
        "Handshake with client 203.0.113.{n} aborted: no common cipher suite",
    ),
    "benign_error_order-service": (
        "Failed to send confirmation e-mail for order {id}: SMTP 451 temporary local problem",
        "Receipt mail for cart {id} not delivered: mail relay answered 451 (try later)",
    ),
    "benign_error_catalog-service": (
        "Thumbnail generation failed for product {id}: unsupported image format image/heic",
        "Could not render preview for item {id}: image/heic is not a supported format",
    ),
    "db_checkpoint": (
        "InnoDB checkpoint: flushed {n} dirty pages, LSN {lsn}",
        "checkpoint complete: {n} pages written, log position {lsn}",
    ),
    "db_binlog": (
        "Binary log rotated to mysql-bin.{n:06d}",
        "switched to new binlog file binlog.{n:06d}",
    ),
    "db_aborted": (
        "Aborted connection {cid} to db: 'shop' user: 'app_ro' host: '10.0.3.{n}' "
        "(Got an error reading communication packets)",
        "client app_ro@10.0.3.{n} (session {cid}) dropped: communication packet read error",
    ),
    "cache_bgsave": (
        "Background saving started by pid {pid}; DB saved on disk",
        "snapshot written by child process {pid}; dataset persisted to disk",
    ),
    "cache_memory": (
        "used_memory_human={used}G maxmemory_human=4.00G mem_fragmentation_ratio=1.08",
        "memory report: {used} GiB used, limit 4.00 GiB, fragmentation 1.08",
    ),
    "cache_idle_client": (
        "Client addr=10.0.5.{n}:{port} closed after idle timeout (300s)",
        "closing connection from 10.0.5.{n}:{port}: idle for 300 s",
    ),
    # S1 db_pool_exhaustion.
    "s1_pool_error": (
        "{method} {path} failed: CannotGetJdbcConnectionException: connection pool exhausted "
        "(active={active}/50, pending={pending}), no connection available within 5000ms "
        "[datasource=jdbc:mysql://{db}:3306/payments]",
        "Unable to acquire database connection within 5000 ms: pool saturated "
        "({active} of 50 in use, {pending} queued) [db={db}:3306] while handling {method} {path}",
    ),
    "s1_report_connect": (
        "Connect: id={cid} user=report_ro@10.0.4.17 db=payments program_name=settlement-report",
        "Session {cid} opened by analytics_ro@10.0.4.17 on schema billing "
        "(application=month-end-settlement)",
    ),
    "s1_slow_report": (
        "Slow query: Query_time={secs}s Lock_time=0.001s Rows_examined={rows} "
        "user=report_ro@10.0.4.17 db=payments: SELECT merchant_id, SUM(amount) FROM payments "
        "JOIN payment_events USING (payment_id) WHERE created_at >= '{month}' "
        "GROUP BY merchant_id FOR UPDATE",
        "long_query_time exceeded: {secs} s elapsed, {rows} rows scanned by "
        "analytics_ro@10.0.4.17 on billing.charges: SELECT account_ref, SUM(total) FROM charges "
        "JOIN charge_events USING (charge_ref) WHERE created >= '{month}' "
        "GROUP BY account_ref FOR UPDATE",
    ),
    "s1_slow_update": (
        "Slow query: Query_time={secs}s Lock_time={lock}s Rows_examined=1 "
        "user=payment_app@10.0.3.{n} db=payments: UPDATE payments SET status='CAPTURED' "
        "WHERE payment_id={id}",
        "long_query_time exceeded: {secs} s elapsed ({lock} s waiting for locks), 1 row scanned "
        "by billing_rw@10.0.3.{n} on billing.charges: UPDATE charges SET state='SETTLED' "
        "WHERE charge_ref={id}",
    ),
    "s1_lock_wait": (
        "Lock wait timeout exceeded; try restarting transaction (error 1205) "
        "user=payment_app@10.0.3.{n} table=payments waited=50s",
        "Transaction rolled back: gave up after 50 s waiting for a row lock on billing.charges "
        "(innodb_lock_wait_timeout) client=billing_rw@10.0.3.{n}",
    ),
    # S2 downstream_timeout.
    "s2_timeout": (
        "{method} {path} failed with 504: call to {dep} GET /api/v1/stock/{sku} timed out after "
        "2000 ms (SocketTimeoutException: Read timed out)",
        "Dependency {dep} did not respond within 2000 ms (deadline exceeded) on POST /v2/holds; "
        "aborting {method} {path} with HTTP 504",
    ),
    "s2_breaker": (
        "{method} {path} failed with 503: circuit breaker for {dep} is OPEN after repeated "
        "timeouts (failure rate {n}%)",
        "Short-circuited {method} {path} with HTTP 503: breaker guarding {dep} is open "
        "({n}% of recent calls exceeded their deadline)",
    ),
    "s2_gc_pause": (
        "GC pause: Full GC (Allocation Failure) {ms}ms, heap {before}M->{after}M (4096M)",
        "Stop-the-world collection took {ms} ms; old generation {pct}% full after collection",
    ),
    "s2_threads": (
        "Thread pool saturated: http-nio-8080-exec active=200/200, queue={q}; "
        "requests waiting for a worker thread",
        "All 200 request handler threads busy; {q} requests waiting in the executor queue",
    ),
    # S3 cache_eviction.
    "s3_batch_client": (
        "Accepted client id={cid} addr=10.0.6.44:{port} name=recs-batch-writer",
        "New client connection from 10.0.6.44:{port} (client name recs-batch-writer, id {cid})",
    ),
    "s3_miss": (
        "Cache miss for product:{id} on {cache}:6379, falling back to database (db query {ms}ms)",
        "product:{id} not found in {cache}:6379; loaded from primary store instead ({ms} ms)",
    ),
    "s3_evicting": (
        "maxmemory reached (used_memory=4.00G, maxmemory=4.00G): evicting keys with policy "
        "allkeys-lru, {n} keys evicted in the last 10s",
        "Memory limit hit: 4.00 GiB of 4.00 GiB in use; dropping least-recently-used entries "
        "(allkeys-lru), {n} entries removed in the last 10 s",
    ),
    # S4 bad_deploy.
    "s4_shutdown": (
        "Received SIGTERM, shutting down version {old} for rolling update",
        "Draining workers before upgrade from release {old}",
    ),
    "s4_deployed": (
        "Deployed version {new} (previous {old}), rollout by deploy-bot, change SHIP-1942",
        "Release {new} rolled out (replacing {old}) via pipeline run 4812",
    ),
    "s4_started": (
        "Started ShippingApplication v{new} in 8.4 seconds",
        "Worker boot complete on build {new} (8.4 s)",
    ),
    "s4_exception": (
        "{method} {path} 500: java.lang.NullPointerException: Cannot invoke "
        '"String.toUpperCase()" because "carrierCode" is null '
        "at LabelFormatter.format(LabelFormatter.java:88) "
        "at ShipmentController.createLabel(ShipmentController.java:212)",
        "Unhandled exception processing {method} {path}, returned 500: Traceback (most recent "
        'call last): File "waybill/render.py", line 57, in render_carrier_code: '
        "AttributeError: 'NoneType' object has no attribute 'upper'",
    ),
}


@dataclass(frozen=True)
class AlertDef:
    """An alert at the reference time; name and description differ per variant."""

    service: str
    severity: str
    state: str
    active_minutes: int
    names: tuple[str, str]
    descriptions: tuple[str, str]


ALERTS = (
    AlertDef(
        "payment-service",
        "critical",
        "firing",
        63,
        ("PaymentLatencyHigh", "BillingApiSlowResponses"),
        (
            "p95 latency of {service} above 2000 ms for 3 minutes",
            "{service} 95th percentile response time over 2 s (3 min)",
        ),
    ),
    AlertDef(
        "shipping-service",
        "critical",
        "firing",
        83,
        ("ShippingErrorRateHigh", "FulfilmentFailuresElevated"),
        (
            "error rate of {service} above 10% for 3 minutes",
            "more than one in ten {service} requests failing (3 min)",
        ),
    ),
    AlertDef(
        "order-service",
        "critical",
        "firing",
        108,
        ("OrderErrorRateHigh", "CheckoutFailuresElevated"),
        (
            "5xx error rate of {service} above 10% for 3 minutes",
            "{service} answering more than 10% of requests with server errors (3 min)",
        ),
    ),
    AlertDef(
        "redis-cache",
        "warning",
        "firing",
        136,
        ("RedisMemoryFull", "KvCacheNearMemoryLimit"),
        (
            "memory used by {service} above 98% of maxmemory",
            "{service} memory usage within 2% of its configured limit",
        ),
    ),
    AlertDef(
        "catalog-service",
        "warning",
        "firing",
        138,
        ("CatalogLatencyHigh", "ProductCatalogSlow"),
        (
            "p95 latency of {service} above 500 ms for 3 minutes",
            "{service} 95th percentile response time over 500 ms (3 min)",
        ),
    ),
    AlertDef(
        "api-gateway",
        "warning",
        "pending",
        176,
        ("GatewayErrorRateHigh", "EdgeProxyServerErrors"),
        (
            "5xx responses of {service} above 10% of requests",
            "{service} returning server errors for over 10% of traffic",
        ),
    ),
)


def render(variant: str, key: str, **params: Any) -> str:
    """Fill the variant's phrasing of template ``key``; ``dep``/``db``/``cache`` are renamed."""
    text = TEMPLATES[key][variant_index(variant)]
    for role in ("dep", "db", "cache", "upstream"):
        if role in params:
            params[role] = service_name(variant, params[role])
    return text.format(**params)


def onset_time(variant: str, scenario: Scenario) -> datetime:
    """Wall-clock onset of ``scenario`` in ``variant``."""
    return window(variant)[0] + timedelta(minutes=scenario.onset_minutes)


def _record(variant: str, scenario: Scenario) -> dict[str, Any]:
    onset = onset_time(variant, scenario)
    service = service_name(variant, scenario.service)
    return {
        "id": scenario.id,
        "failure_type": scenario.failure_type,
        "service": service,
        "cause_service": service_name(variant, scenario.cause_service),
        "onset": onset.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "question": scenario.question.format(service=service, onset=onset.strftime("%H:%M")),
        "runbook_title": scenario.runbook_title,
    }


def scenario_records(variant: str = "default") -> list[dict[str, Any]]:
    """Ground truth for tests: one record per scenario plus the healthy control."""
    return [_record(variant, scenario) for scenario in (*SCENARIOS, HEALTHY)]
