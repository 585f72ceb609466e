"""Incident families of generated worlds: what moves, what gets logged, what the runbook says.

A family names where its cause lives relative to the service that shows the symptom (the
victim): ``self``, its ``database``, its ``cache``, a ``downstream`` service it calls, or (for
consumer lag) the consumer itself behind a ``queue``. Log phrasings name the culprit only in
some lines (``{dep}`` is the culprit's name in about 40% of them, an address otherwise);
runbooks describe each mechanism in their own words and never quote a log line.
"""

from __future__ import annotations

from dataclasses import dataclass

# Placeholders in phrasings: {dep} culprit name or address, {victim}, {method}, {path}, {ms},
# {secs}, {n}, {id}, {pid}, {port}, {k}, {old}, {new}, {job}, {group}, {now}, {xid}, {ip}.


@dataclass(frozen=True)
class Shape:
    """A change to one role's series after the onset.

    ``ramp``: move to ``value`` (times the baseline when ``rel``) over ``ramp`` minutes, starting
    ``start`` minutes after the onset (negative: before it); with ``to``, jump to ``value`` and
    drift to ``to`` over ``duration`` minutes. ``saw``: climb from the baseline to ``value``
    every ``ramp`` minutes and drop back (a leak and its restarts); ``steps``: a counter that
    goes up by one at each drop of a ``saw`` with the same period; ``countdown``: a value that
    reaches zero at the onset; ``bump``: the baseline plus ``value`` from the onset on (a new
    build number).
    """

    role: str
    value: float
    rel: bool = True
    sd: float = 0.05
    ramp: int = 3
    start: int = 0
    to: float | None = None
    duration: int = 1
    kind: str = "ramp"


@dataclass(frozen=True)
class Family:
    """One incident mechanism."""

    key: str
    culprit: str
    symptom: str
    victim: tuple[Shape, ...]
    cause: tuple[Shape, ...]
    victim_errors: tuple[str, ...]
    cause_lines: tuple[tuple[str, str], ...]
    # (milliseconds from the onset, "victim" or "culprit", level, phrasing)
    precursor: tuple[tuple[int, str, str, str], ...]
    runbook: tuple[str, str]
    alert: tuple[str, str, str]
    victim_warns: tuple[str, ...] = ()
    warn_rate: float = 0.03  # share of the victim's requests that log a ``victim_warns`` line


