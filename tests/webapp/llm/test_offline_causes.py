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
    assert metric_tokens("jvmGcPause_ms.total") == ["jvm", "Gc", "Pause", "ms", "total"]


def test_a_message_s_arguments_name_no_mechanism() -> None:
    # a file path that mentions certificates is what failed to open, not why
    line = "Error: EMFILE: too many open files, open '/etc/ssl/certs/ca-certificates.crt'"
    assert classify([own("log", line)]) is None
    assert classify([own("log", "x509: certificate has expired or is not yet valid")]) is not None
    # an invalid memory address is a crash, not a leak
    match = classify([own("log", "panic: runtime error: invalid memory address or nil pointer")])
    assert match is not None and match.kind.key == "bad_deploy"
