"""Cause kinds from the evidence: metric-name families and log-template words of the trade.

The names and lines here are the vocabulary of common exporters and runtimes (Prometheus
node/kube exporters, HikariCP, Redis, Kafka, the JVM, Go's TLS stack), not of any dataset.
"""

from __future__ import annotations

import pytest

from webapp.llm.offline.causes import Item, classify, metric_tokens


def own(kind: str, text: str) -> Item:
    return Item(kind, text, True)


def theirs(kind: str, text: str) -> Item:
    return Item(kind, text, False)


CASES = [
    (
        "pool_exhaustion",
        [
            theirs("metric", "hikaricp_connections_pending"),
            theirs("log", "HikariPool-<NUM> - Connection is not available, request timed out"),
            own("log", "process <NUM> still waiting for ShareLock on transaction <NUM>"),
        ],
    ),
    (
        "connection_leak",
        [
            own("metric", "hikaricp_connections_active"),
            own("log", "ProxyLeakTask - Connection leak detection triggered for <*> on thread <*>"),
            theirs("log", "HikariPool-<NUM> - Connection is not available, request timed out"),
        ],
    ),
    (
        "credentials",
        [
            own("log", 'FATAL: password authentication failed for user "<*>"'),
            own("log", "POST <*> -> 401 Unauthorized: <*>"),
        ],
    ),
    (
        "fd_exhaustion",
        [
            own("metric", "process_open_fds"),
            own("log", "accept4: too many open files; retrying in 1s"),
        ],
    ),
    (
        "disk_full",
        [
            own("metric", "node_filesystem_used_ratio"),
            own("log", "could not write to file <*>: No space left on device"),
        ],
    ),
    (
        "cert_expiry",
        [theirs("log", "Get <*>: x509: certificate has expired or is not yet valid")],
    ),
    (
        "memory_leak",
        [
            own("metric", "container_memory_rss"),
            own("metric", "kube_pod_container_status_restarts_total"),
            own("log", "java.lang.OutOfMemoryError: Java heap space"),
        ],
    ),
    (
        "cache_eviction",
        [
            own("metric", "redis_evicted_keys_total"),
            theirs("log", "cache miss for <*>, fell back to the database"),
        ],
    ),
    (
        "queue_lag",
        [
            own("metric", "kafka_consumergroup_lag"),
            own("log", "Revoking previously assigned partitions <*>"),
        ],
    ),
    (
        "downstream_timeout",
        [
            theirs("log", "upstream request timeout after <NUM> calling <*>"),
            own("metric", "jvm_gc_pause_seconds"),
        ],
    ),
    (
        "bad_deploy",
        [
            own("log", "TypeError: Cannot read properties of undefined (reading <*>)"),
            own("event", "deployment checkout rolled out image v2.14.0"),
        ],
    ),
    (
        "cpu_saturation",
        [
            own("metric", "process_cpu_seconds"),
            own("log", "event loop blocked for <NUM> ms"),
            own("event", "cron: batch job nightly-rollup started"),
        ],
    ),
    (
        "dns_failure",
        [
            own("metric", "rcode_servfail:coredns_dns_responses:rate5m"),
            own(
                "log", "[ERROR] plugin/errors: <NUM> db.local. A: read udp <IP>-><IP>: i/o timeout"
            ),
            own("log", "lookup db.local on <IP>:53: server misbehaving"),
            theirs("log", "getaddrinfo EAI_AGAIN db.local"),
        ],
    ),
    (
        "rate_limited",
        [
            own("metric", "http_client_requests:status-429:rate5m"),
            own("log", "push provider answered 429 Too Many Requests (Retry-After: <NUM>)"),
            own("event", "campaign spring-promo released: <NUM> recipients queued"),
        ],
    ),
    (
        "config_change",
        [
            own("log", "SocketTimeoutException: Read timed out calling <*>"),
            own("event", "RefreshEventListener - Refresh keys changed: [client.db.read-timeout]"),
        ],
    ),
    (
        "lock_held",
        [
            own("event", "BEGIN; LOCK TABLE settlements IN SHARE MODE"),
            theirs("metric", "pg_locks_count"),
            theirs("metric", "hikaricp_connections_pending"),
            theirs("log", "ERROR: canceling statement due to lock timeout"),
        ],
    ),
    (
        "replica_lag",
        [
            own("metric", "pg_replication_lag_seconds"),
            theirs("log", "ERROR: canceling statement due to conflict with recovery"),
        ],
    ),
    (
        "network_partition",
        [
            own("metric", "redis_cluster_state"),
            own("log", "Connection with replica <IP>:<NUM> lost."),
            theirs("log", "Error: connect EHOSTUNREACH <IP>:<NUM>"),
        ],
    ),
    (
        "network_partition",
        [
            own("metric", "redis_cluster_slots_fail"),
            theirs(
                "log", "Unable to connect to <*>\nCaused by: ConnectTimeoutException: timed out"
            ),
        ],
    ),
    (
        "storage_saturation",
        [
            own("event", "bulk export job started: <NUM> objects"),
            theirs("metric", "minio_s3_requests_ttfb_seconds:p99"),
            theirs("log", "PutObject ... Error: Please reduce your request rate"),
        ],
    ),
    (
        "clock_skew",
        [
            own("metric", "node_timex_offset_seconds"),
            own("log", "chronyd[<NUM>]: Can't synchronise: no selectable sources"),
            theirs("log", "token rejected: used before issued (iat in the future)"),
        ],
    ),
]


