"""Five more mechanisms: full volume, expired certificate, runaway job, leak, consumer lag."""

from __future__ import annotations

from eval.incident_types import Family, Shape

DISK = Family(
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

CERT = Family(
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
        "time {now} is after {expiry}",
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

CPU = Family(
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

LEAK = Family(
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
        "{method} {path} 503: upstream connect error or disconnect/reset before headers",
        "{method} {path} failed: java.lang.OutOfMemoryError: Java heap space",
    ),
    cause_lines=(),
    cycle_lines=(
        ("ERROR", "java.lang.OutOfMemoryError: Java heap space"),
        ("WARN", "instance {victim} restarted (exit code 137, reason OOMKilled)"),
        ("INFO", "listening on :8080, v{old}"),
    ),
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

QUEUE = Family(
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
