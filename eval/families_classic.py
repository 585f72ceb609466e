"""The demo's four mechanisms, reworded for generated worlds: pool, timeouts, cache, deploy."""

from __future__ import annotations

from eval.incident_types import Family, Shape

DB_POOL = Family(
    "db_pool_exhaustion",
    "database",
    "slow",
    victim=(
        Shape("latency_p95", 28.0, sd=0.08),
        Shape("latency_p99", 30.0, sd=0.05),
        Shape("error_ratio", 0.06, rel=False, sd=0.012),
        Shape("pool_busy", 40.0, rel=False, sd=0.0, ramp=2),
        Shape("pool_waiting", 5.0, rel=False, sd=2.0, to=36.0, duration=90, kind="ramp"),
    ),
    cause=(
        Shape("slow_statements", 3.1, rel=False, sd=0.5, ramp=2),
        Shape("sessions", 2.1, sd=0.04, ramp=4),
        Shape("cpu", 0.84, rel=False, sd=0.035),
    ),
    victim_errors=(
        "HikariPool-1 - Connection is not available, request timed out after 5000ms.",
        "{method} {path} failed: could not acquire a JDBC handle within 5000 ms "
        "(datasource {dep}:5432)",
        "org.springframework.jdbc.CannotGetJdbcConnectionException: Failed to obtain JDBC "
        "Connection; nested exception is java.sql.SQLTransientConnectionException",
    ),
    cause_lines=(
        (
            "WARN",
            "duration: {secs}.{n} ms  statement: UPDATE entries SET state = 'posted' "
            "WHERE id = {id}",
        ),
        (
            "ERROR",
            "process {pid} still waiting for ShareLock on transaction {xid} after 1000.{n} ms",
        ),
        ("ERROR", "canceling statement due to lock timeout"),
        (
            "WARN",
            "duration: {secs}{n}.5 ms  statement: SELECT account_id, sum(amount) FROM "
            "entries GROUP BY account_id FOR UPDATE",
        ),
    ),
    precursor=(
        (
            350,
            "culprit",
            "INFO",
            "connection authorized: user=etl_ro application_name=nightly-export",
        ),
    ),
    runbook=(
        "Relational store saturated by a long-running transaction",
        "When one long transaction holds row locks, every request that needs the same rows "
        "queues behind it. The application's client-side limit of open database sessions is "
        "reached, new requests queue for a free slot, and latency climbs to the wait limit.\n\n"
        "## Confirm\n\n- Busy slots at the configured maximum, requests queued for one.\n"
        "- On the database: statements running for minutes, sessions far above normal.\n\n"
        "## Fix\n\n- Find and end the blocking session; move reporting to a replica.\n"
        "- Do not just raise the client limit: more slots mean more blocked sessions.\n",
    ),
    alert=("LatencyHigh", "critical", "p95 response time of {victim} above 2 s for 3 minutes"),
)

DOWNSTREAM = Family(
    "downstream_timeout",
    "downstream",
    "errors",
    victim=(
        Shape("error_ratio", 0.26, rel=False, sd=0.035),
        Shape("latency_p95", 2060.0, rel=False, sd=30.0),
        Shape("latency_p99", 2190.0, rel=False, sd=25.0),
    ),
    cause=(
        Shape("latency_p95", 32.0, sd=0.09, ramp=4),
        Shape("latency_p99", 40.0, sd=0.08, ramp=4),
        Shape("gc_pause", 1100.0, rel=False, sd=200.0),
        Shape("cpu", 0.95, rel=False, sd=0.015),
        Shape("mem", 0.94, rel=False, sd=0.01, ramp=5),
    ),
    victim_errors=(
        "upstream request timeout after 2000ms calling http://{dep}:8080{path}",
        "{method} {path} -> 504: context deadline exceeded (Client.Timeout exceeded while "
        "awaiting headers)",
        "{method} {path} -> 503: short-circuited, breaker for {dep} is open ({n}% of calls "
        "too slow)",
    ),
    cause_lines=(
        ("WARN", "[gc][{n}] Pause Full (G1 Compaction Pause) 40{n}M->39{n}M(4096M) {secs}{n}.4ms"),
        ("WARN", "request handler threads: 200 of 200 occupied, {n} requests waiting"),
    ),
    precursor=(),
    runbook=(
        "Dependency too slow: collector pauses behind caller deadlines",
        "A service whose heap is nearly full spends most of its time in stop-the-world "
        "collection. Its own responses stall for seconds, and every caller with a shorter "
        "time budget gives up and reports a gateway error; callers may stop calling it.\n\n"
        "## Confirm\n\n- The dependency's pause times and processor use jumped together.\n"
        "- Callers' failures started at the same minute.\n\n"
        "## Fix\n\n- Restart or scale out the dependency; raise its heap or fix the leak.\n"
        "- Keep caller time budgets shorter than their own clients' budgets.\n",
    ),
    alert=("ErrorsHigh", "critical", "more than 10% of {victim} requests failing for 3 minutes"),
)

