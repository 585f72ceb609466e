"""Faults that start in an application: credentials, rate limits, fds, config, leaks, deploys."""

from __future__ import annotations

from eval.second.faults import JAVA_FRAMES, LEAK_MINUTES, Effect, Fault, Line

E = Effect


CREDENTIALS = Fault(
    "credentials",
    r"credential|password|secret|api[ -]?key|rotat|expired "
    r"(key|token|secret)|unauthori[sz]ed|\b401\b|auth\w* (error|failure)|"
    r"authentication failed|凭据|凭证|密码|密钥|认证失败|鉴权失败",
    ("app",),
    culprit=(E("errors", 120, minutes=6), E("latency", 1.6)),
    victim=(E("errors", 35), E("latency", 1.3)),
    culprit_lines=(
        Line(
            "ERROR",
            {
                "java": "HikariPool-1 - Exception during pool initialization / refill: "
                "org.postgresql.util.PSQLException: FATAL: password authentication failed for "
                'user "{user}"' + JAVA_FRAMES,
                "go": 'db ping failed: pq: password authentication failed for user "{user}"',
                "node": 'error: password authentication failed for user "{user}"',
                "ext": "POST https://{ext}/v1/send -> 401 Unauthorized: "
                '{{"error":"invalid_api_key","message":"API key has been revoked"}}',
            },
            per_min=9,
        ),
    ),
    victim_lines=(
        Line(
            "ERROR",
            "call to {dep} failed: 500 Internal Server Error from http://{dep_addr}{dep_path}",
            6,
        ),
    ),
    key_roles=(("culprit", "errors"),),
    needs="cred",
)

RATE_LIMIT = Fault(
    "rate_limited",
    r"rate[- ]?limit|\b429\b|too many requests|throttl|Retry-After|quota|限流|限速|配额|频率限制",
    ("app",),
    culprit=(
        E("outbound", 3.2, minutes=1),
        E("throttled", 45, absolute=True),
        E("errors", 60),
    ),
    victim=(E("errors", 30),),
    culprit_lines=(
        Line(
            "INFO",
            {
                "java": "c.n.campaign.CampaignScheduler - campaign spring-promo released: {n5} "
                "recipients queued",
                "*": "bulk send started for campaign spring-promo: {n5} recipients queued",
            },
        ),
        Line(
            "WARN",
            "{ext} responded 429 Too Many Requests (Retry-After: 30); backing off",
            25,
            after=1,
        ),
        Line("ERROR", "send to {ext} failed after 3 attempts: 429 Too Many Requests", 8, after=2),
    ),
    victim_lines=(
        Line(
            "ERROR", "POST http://{dep_addr}{dep_path} returned 503: upstream provider throttled", 6
        ),
    ),
    key_roles=(("culprit", "throttled"), ("culprit", "errors")),
    recovers=True,
    needs="external",
)

FDS = Fault(
    "fd_exhaustion",
    r"file descriptor|file handle|open files|EMFILE|\bfds?\b|ulimit|nofile|文件描述符|句柄",
    ("app",),
    culprit=(
        E("fds", 1024, absolute=True, shape="ramp", minutes=7),
        E("errors", 70, minutes=7),
        E("latency", 3),
    ),
    victim=(E("errors", 30), E("latency", 2)),
    culprit_lines=(
        Line(
            "ERROR",
            {
                "go": "http: Accept error: accept tcp [::]:8080: accept4: too many open files; "
                "retrying in 1s",
                "java": "org.apache.tomcat.util.net.Acceptor - Socket accept "
                "failed\njava.io.IOException: Too many open files\n\tat "
                "java.base/sun.nio.ch.Net.accept(Native Method)\n\tat "
                "java.base/sun.nio.ch.ServerSocketChannelImpl.implAccept(ServerSocketChannelImpl.java:433)",
                "node": "Error: EMFILE: too many open files, open "
                "'/etc/ssl/certs/ca-certificates.crt'",
            },
            per_min=20,
            after=5,
        ),
    ),
    victim_lines=(
        Line(
            "ERROR",
            {
                "go": 'Post "http://{dep_addr}{dep_path}": read tcp {ip}:{port}->{dep_addr}: '
                "read: connection reset by peer",
                "java": 'I/O error on POST request for "http://{dep}:8080{dep_path}": Connection '
                "reset",
                "node": "request to http://{dep}:8080{dep_path} failed, reason: socket hang up",
            },
            per_min=8,
            after=5,
        ),
    ),
    key_roles=(("culprit", "fds"), ("culprit", "errors")),
    needs="callers",
)

CONFIG = Fault(
    "config_push",
    r"config|reload|refresh keys|\broutes?\b(?![-\w])(?! to host)|\bNR\b|settings? change|"
    r"配置|路由|热更新|重新加载",
    ("app", "edge"),
    culprit=(
        E("errors", 60, when="app"),
        E("latency", 0.6, when="app"),
        E("rq4xx", 18, when="edge"),
    ),
    victim=(E("errors", 30, when="app"), E("rps", 0.03, when="edge")),
    culprit_lines=(
        Line(
            "INFO",
            {
                "java": "o.s.c.e.event.RefreshEventListener - Refresh keys changed: "
                "[client.{dep}.read-timeout]",
                "go": "configuration reloaded from consul://config/{svc}/client.yaml (ModifyIndex "
                "{n5})",
                "envoy": "[info][upstream] [source/common/upstream/cds_api_helper.cc:32] cds: add "
                "9 cluster(s), remove 1 cluster(s)",
                "nginx": "[notice] 1#1: signal 1 (SIGHUP) received from {n}, reconfiguring",
                "node": "config reloaded from /etc/{svc}/config.json (etag {hex})",
            },
        ),
        Line(
            "ERROR",
            {
                "java": "java.net.SocketTimeoutException: Read timed out calling {dep} "
                "(read-timeout=150ms)" + JAVA_FRAMES,
                "go": "call to {dep} failed: context deadline exceeded (Client.Timeout=150ms)",
                "node": "request to {dep} failed: ETIMEDOUT after 150ms",
            },
            per_min=14,
            after=0.5,
        ),
    ),
    victim_lines=(
        Line(
            "ERROR",
            {"*": "call to {dep} failed: 502 Bad Gateway from http://{dep_addr}{dep_path}"},
            per_min=6,
            when="app",
            after=1,
        ),
    ),
    key_roles=(("culprit", "errors"), ("culprit", "rq4xx"), ("victim", "rps")),
    recovers=True,
    needs="config",
)

