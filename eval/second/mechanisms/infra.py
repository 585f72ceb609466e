"""Faults that start below the applications: DNS, locks, replicas, storage, network, clocks."""

from __future__ import annotations

from eval.second.faults import JAVA_FRAMES, Effect, Fault, Line

E = Effect


DNS = Fault(
    "dns_failure",
    r"\bDNS\b|name resolution|resolv|EAI_AGAIN|getaddrinfo|SERVFAIL|lookup .*i/o timeout|"
    r"UnknownHostException|域名解析|解析失败|DNS ?(故障|异常|失败)",
    ("dns",),
    culprit=(E("servfail", 4000, minutes=1), E("dns_latency", 400, minutes=1)),
    victim=(E("errors", 45), E("latency", 4)),
    culprit_lines=(
        Line(
            "WARN",
            '[WARNING] plugin/health: Local health request to "http://:8080/health" took more '
            "than 1s: 1.{n3}s",
        ),
        Line(
            "ERROR",
            "[ERROR] plugin/errors: 2 {fqdn}. A: read udp {ip}:{port}->10.0.0.2:53: i/o timeout",
            per_min=30,
        ),
    ),
    victim_lines=(
        Line(
            "ERROR",
            {
                "node": "getaddrinfo EAI_AGAIN {fqdn}",
                "go": "dial tcp: lookup {fqdn} on {dns}: read udp {ip}:{port}->{dns}: i/o timeout",
                "java": "java.net.UnknownHostException: {fqdn}: Temporary failure in name "
                "resolution" + JAVA_FRAMES,
                "nginx": "{fqdn} could not be resolved (2: Server failure), client: 10.0.3.4, "
                'server: _, request: "GET {path} HTTP/1.1"',
                "envoy": "dns resolution for {fqdn} failed with c-ares status 11",
            },
            per_min=14,
        ),
    ),
    key_roles=(("culprit", "servfail"), ("culprit", "dns_latency")),
    recovers=True,
)

LOCK = Fault(
    "lock_by_batch",
    r"\block(s|ed|ing)?\b|LOCK TABLE|SHARE MODE|lock (wait|timeout|contention)|blocking|blocked|"
    r"表锁|锁等待|锁表|加锁|锁超时|阻塞",
    ("batch",),
    culprit=(E("running", 1, absolute=True, minutes=0.5), E("items", 850, absolute=True)),
    resource=(E("lock_waits", 22), E("long_tx", 900, shape="ramp", minutes=25)),
    victim=(E("latency", 35, minutes=3), E("errors", 25), E("pool_pending", 28, absolute=True)),
    culprit_lines=(
        Line("INFO", "systemd[1]: Starting {svc}.service - {describe}..."),
        Line("INFO", "run {n} started, batch size 5000"),
        Line(
            "INFO",
            "BEGIN; LOCK TABLE {table} IN SHARE MODE; -- consistent snapshot for reconciliation",
        ),
        Line("INFO", "processed {n} rows of {table}", per_min=1),
    ),
    resource_lines=(
        Line(
            "WARN",
            "process {n} still waiting for RowExclusiveLock on relation {n5} of database 16385 "
            "after 1000.{n3} ms|Process holding the lock: 3901. Wait queue: {n}.",
            per_min=12,
        ),
    ),
    victim_lines=(
        Line(
            "ERROR",
            {
                "java": "org.postgresql.util.PSQLException: ERROR: canceling statement due to "
                'lock timeout\n  Where: while updating tuple (1234,5) in relation "{table}"'
                + JAVA_FRAMES,
                "go": "update {table}: pq: canceling statement due to lock timeout",
                "node": "error: canceling statement due to lock timeout",
            },
            per_min=10,
            after=1,
        ),
    ),
    key_roles=(("resource", "lock_waits"), ("victim", "latency")),
    recovers=True,
    needs="lock",
)

REPLICA = Fault(
    "replica_lag",
    r"replica(tion)? lag|replay|recovery conflict|conflict with recovery|standby|stale|behind the "
    r"primary|"
    r"复制延迟|主从延迟|从库延迟|同步延迟|回放",
    ("replica",),
    culprit=(
        E("repl_lag", 1500, absolute=True, shape="ramp", minutes=40),
        E("long_tx", 600, shape="ramp", minutes=40),
    ),
    victim=(E("errors", 6), E("latency", 1.4)),
    culprit_lines=(
        Line(
            "ERROR",
            "canceling statement due to conflict with recovery|User query might have needed to "
            "see row versions that must be removed.",
            per_min=6,
            after=3,
        ),
    ),
    victim_lines=(
        Line(
            "ERROR",
            {
                "java": "org.postgresql.util.PSQLException: ERROR: canceling statement due to "
                "conflict with recovery\n  Detail: User query might have needed to see row "
                "versions that must be removed." + JAVA_FRAMES,
                "go": "query {table} on {dep}: pq: canceling statement due to conflict with "
                "recovery",
                "node": "error: canceling statement due to conflict with recovery (host "
                "{dep_host})",
            },
            per_min=5,
            after=4,
        ),
    ),
    key_roles=(("culprit", "repl_lag"),),
)