CACHE = Family(
    "cache_eviction",
    "cache",
    "slow",
    victim=(
        Shape("hits", 0.31, rel=False, sd=0.03, ramp=2),
        Shape("latency_p95", 11.0, sd=0.08, ramp=2),
        Shape("latency_p99", 12.0, sd=0.07, ramp=2),
        Shape("cpu", 1.5, sd=0.05),
    ),
    cause=(
        Shape("kv_used", 0.9995, rel=False, sd=0.0003, ramp=10, start=-10),
        Shape("kv_dropped", 2500.0, rel=False, sd=350.0, ramp=2),
        Shape("kv_clients", 1.1, sd=0.02, ramp=1, start=-10),
        Shape("cpu", 0.55, rel=False, sd=0.03),
    ),
    victim_errors=(),
    victim_warns=(
        "key item:{id} absent from {dep}, fetched from the primary store in {ms} ms",
        "fell back to the primary store for item:{id} after {ms}ms",
    ),
    warn_rate=0.35,
    cause_lines=(
        (
            "WARN",
            "{n}{n} keys dropped under allkeys-lru in the last 10s (maxmemory reached)",
        ),
    ),
    precursor=(
        (-598_000, "culprit", "INFO", "client connected id={id} name=bulk-loader addr={ip}:{port}"),
    ),
    runbook=(
        "Key-value store at capacity: least-recently-used keys removed",
        "When a shared in-memory store reaches its configured ceiling, it discards the "
        "least recently used keys to make room. A bulk writer can push out the hot working "
        "set; readers then fetch almost everything from the backing database and slow down.\n\n"
        "## Confirm\n\n- Store fill at its ceiling, keys being discarded every second.\n"
        "- Readers' share of successful reads fell at the same time.\n\n"
        "## Fix\n\n- Stop or throttle the bulk writer; give it a separate instance.\n"
        "- Raise the ceiling only after the writer is contained.\n",
    ),
    alert=("LatencyHigh", "warning", "p95 response time of {victim} above 500 ms for 3 minutes"),
)

DEPLOY = Family(
    "bad_deploy",
    "self",
    "errors",
    victim=(
        Shape("version", 0.1, rel=False, sd=0.0, ramp=1, kind="bump"),
        Shape("error_ratio", 0.3, rel=False, sd=0.025, ramp=1),
    ),
    cause=(),
    victim_errors=(
        "{method} {path} 500: TypeError: Cannot read properties of undefined (reading "
        "'currency') at formatTotals (/app/dist/totals.js:88:19)",
        "{method} {path} 500: java.lang.NullPointerException: Cannot invoke "
        '"String.trim()" because "code" is null at Mapper.apply(Mapper.java:212)',
        "unhandled exception on {method} {path}: KeyError: 'region_code'",
    ),
    cause_lines=(),
    precursor=(
        (-9000, "victim", "INFO", "received SIGTERM, draining for rolling update of {old}"),
        (150, "victim", "INFO", "rolling update complete: {new} replaces {old} (change CHG-{id})"),
        (8600, "victim", "INFO", "listening on :8080, v{new}"),
    ),
    runbook=(
        "Regression shipped in a new build",
        "A release that breaks one code path shows up as failures that begin exactly when the "
        "new release starts serving, usually on a subset of endpoints, with a stack trace that "
        "did not occur before.\n\n## Confirm\n\n- The running release changed at the minute the "
        "failures began.\n- Other services and dependencies are unchanged.\n\n## Fix\n\n- Roll "
        "back first, investigate afterwards; pause the pipeline.\n",
    ),
    alert=("ErrorsHigh", "critical", "more than 10% of {victim} requests failing for 3 minutes"),
)