@pytest.mark.parametrize(("key", "items"), CASES, ids=[c[0] for c in CASES])
def test_the_evidence_names_its_mechanism(key: str, items: list[Item]) -> None:
    match = classify(items)
    assert match is not None and match.kind.key == key
    assert match.items


def test_a_busy_processor_alone_is_not_enough_and_nothing_is_no_cause() -> None:
    assert classify([theirs("metric", "cpu_busy")]) is None
    assert classify([own("metric", "http_requests_p95_ms"), own("log", "GET <*> 200")]) is None


def test_metric_names_split_on_separators_and_case() -> None:
    assert metric_tokens("jvmGcPause_ms.total") == ("jvm", "Gc", "Pause", "ms", "total")


def test_a_message_s_arguments_name_no_mechanism() -> None:
    # a file path that mentions certificates is what failed to open, not why
    line = "Error: EMFILE: too many open files, open '/etc/ssl/certs/ca-certificates.crt'"
    match = classify([own("log", line)])
    assert match is not None and match.kind.key == "fd_exhaustion"
    assert classify([own("log", "x509: certificate has expired or is not yet valid")]) is not None
    # an invalid memory address is a crash, not a leak
    match = classify([own("log", "panic: runtime error: invalid memory address or nil pointer")])
    assert match is not None and match.kind.key == "bad_deploy"


def test_an_offset_alone_is_no_queue() -> None:
    # a clock's offset moving is not consumer lag; a consumer group's lag is
    match = classify([own("metric", "node_timex_offset_seconds")])
    assert match is None or match.kind.key != "queue_lag"
    lag = classify([own("metric", "kafka_consumergroup_lag"), own("metric", "records_lag_max")])
    assert lag is not None and lag.kind.key == "queue_lag"


def test_one_message_counts_once_however_many_outputs_show_it() -> None:
    # a surging template is both a finding and a pattern: twice, it would outweigh the reload
    timeout = own("log", "SocketTimeoutException: Read timed out calling <*>")
    reload = own("event", "Refresh keys changed: [client.db.read-timeout]")
    match = classify([timeout, timeout, theirs("log", timeout.text), reload])
    assert match is not None and match.kind.key == "config_change"
    assert match.items == (reload,)


def test_a_replica_s_lag_is_no_consumer_lag() -> None:
    # "lag" is shared: the name's other part (replication) says whose
    match = classify([own("metric", "pg_replication_lag_seconds")])
    assert match is not None and match.kind.key == "replica_lag"


def test_a_cache_server_s_own_metrics_say_no_eviction() -> None:
    # the store a metric comes from is not what it measures
    metrics = [own("metric", m) for m in ("redis_cluster_state", "redis_connected_clients")]
    assert classify(metrics) is None
    lost = own("log", "Connection with replica <IP>:<NUM> lost.")
    match = classify([*metrics, lost])
    assert match is not None and match.kind.key == "network_partition"


def test_a_network_partition_or_a_clock_offset_in_a_line_is_no_queue() -> None:
    for line in ("cluster partitioned: node <*> marked as fail", "clock offset <NUM> ms"):
        match = classify([own("log", line)])
        assert match is None or match.kind.key != "queue_lag", line


def test_the_innermost_exception_of_a_line_says_what_went_wrong() -> None:
    # the pool failed to open a connection because the password was refused: credentials
    line = (
        "HikariPool-<NUM> - Exception during pool initialization: org.postgresql.util."
        'PSQLException: FATAL: password authentication failed for user "app"\n'
        "\tat com.zaxxer.hikari.pool.HikariPool.checkFailFast(HikariPool.java:<NUM>)"
    )
    match = classify([own("log", line)])
    assert match is not None and match.kind.key == "credentials"
    # an innermost message that names no mechanism leaves the whole line to say it
    crash = "java.lang.NullPointerException: Cannot invoke <*> because <*> is null"
    match = classify([own("log", crash)])
    assert match is not None and match.kind.key == "bad_deploy"


def test_a_job_that_started_is_no_cpu_saturation_without_a_sign_of_the_processor() -> None:
    started = [own("event", "Starting backfill.service - Job that rewrites every object")]
    store = [
        theirs("log", "PutObject <*> Error: Please reduce your request rate"),
        theirs("metric", "minio_s3_requests_ttfb_seconds:p99"),
    ]
    match = classify(started * 2 + store)
    assert match is not None and match.kind.key == "storage_saturation"
    busy = classify([*started, own("metric", "process_cpu_seconds_total")])
    assert busy is not None and busy.kind.key == "cpu_saturation"


def test_a_bad_gateway_says_a_call_failed_not_that_it_was_slow() -> None:
    reload = own("event", "configuration reloaded from consul://config/proxy/client.yaml")
    timeouts = own("log", "call failed: context deadline exceeded (Client.Timeout=<NUM>)")
    failed = theirs("log", "call to proxy failed: <NUM> Bad Gateway from <*>")
    match = classify([reload, timeouts, failed])
    assert match is not None and match.kind.key == "config_change"
    assert classify([failed]) is None