STORAGE = Fault(
    "storage_saturation",
    r"SlowDown|reduce your request rate|IOPS|(storage|object[- "
    r"]store|bucket|minio|\bs3\b|I/?O|bandwidth|throughput)"
    r".{0,40}(saturat|overload|exhaust|slow|busy|contention|throttl)|(saturat|overload)\w*.{0,40}"
    r"(storage|object[- ]store|bucket|minio|\bs3\b)|存储.{0,6}(饱和|打满|过载|变慢)|打满|带宽",
    ("batch",),
    culprit=(E("running", 1, absolute=True, minutes=0.5), E("items", 2400, absolute=True)),
    resource=(E("ttfb", 80), E("waiting", 120), E("s3_errors", 2500), E("rps", 3.1)),
    victim=(E("latency", 12, minutes=3), E("errors", 20)),
    culprit_lines=(
        Line("INFO", "systemd[1]: Starting {svc}.service - {describe}..."),
        Line("INFO", "listing bucket {table}: {n5}00 objects, concurrency 256"),
        Line("INFO", "progress {n5}/2418233 objects", per_min=1),
    ),
    resource_lines=(
        Line(
            "ERROR",
            "API: PutObject(bucket={bucket}, object={n}.bin) ... Error: Please reduce your "
            "request rate (cmd.StorageErr) remote={dep_ip}",
            per_min=20,
        ),
    ),
    victim_lines=(
        Line(
            "ERROR",
            {
                "go": "upload to {dep} failed: SlowDown: Please reduce your request rate.",
                "java": "software.amazon.awssdk.services.s3.model.S3Exception: Please reduce your "
                "request rate. (Service: S3, Status Code: 503, Request ID: {hex})" + JAVA_FRAMES,
                "node": "SlowDown: Please reduce your request rate. (PUT "
                "http://{dep_addr}/{bucket})",
                "nginx": "upstream timed out (110: Connection timed out) while reading response "
                'header from upstream, client: 10.0.3.4, server: origin, request: "GET '
                '{path}seg_{n3}.ts HTTP/1.1", upstream: '
                '"http://{dep_addr}/{bucket}/seg_{n3}.ts"',
            },
            per_min=10,
            after=1,
        ),
    ),
    key_roles=(("resource", "ttfb"), ("victim", "latency")),
    recovers=True,
    needs="store",
)

PARTITION = Fault(
    "network_partition",
    r"partition|no route to host|EHOSTUNREACH|unreachable|split[- ]brain|cluster (state|is) "
    r"(changed|down|fail)|"
    r"CLUSTERDOWN|network (split|failure)|网络分区|网络不通|不可达|脑裂",
    ("cache",),
    culprit=(
        E("cluster_ok", 0, absolute=True, minutes=0.5),
        E("slots_fail", 5461, absolute=True),
        E("clients", 0.35),
        E("ops", 0.6),
    ),
    victim=(E("errors", 40), E("latency", 6)),
    culprit_lines=(
        Line("WARN", "Marking node 3f1e{hex} as failing (quorum reached)."),
        Line("WARN", "Cluster state changed: fail"),
        Line("WARN", "Connection with replica {dep_ip}:6379 lost.", per_min=0.5),
    ),
    victim_lines=(
        Line(
            "ERROR",
            {
                "go": "redis: dial tcp {dep_addr}: connect: no route to host",
                "java": "io.lettuce.core.RedisConnectionException: Unable to connect to "
                "{dep_host}/{dep_addr}\nCaused by: io.netty.channel.ConnectTimeoutException: "
                "connection timed out: {dep_addr}" + JAVA_FRAMES,
                "node": "[ioredis] Unhandled error event: Error: connect EHOSTUNREACH {dep_addr}",
            },
            per_min=12,
        ),
    ),
    key_roles=(("culprit", "clients"), ("victim", "errors")),
    recovers=True,
)

CLOCK = Fault(
    "clock_skew",
    r"clock|skew|drift|\bNTP\b|chrony|time ?sync|used before issued|not (yet )?active|Premature|"
    r"issued in the future|时钟|时间偏差|时间漂移|时间不同步|对时",
    ("app",),
    culprit=(
        E("clock_offset", 94.8, absolute=True, minutes=0.5),
        E("clock_sync", 0, absolute=True),
    ),
    victim=(E("errors", 80), E("latency", 1.1)),
    culprit_lines=(
        Line("WARN", "chronyd[612]: Source 169.254.169.123 offline"),
        Line("WARN", "chronyd[612]: Can't synchronise: no selectable sources", per_min=0.1),
    ),
    victim_lines=(
        Line(
            "WARN",
            {
                "go": "rejecting token from iss=https://{dep}.internal: token used before issued",
                "java": "io.jsonwebtoken.PrematureJwtException: JWT must not be accepted before "
                "{iat}. Current time: {now}, a difference of 94{n3} milliseconds.  Allowed "
                "clock skew: 0 milliseconds.",
                "node": "NotBeforeError: jwt not active (iss https://{dep}.internal)",
            },
            per_min=18,
        ),
    ),
    key_roles=(("culprit", "clock_offset"),),
    needs="issuer",
)