_DB_POOL = Family(
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

_DOWNSTREAM = Family(
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

_CACHE = Family(
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

_DEPLOY = Family(
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

_DISK = Family(
    "disk_full",
    "database",
    "errors",
    victim=(
        Shape("error_ratio", 0.2, rel=False, sd=0.03, ramp=2),
        Shape("latency_p95", 2.2, sd=0.06, ramp=2),
    ),
    cause=(
        Shape("volume_used", 0.9991, rel=False, sd=0.0002, ramp=45, start=-45),
        Shape("transactions", 0.35, sd=0.06, ramp=2),
    ),
    victim_errors=(
        '{method} {path} failed: ERROR: could not extend file "base/16384/{id}": No space '
        "left on device",
        "{method} {path} failed: write rejected by {dep}: PANIC: could not write to file "
        '"pg_wal/xlogtemp.{pid}"',
    ),
    cause_lines=(
        ("ERROR", 'could not write to file "pg_wal/xlogtemp.{pid}": No space left on device'),
        ("WARN", 'archive command failed with exit code 1: "cp pg_wal/{id} /archive/{id}"'),
    ),
    precursor=(),
    runbook=(
        "Database volume capacity exhausted",
        "When the volume under a database fills up, the server can no longer append to its "
        "write-ahead journal or grow its tables. Reads keep working, changes are rejected, and "
        "clients see errors on every request that modifies data.\n\n## Confirm\n\n"
        "- Volume usage at its maximum, change throughput collapsed.\n"
        "- Modifying requests of the database's clients failing since then.\n\n## Fix\n\n"
        "- Free space (old journal archives, bloated tables) or grow the volume; then check "
        "replication.\n",
    ),
    alert=("ErrorsHigh", "critical", "more than 10% of {victim} requests failing for 3 minutes"),
)

_CERT = Family(
    "cert_expiry",
    "downstream",
    "errors",
    victim=(Shape("error_ratio", 0.42, rel=False, sd=0.04, ramp=1),),
    cause=(
        Shape("chain_ttl", 0.0, rel=False, sd=0.0, kind="countdown"),
        Shape("throughput", 0.15, sd=0.1, ramp=1),
    ),
    victim_errors=(
        "POST {path} to {dep}: x509: certificate has expired or is not yet valid: current "
        "time {now} is after {now}",
        "javax.net.ssl.SSLHandshakeException: PKIX path validation failed: validity check "
        "failed (peer {dep}:8443)",
    ),
    cause_lines=(
        ("WARN", "http: handshake error from {ip}:{port}: remote error: bad certificate"),
    ),
    precursor=(),
    runbook=(
        "Expired serving credentials break client handshakes",
        "A service whose serving chain has passed its not-after date still accepts network "
        "connections, but every client that verifies the chain aborts the negotiation. Callers "
        "fail immediately; the service itself sees almost no traffic.\n\n## Confirm\n\n- The "
        "remaining validity of the serving chain reached zero at the onset.\n- Callers fail "
        "fast, the callee's request rate collapsed.\n\n## Fix\n\n- Issue and roll out a new "
        "chain; automate renewal and alert weeks ahead.\n",
    ),
    alert=("ErrorsHigh", "critical", "more than 10% of {victim} requests failing for 3 minutes"),
)

_CPU = Family(
    "cpu_saturation",
    "self",
    "slow",
    victim=(
        Shape("cpu", 0.985, rel=False, sd=0.006, ramp=2),
        Shape("latency_p95", 9.0, sd=0.08, ramp=2),
        Shape("latency_p99", 11.0, sd=0.08, ramp=2),
        Shape("error_ratio", 0.012, rel=False, sd=0.003, ramp=2),
    ),
    cause=(),
    victim_errors=(),
    victim_warns=(
        "event loop blocked for {ms} ms",
        "request waited {ms} ms for a free worker before being served",
    ),
    warn_rate=0.2,
    cause_lines=(),
    precursor=(
        (
            200,
            "victim",
            "INFO",
            "scheduler: started job reindex-all (run {id}) with parallelism 32",
        ),
    ),
    runbook=(
        "Runaway batch task starving request threads",
        "A scheduled or manually started batch task that runs with too much parallelism can "
        "take every core of the host. Request handling then waits for processor time: "
        "latency rises across all endpoints while error rates barely move.\n\n## Confirm\n\n"
        "- Processor use pinned near 100% from the minute a task started.\n- Latency up on "
        "every endpoint of the same service, dependencies unchanged.\n\n## Fix\n\n- Stop or "
        "deprioritise the task; cap its concurrency; run it off-peak or elsewhere.\n",
    ),
    alert=("LatencyHigh", "warning", "p95 response time of {victim} above 1 s for 5 minutes"),
)

_LEAK = Family(
    "memory_leak",
    "self",
    "errors",
    victim=(
        Shape("mem", 0.985, rel=False, sd=0.004, ramp=14, kind="saw"),
        Shape("restarts", 1.0, rel=False, sd=0.0, ramp=14, kind="steps"),
        Shape("error_ratio", 0.05, rel=False, sd=0.02, ramp=2),
        Shape("latency_p95", 2.0, sd=0.1, ramp=3),
    ),
    cause=(),
    victim_errors=(
        "java.lang.OutOfMemoryError: Java heap space",
        "{method} {path} 503: upstream connect error or disconnect/reset before headers",
    ),
    victim_warns=("instance {victim} restarted (exit code 137, reason OOMKilled)",),
    cause_lines=(),
    precursor=(),
    runbook=(
        "Process memory growth until the kernel kills it",
        "A service that retains objects it no longer needs grows steadily until it hits its "
        "limit; the orchestrator then kills and restarts it. The pattern repeats: a sawtooth "
        "of resident size and a restart counter that climbs, with failed requests around "
        "each restart.\n\n## Confirm\n\n- Resident size climbing linearly, dropping at each "
        "restart.\n- Restart count increasing since the onset.\n\n## Fix\n\n- Roll back the "
        "change that introduced the growth; take a memory snapshot before the next restart.\n",
    ),
    alert=("Restarting", "warning", "{victim} restarted more than twice in 30 minutes"),
)

_QUEUE = Family(
    "queue_lag",
    "queue",
    "delayed",
    victim=(
        Shape("consumer_behind", 52_000.0, rel=False, sd=900.0, ramp=60),
        Shape("throughput", 0.2, sd=0.1, ramp=2),
        Shape("latency_p95", 6.0, sd=0.1, ramp=2),
    ),
    cause=(Shape("backlog", 120.0, sd=0.05, ramp=60),),
    victim_errors=(
        "commit failed: the group has already rebalanced and assigned the partitions to "
        "another member",
    ),
    victim_warns=(
        "[Consumer clientId={victim}-1, groupId={group}] Revoking previously assigned partitions",
        "[Consumer clientId={victim}-1, groupId={group}] Request joining group due to: group "
        "is already rebalancing",
    ),
    cause_lines=(
        (
            "INFO",
            "[GroupCoordinator 1]: Preparing to rebalance group {group} in state "
            "PreparingRebalance with old generation {n}{n}",
        ),
    ),
    precursor=(),
    runbook=(
        "Subscribers fall behind the stream: membership churn and slow handlers",
        "When the members of a subscription keep leaving and coming back, work is "
        "redistributed over and over and almost nothing is processed. Work piles up on the "
        "broker and everything downstream of the subscribers is delayed.\n\n## Confirm\n\n"
        "- The subscription's distance behind the head of the stream grows steadily.\n"
        "- The subscribers' processed-per-second rate collapsed at the onset; the broker is "
        "fine.\n\n"
        "## Fix\n\n- Raise the fetch interval or shorten handler time; pin membership; "
        "scale subscribers only after the churn stops.\n",
    ),
    alert=("Delayed", "warning", "{victim} is more than 10000 messages behind"),
)

FAMILIES: dict[str, Family] = {
    family.key: family
    for family in (
        _DB_POOL,
        _DOWNSTREAM,
        _CACHE,
        _DEPLOY,
        _DISK,
        _CERT,
        _CPU,
        _LEAK,
        _QUEUE,
    )
}

# Runbooks every world has that fit no incident: the knowledge base is not an answer key.
GENERIC_RUNBOOKS: dict[str, tuple[str, str]] = {
    "oncall_handover.md": (
        "On-call handover checklist",
        "Write down open incidents, silenced alerts and running changes before you hand over. "
        "Check that paging works for the next person.\n",
    ),
    "replica_scaling.md": (
        "Adding read replicas",
        "Create the replica from the latest snapshot, let it catch up, then add it to the "
        "read pool. Watch replication delay during peak hours.\n",
    ),
    "noisy_alerts.md": (
        "Handling flapping alerts",
        "An alert that fires and resolves repeatedly usually has a threshold too close to "
        "normal variation. Widen the window or raise the threshold; never silence it forever.\n",
    ),
}
