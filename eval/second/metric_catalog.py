"""Metric names per technology, in the conventions real exporters use.

Java services speak Micrometer's Prometheus names (``http_server_requests_seconds``,
``hikaricp_connections_pending``) with recording-rule quantiles (``...:p99``); Go services the
OpenTelemetry semantic names (``http.server.request.duration.p99``,
``db.client.connection.pending_requests``); Node services StatsD/Graphite dotted names
(``stats.timers.<svc>.response_time.upper_99``); infrastructure its exporter's names
(``pg_replication_lag_seconds``, ``redis_cluster_state``, ``minio_s3_requests_ttfb_seconds``,
``coredns_dns_request_duration_seconds``, ``envoy.http.ingress_http.downstream_rq_5xx``).
Counters are stored as per-second rates with unit ``/s``, as an export of them would hold.
Every service also has kube-state-metrics' deployment generation and restart count.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    """One metric of a service: the role faults address it by, its name, unit and baseline."""

    role: str
    name: str
    unit: str
    base: float
    traffic: float = 0.0  # exponent: 1 follows traffic, 0 is flat
    noise: float = 0.04  # relative spread; with a zero baseline, the chance of a 1
    whole: bool = False  # a count: whole numbers


M = Metric

_JAVA = (
    M("latency", "http_server_requests_seconds:p99", "s", 0.14, 0.1, 0.06),
    M("rps", "http_server_requests_seconds_count", "/s", 60, 1.0),
    M("errors", "http_server_requests:error_ratio_rate5m", "ratio", 0.0025, 0, 0.25),
    M("cpu", "process_cpu_usage", "ratio", 0.22, 0.6),
    M("memory", "jvm_memory_used_bytes", "bytes", 7.2e8, 0.1, 0.02),
    M("fds", "process_open_fds", "", 240, 0.3, 0.03, True),
    M("gc", "jvm_gc_pause_seconds:p99", "s", 0.012, 0.2, 0.1),
)
_JAVA_DB = (
    M("pool_active", "hikaricp_connections_active", "", 5, 1.0, 0.2, True),
    M("pool_pending", "hikaricp_connections_pending", "", 0, 0, 0.02, True),
)
_JAVA_EXT = (
    M("outbound", "http_client_requests_seconds_count", "/s", 25, 1.0),
    M("throttled", "http_client_requests:status_429_rate5m", "/s", 0, 0, 0.0),
)
_GO = (
    M("latency", "http.server.request.duration.p99", "s", 0.06, 0.1, 0.06),
    M("rps", "http.server.requests", "/s", 90, 1.0),
    M("errors", "http.server.errors.ratio", "ratio", 0.002, 0, 0.25),
    M("cpu", "process.cpu.utilization", "ratio", 0.18, 0.6),
    M("memory", "process.memory.usage", "bytes", 1.9e8, 0.1, 0.02),
    M("fds", "process.open_file_descriptor.count", "", 130, 0.3, 0.03, True),
    M("goroutines", "go.goroutine.count", "", 320, 0.8, 0.04, True),
)
_GO_DB = (
    M("pool_active", "db.client.connection.count", "", 8, 1.0, 0.15, True),
    M("pool_pending", "db.client.connection.pending_requests", "", 0, 0, 0.02, True),
)
_GO_EXT = (
    M("outbound", "http.client.requests", "/s", 30, 1.0),
    M("throttled", "http.client.throttled", "/s", 0, 0, 0.0),
)
_NODE = (
    M("latency", "stats.timers.{d}.response_time.upper_99", "ms", 48, 0.1, 0.06),
    M("rps", "stats.counters.{d}.requests.rate", "/s", 70, 1.0),
    M("errors", "stats.counters.{d}.errors.rate", "/s", 0.12, 1.0, 0.3),
    M("cpu", "stats.gauges.{d}.cpu_percent", "%", 16, 0.6),
    M("memory", "stats.gauges.{d}.heap_used_bytes", "bytes", 1.4e8, 0.1, 0.02),
    M("fds", "stats.gauges.{d}.open_fds", "", 95, 0.3, 0.03, True),
    M("loop_lag", "stats.timers.{d}.event_loop_lag.mean", "ms", 2.5, 0.2, 0.1),
)
_NODE_DB = (
    M("pool_active", "stats.gauges.{d}.pg_pool.total", "", 6, 1.0, 0.15, True),
    M("pool_pending", "stats.gauges.{d}.pg_pool.waiting", "", 0, 0, 0.02, True),
)
_NODE_EXT = (
    M("outbound", "stats.counters.{d}.provider.requests.rate", "/s", 35, 1.0),
    M("throttled", "stats.counters.{d}.provider.throttled.rate", "/s", 0, 0, 0.0),
)
_ENVOY = (
    M("rps", "envoy.http.ingress_http.downstream_rq_total", "/s", 900, 1.0),
    M("errors", "envoy.http.ingress_http.downstream_rq_5xx", "/s", 0.5, 1.0, 0.25),
    M("rq4xx", "envoy.http.ingress_http.downstream_rq_4xx", "/s", 7, 1.0, 0.1),
    M("latency", "envoy.http.ingress_http.downstream_rq_time.p99", "ms", 185, 0.1, 0.05),
    M("connections", "envoy.server.total_connections", "", 5200, 1.0, 0.03, True),
)
_NGINX = (
    M("rps", "nginx_http_requests_total", "/s", 700, 1.0),
    M("errors", "code_5xx:nginx_http_responses:rate5m", "/s", 0.4, 1.0, 0.25),
    M("rq4xx", "code_4xx:nginx_http_responses:rate5m", "/s", 6, 1.0, 0.1),
    M("latency", "nginx_upstream_response_seconds:p99", "s", 0.21, 0.1, 0.05),
    M("connections", "nginx_connections_active", "", 3100, 1.0, 0.03, True),
)
_POSTGRES = (
    M("connections", "pg_stat_activity_count", "", 42, 0.7, 0.05, True),
    M("tps", "pg_stat_database_xact_commit:rate5m", "/s", 1500, 1.0),
    M("lock_waits", "pg_locks_count", "", 3, 0.5, 0.3, True),
    M("long_tx", "pg_stat_activity_max_tx_duration", "s", 0.9, 0.2, 0.3),
    M("db_size", "pg_database_size_bytes", "bytes", 8.4e10, 0, 0.0005),
)
_REPLICA = (*_POSTGRES, M("repl_lag", "pg_replication_lag_seconds", "s", 0.3, 0.3, 0.3))
_REDIS = (
    M("clients", "redis_connected_clients", "", 420, 0.5, 0.03, True),
    M("ops", "redis_commands_processed_total", "/s", 12000, 1.0),
    M("memory", "redis_memory_used_bytes", "bytes", 2.1e9, 0.05, 0.01),
    M("cluster_ok", "redis_cluster_state", "", 1, 0, 0.0, True),
    M("slots_fail", "redis_cluster_slots_fail", "", 0, 0, 0.0, True),
    M("latency", "redis_commands_duration_seconds:p99", "s", 0.0008, 0.2, 0.08),
)
_MINIO = (
    M("rps", "minio_s3_requests_total", "/s", 300, 1.0),
    M("ttfb", "minio_s3_requests_ttfb_seconds:p99", "s", 0.045, 0.2, 0.08),
    M("waiting", "minio_s3_requests_waiting_total", "", 2, 0.5, 0.3, True),
    M("s3_errors", "minio_s3_requests_5xx_errors_total", "/s", 0.01, 1.0, 0.5),
    M("traffic_out", "minio_s3_traffic_sent_bytes", "bytes/s", 9.0e7, 1.0),
)
_COREDNS = (
    M("dns_rps", "coredns_dns_requests_total", "/s", 2500, 1.0),
    M("servfail", "rcode_servfail:coredns_dns_responses:rate5m", "/s", 0.02, 1.0, 0.4),
    M("dns_latency", "coredns_dns_request_duration_seconds:p99", "s", 0.004, 0.2, 0.1),
)
_KAFKA = (
    M("msgs_in", "kafka_server_brokertopicmetrics_messagesin_total", "/s", 1800, 1.0),
    M("consumer_lag", "kafka_consumergroup_lag", "", 120, 0.5, 0.2, True),
    M("controller", "kafka_controller_kafkacontroller_activecontrollercount", "", 1, 0, 0.0, True),
    M("log_size", "kafka_log_log_size", "bytes", 3.1e10, 0.05, 0.002),
)
_JOB = (
    M("running", "batch_job_running", "", 0, 0, 0.0, True),
    M("items", "batch_job_items_processed:rate1m", "/s", 0, 0, 0.0),
)
_HOST_CLOCK = (
    M("clock_offset", "node_timex_offset_seconds", "s", 0.0004, 0, 0.5),
    M("clock_sync", "node_timex_sync_status", "", 1, 0, 0.0, True),
)
_KUBE = (
    M("generation", "kube_deployment_status_observed_generation", "", 41, 0, 0.0, True),
    M("restarts", "kube_pod_container_status_restarts_total", "", 0, 0, 0.0, True),
)

TECH_METRICS: dict[str, tuple[tuple[Metric, ...], tuple[Metric, ...], tuple[Metric, ...]]] = {
    "java": (_JAVA, _JAVA_DB, _JAVA_EXT),
    "go": (_GO, _GO_DB, _GO_EXT),
    "node": (_NODE, _NODE_DB, _NODE_EXT),
    "envoy": (_ENVOY, (), ()),
    "nginx": (_NGINX, (), ()),
    "postgres": (_POSTGRES, (), ()),
    "redis": (_REDIS, (), ()),
    "minio": (_MINIO, (), ()),
    "coredns": (_COREDNS, (), ()),
    "kafka": (_KAFKA, (), ()),
    "job": (_JOB, (), ()),
}


def service_metrics(
    tech: str, kind: str, *, db: bool, external: bool, issuer: bool
) -> list[Metric]:
    """The metrics a service of ``tech``/``kind`` exports."""
    own, with_db, with_ext = TECH_METRICS[tech]
    found = list(_REPLICA if kind == "replica" else own)
    found += list(with_db) if db else []
    found += list(with_ext) if external else []
    found += list(_HOST_CLOCK) if issuer else []
    found += list(_KUBE) if kind in ("app", "edge") else []
    return found


def metric_name(metric: Metric, service: str) -> str:
    """The metric's name for ``service`` (StatsD names carry the service, dotted)."""
    return metric.name.replace("{d}", service.replace("-", "_"))
