"""Runbooks shipped with the demo dataset: one per failure type plus generic distractors.

They are written generically (no service names) in the words an on-call engineer searches
for, and the symptom sections use the vocabulary of both log phrasings of each scenario, so a
keyword search built from either variant's error lines finds the right one. Both variants ship
the same runbooks.
"""

from __future__ import annotations

RUNBOOKS: dict[str, str] = {
    "db_pool_exhaustion.md": """\
# Database connection pool exhaustion

## Symptoms

- Latency of a service that uses a relational database rises sharply (p95 in seconds) and its
  error rate rises with it.
- Error logs: "connection pool exhausted", "Cannot get JDBC connection",
  "CannotGetJdbcConnectionException", "no connection available within 5000ms",
  "Unable to acquire database connection", "pool saturated (50 of 50 in use, N queued)",
  "timeout waiting for a connection from the pool". They name the datasource or database host.
- Slow request warnings on the same endpoints.
- Metrics: `db_pool_active_connections` pinned at the pool maximum, `db_pool_pending_requests`
  (requests queued for a connection) climbing.

## Diagnosis

A pool runs dry when connections are held longer than usual, rarely because traffic grew. Look
at the database the pool points to (the datasource host in the error message):

1. `mysql_slow_queries_per_sec` and `mysql_threads_connected`: a jump at the same time means the
   database is slow, and the pool is only the messenger.
2. Database log: slow query log entries ("Slow query", "Query_time", "Rows_examined",
   "long_query_time exceeded", "rows scanned"), especially a long-running report or batch query
   (`SELECT ... GROUP BY ... FOR UPDATE`) on the same tables the service writes.
3. Lock contention: "Lock wait timeout exceeded; try restarting transaction" (error 1205),
   "waiting for a row lock", "innodb_lock_wait_timeout", "Transaction rolled back". Updates
   that wait for row locks keep their connections checked out, which drains the pool.
4. Rule out a connection leak: if the database is quiet and idle connections never return,
   suspect the application instead.

## Mitigation

- Kill the blocking query (`SHOW PROCESSLIST`, `KILL <id>`) and move reports to a read replica.
- Do not simply raise the pool maximum: more connections add more lock waiters.
- Shorten transactions; set statement timeouts for reporting users.

## Prevention

- Run analytics and settlement reports against a replica, never with `FOR UPDATE`.
- Alert on pool saturation (active = max for several minutes) and on pending requests.
""",
    "downstream_timeout.md": """\
# Downstream dependency timeouts

## Symptoms

- A service returns 5xx (504 Gateway Timeout, 503 Service Unavailable); its error rate jumps
  while its own CPU and database look normal.
- Error logs name a dependency: "call to <dependency> timed out after 2000 ms",
  "Read timed out", "SocketTimeoutException", "did not respond within 2000 ms",
  "deadline exceeded", "aborting request with HTTP 504".
- Circuit breaker messages: "circuit breaker is OPEN after repeated timeouts",
  "breaker guarding <dependency> is open", "Short-circuited request with HTTP 503".
- The edge proxy or API gateway shows 502/504 for the affected routes (upstream errors).

## Diagnosis

The failing service is usually the victim. Follow the dependency named in its errors:

1. Dependency latency (`latency_p95_ms`) above the caller's timeout means calls cannot finish.
2. Why is the dependency slow? Check `jvm_gc_pause_ms` (long GC pause, "Full GC",
   "Allocation Failure", "Stop-the-world collection", old generation full after collection),
   `cpu_utilization` near 1.0 and `memory_utilization` near the heap limit.
3. Worker saturation in the dependency's logs: "Thread pool saturated", "active=200/200",
   "request handler threads busy", "requests waiting in the executor queue".
4. Compare timestamps: the dependency degrades first, the caller's errors follow.

## Mitigation

- Restart or scale out the slow dependency; raise its heap or fix the memory leak behind the
  GC pressure.
- Keep caller timeouts below the client's own deadline; let the circuit breaker shed load.
- Serve a degraded response (cached stock, "availability unknown") instead of failing.

## Prevention

- Load-test dependencies with production heap sizes; alert on GC pause time and saturation.
""",
    "cache_eviction.md": """\
# Cache eviction and falling cache hit ratio

## Symptoms

- A read-heavy service becomes slow (p95 from tens of milliseconds to around a second) while
  its error rate stays low.
- `cache_hit_ratio` falls (for example from 0.95 to 0.3).
- Warning logs: "Cache miss", "falling back to database", "not found in cache",
  "loaded from primary store instead", each naming the cache host.
- Database load rises because every miss becomes a query.

## Diagnosis

1. Check the cache server's memory: `redis_memory_used_ratio` at 1.0 means maxmemory is
   reached; `redis_evicted_keys_per_sec` spiking means keys are being evicted.
2. Cache server log: "maxmemory reached", "evicting keys with policy allkeys-lru",
   "keys evicted", "Memory limit hit", "dropping least-recently-used entries",
   "entries removed". With an LRU eviction policy the hot working set is pushed out by new,
   colder keys.
3. Look for what filled the memory: a new client or batch writer (`CLIENT LIST`,
   `MEMORY USAGE`, `--bigkeys`), a TTL change, or a bigger value format.

## Mitigation

- Stop or throttle the writer that floods the cache; give its keys a short TTL or a separate
  instance.
- Raise `maxmemory` temporarily if the host has headroom.
- Protect the database while the cache warms up (rate limits, request coalescing).

## Prevention

- Alert on memory used above 90% of maxmemory and on eviction rate, not only on hit ratio.
""",
    "bad_deploy.md": """\
# Errors after a bad deployment

## Symptoms

- Error rate jumps right after a deploy or release while latency and traffic stay the same.
- Logs show a new version starting: "Deployed version", "rolled out", "Release ... replacing",
  "Started application", "boot complete", "rolling update", and a version metric changes.
- Error logs carry an exception and stack trace from application code:
  "NullPointerException", "Cannot invoke ... because ... is null", "Unhandled exception",
  "Traceback (most recent call last)", "AttributeError: 'NoneType' object has no attribute",
  HTTP 500 on specific endpoints.

## Diagnosis

1. Line up the first error with the deploy time and the `deploy_version` change: a regression
   starts within a minute of the rollout.
2. Check the dependencies (database, cache, downstream services): if they are healthy and the
   stack trace points into the service's own code, the new version is at fault.
3. Read the exception: the class and line in the trace show the code path that broke
   (for example a field that can now be null).

## Mitigation

- Roll back to the previous version first, debug later.
- Pause the rollout pipeline; add a test for the failing path before redeploying.

## Prevention

- Canary releases with automatic rollback on error rate; deploy markers on dashboards.
""",
    "high_cpu.md": """\
# High CPU utilization

## Symptoms

- `cpu_utilization` above 0.9 on one host or container for more than a few minutes.
- Requests slow down across all endpoints; throttling counters increase.

## Diagnosis

1. Is it traffic? Compare `request_rate` with the same hour yesterday.
2. Profile the process (flame graph, `top -H`, `jstack`, `py-spy dump`) to find hot threads.
3. Garbage collection can burn CPU on managed runtimes; check GC logs and heap usage.
4. Look for runaway loops, regex backtracking, or a crypto/compression hot path.

## Mitigation

- Scale out or raise the CPU limit; shed non-critical load.
- Roll back a change that introduced the hot path.
""",
    "disk_full.md": """\
# Disk full on a host or volume

## Symptoms

- Errors such as "No space left on device", "disk quota exceeded", failed writes, a database
  refusing writes, or a log shipper stalling.
- Filesystem usage above 95%; inode exhaustion shows the same errors with free bytes left.

## Diagnosis

1. `df -h` and `df -i` on the host; `du -sh /*` to find the largest directories.
2. Usual suspects: rotated logs not deleted, core dumps, binary logs, temp files of a crash.

## Mitigation

- Delete or compress old logs, purge binary logs older than the backup window.
- Extend the volume; fix log rotation and retention.
""",
    "certificate_expiry.md": """\
# TLS certificate expiry

## Symptoms

- Clients fail with "certificate has expired", "x509: certificate has expired or is not yet
  valid", "SSL handshake failed", "TLS handshake error", "unknown certificate authority".
- A sudden drop in successful requests at one endpoint at a round hour.

## Diagnosis

1. `openssl s_client -connect host:443 -servername host` and read `notAfter`.
2. Check the certificate manager's renewal logs and the secret mounted in the proxy.
3. Distinguish from handshake failures of a few clients with no shared cipher, which are
   client-side and harmless.

## Mitigation

- Renew and reload the certificate; restart proxies that cache it.
- Alert 21 days before expiry.
""",
}