POOL = Fault(
    "connection_leak",
    r"connection pool|pool (is )?exhaust|connection leak|leak detection|Connection is not "
    r"available|"
    r"hikari|pool.{0,20}(full|saturat)|连接池|连接泄漏|连接耗尽",
    ("app",),
    culprit=(
        E("pool_active", 50, absolute=True, shape="ramp", minutes=8),
        E("pool_pending", 34, absolute=True, minutes=10),
        E("latency", 60, minutes=10),
        E("errors", 50, minutes=10),
    ),
    victim=(E("errors", 25), E("latency", 4)),
    culprit_lines=(
        Line("INFO", "c.f.flags.FlagWatcher - feature flag 'bulk-reprice' enabled (rollout 100%)"),
        Line(
            "WARN",
            "com.zaxxer.hikari.pool.ProxyLeakTask - Connection leak detection triggered for "
            "org.postgresql.jdbc.PgConnection@{hex} on thread http-nio-8080-exec-{n2}, stack "
            "trace follows\njava.lang.Exception: Apparent connection leak detected" + JAVA_FRAMES,
            per_min=3,
            after=2,
        ),
        Line(
            "ERROR",
            "org.springframework.jdbc.CannotGetJdbcConnectionException: Failed to obtain JDBC "
            "Connection; nested exception is java.sql.SQLTransientConnectionException: "
            "HikariPool-1 - Connection is not available, request timed out after 30000ms."
            + JAVA_FRAMES,
            per_min=12,
            after=8,
        ),
    ),
    victim_lines=(
        Line(
            "ERROR",
            "call to {dep} failed: 503 Service Unavailable after 30001 ms "
            "(http://{dep_addr}{dep_path})",
            6,
            after=8,
        ),
    ),
    key_roles=(("culprit", "pool_pending"), ("culprit", "latency")),
    needs="java",
)

MEMORY = Fault(
    "memory_leak",
    r"memory leak|\bOOM|out of memory|OutOfMemory|heap (space|out of memory|limit)|memory "
    r"(grows|growth|climb)|"
    r"内存泄漏|内存溢出|内存不足|内存持续增长",
    ("app",),
    culprit=(
        E("memory", 3.4, shape="saw", minutes=LEAK_MINUTES),
        E("restarts", 1, shape="kills", minutes=LEAK_MINUTES),
        E("latency", 1.8, shape="ramp", minutes=LEAK_MINUTES),
        E("cpu", 1.7, shape="ramp", minutes=LEAK_MINUTES),
    ),
    victim=(E("errors", 12, shape="spikes", minutes=LEAK_MINUTES),),
    culprit_lines=(
        Line(
            "ERROR",
            {
                "java": "java.lang.OutOfMemoryError: Java heap space\n\tat "
                "java.base/java.util.Arrays.copyOf(Arrays.java:3537)\n\tat "
                "{pkg}.cache.ResponseCache.put(ResponseCache.java:61)",
                "go": "fatal error: runtime: out of memory",
                "node": "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out "
                "of memory",
            },
            per_min=-1,
        ),
    ),
    victim_lines=(
        Line("ERROR", "call to {dep} failed: connect ECONNREFUSED {dep_addr}", per_min=-1),
    ),
    key_roles=(("culprit", "memory"), ("culprit", "restarts")),
)

DEPLOY = Fault(
    "bad_deploy",
    r"deploy|release|rollout|roll(ed)? out|new version|regression|roll ?back|version \d|v\d+\.\d+|"
    r"发布|部署|上线|新版本|回滚",
    ("app",),
    culprit=(
        E("generation", 1, shape="bump"),
        E("errors", 70, minutes=1),
        E("cpu", 3.2, minutes=1),
        E("latency", 2.5, minutes=1),
    ),
    victim=(E("errors", 20),),
    culprit_lines=(
        Line(
            "INFO",
            {
                "java": "{pkg}.Application - Starting Application v{ver_new} using Java 21.0.2 "
                "with PID 1",
                "go": "starting {svc} version={ver_new} commit={hex}",
                "node": "{svc}@{ver_new} listening on :8080",
            },
        ),
        Line(
            "ERROR",
            {
                "java": "java.lang.NullPointerException: Cannot invoke "
                '"{pkg}.model.Rule.matches(String)" because "rule" is null' + JAVA_FRAMES,
                "go": "panic recovered in {path}: runtime error: invalid memory address or nil "
                "pointer dereference",
                "node": "TypeError: Cannot read properties of undefined (reading 'tier')\n    at "
                "applyTier (/app/dist/pricing.js:212:31)",
            },
            per_min=16,
        ),
    ),
    victim_lines=(
        Line(
            "ERROR",
            "call to {dep} failed: 500 Internal Server Error from http://{dep_addr}{dep_path}",
            6,
        ),
    ),
    key_roles=(("culprit", "errors"), ("culprit", "cpu")),
)
