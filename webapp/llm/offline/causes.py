"""Cause kinds as data: the signal shapes that indicate each mechanism, and matching them.

Each :class:`CauseKind` lists the words of metric names and of log lines that an SRE reads as
signs of that mechanism (general vocabulary of the trade, not any dataset's phrasing).
:func:`classify` scores every kind over the evidence of a culprit and of the services it hurt.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

#: Weight of one matching item by its kind: a message says what happened, a metric only where.
_WEIGHTS = {"metric": 1.0, "log": 1.5, "event": 2.0}
#: Evidence of the culprit itself counts this much more than evidence of its callers.
OWN_FACTOR = 2.0
#: Below this score no kind is named: the evidence does not say which mechanism it is.
MIN_SCORE = 1.5


@dataclass(frozen=True, eq=False)  # one object per kind: identity is equality (hashed per match)
class CauseKind:
    """One mechanism: how to say it, and the metric and log words that indicate it."""

    key: str
    label: str
    #: Patterns (case-insensitive) of the words of its metric names, log lines and onset events.
    metric: str
    log: str
    event: str = ""
    #: Multiplies every match (generic resource signals are weaker indications).
    strength: float = 1.0
    zh: str = ""  # ``label`` in Chinese

    def says(self, language: str) -> str:
        """What the answer calls it in ``language`` (English when not written in it)."""
        return self.zh if language == "zh" and self.zh else self.label


#: Words of a connection pool's metric names and log lines (pool exhaustion, connection leaks).
_POOL_METRICS = r"pool|hikari\w*|hikaricp|dbcp|c3p0|jdbc|slowlog|slow|locks?|deadlocks?"
_POOL_LOGS = (
    r"\bpool\b|hikari|jdbc|connection is not available|acquire .{0,20}(connection|handle)"
    r"|too many connections|\block(s|ed)?\b|sharelock|deadlock|slow (query|statement)"
    r"|statement: (select|update|insert|delete)"
)

CAUSE_KINDS: tuple[CauseKind, ...] = (
    CauseKind(
        # before pool exhaustion, which it causes: the statement that took the lock decides
        "lock_held",
        "a lock held by a long transaction - a job's LOCK TABLE or long write blocks the "
        "others' statements, which wait, time out and hold their connections",
        r"^(locks?|blocked|waiters?)$",
        r"lock timeout|lock wait timeout|lock not available|due to lock|lock_timeout",
        r"\block table\b|\bfor update\b|in (share|exclusive|access exclusive) mode",
        zh="长事务持有锁 - 任务的 LOCK TABLE 或长时间写入阻塞了其他语句, 它们等待、超时并占住连接",
    ),
    CauseKind(
        "pool_exhaustion",
        "database connection pool exhaustion - slow queries and lock waits hold the "
        "connections, so requests queue for one",
        rf"^({_POOL_METRICS})$",
        _POOL_LOGS,
        zh="数据库连接池耗尽 - 慢查询和锁等待占住了连接, 请求排队等待连接",
    ),
    CauseKind(
        # after pool exhaustion, with its words and more: it wins only when a leak is reported
        "connection_leak",
        "a connection leak - connections are taken from the pool and never returned, so the "
        "pool runs dry and requests wait for one",
        rf"^({_POOL_METRICS}|leak\w*)$",
        rf"{_POOL_LOGS}|\bleak(ed|s|ing)?\b|never (returned|closed)|unclosed connection",
        zh="连接泄漏 - 连接从连接池取出后从未归还, 连接池耗尽, 请求只能等待连接",
    ),
    CauseKind(
        "credentials",
        "invalid credentials - a password, key or token was rotated, expired or revoked, so "
        "authentication fails and the calls that need it are rejected",
        r"^(auth\w*|unauthori[sz]ed|401|credentials?|logins?)$",
        r"auth\w* (failed|failure|error)|unauthori[sz]ed|\b401\b"
        r"|invalid[ _.-]?(api[ _.-]?key|token|credentials?|password|secret)"
        r"|(key|token|credentials?|password|secret) (has been |was |is )?"
        r"(revoked|expired|rotated)"
        r"|access denied for user|bad credentials|wrong password",
        zh="凭据失效 - 密码、密钥或令牌被轮换、过期或吊销, 认证失败, 依赖它的调用被拒绝",
    ),
    CauseKind(
        "fd_exhaustion",
        "file descriptor exhaustion - the process hit its open-files limit (too many open "
        "files), so it cannot open new connections or files",
        r"^(fds?|descriptors?|nofile|filehandles?|handles)$",
        r"too many open files|\bemfile\b|file descriptors?|\bulimit\b|\bnofile\b",
        zh="文件描述符耗尽 - 进程达到打开文件数上限 (too many open files), 无法新建连接或文件",
    ),
    CauseKind(
        "disk_full",
        "disk full - the volume has no space left, so writes fail",
        r"^(disk|disks|volume|vol|fs|filesystem|storage|inodes?|space)$",
        r"no space left|disk (is )?full|disk quota|enospc|could not (write|extend)"
        r"|read-only file ?system|archive command failed",
        zh="磁盘已满 - 卷上没有剩余空间, 写入失败",
    ),
    CauseKind(
        "cert_expiry",
        "an expired TLS certificate - handshakes fail, so calls are rejected",
        r"^(cert|certs|certificate|tls|ssl|x509|expiry|notafter|chain)$",
        r"certificate|x509|\btls\b|\bssl|handshake|pkix",
        zh="TLS 证书过期 - 握手失败, 调用被拒绝",
    ),
    CauseKind(
        "memory_leak",
        "a memory leak - memory grows until the process runs out of memory (OOM) and is restarted",
        r"^(rss|heap|mem|memory|oom|oomkilled|restarts?)$",
        r"out ?of ?memory|outofmemory|\boom|heap space|exit code 137"
        r"|memory (limit|usage|exhausted|pressure)|cannot allocate memory",
        zh="内存泄漏 - 内存不断增长, 直到进程内存溢出 (OOM) 被重启",
    ),
    CauseKind(
        "cache_eviction",
        "cache eviction - the cache is full and evicts keys, so reads miss it and fall back",
        # what the metric counts, not which store it comes from: a cache server's every metric
        # (its clients, its cluster's state) would otherwise say "eviction"
        r"^(cache|hits?|miss(es)?|evict\w*|expel\w*)$",
        r"evict|expel|maxmemory|\blru\b|keys? (dropped|removed|evicted)|cache miss"
        r"|fell back to|fall(ing)? back to|absent from",
        zh="缓存淘汰 - 缓存已满并驱逐键, 读取未命中缓存而回源",
    ),
    CauseKind(
        # before consumer lag: a replica's lag is named "lag" too, and its other words decide
        "replica_lag",
        "replica lag - the read replica fell behind its primary (replication lag), so reads on "
        "it see stale rows or are cancelled by recovery conflicts",
        r"^(replication|replica|replicas|replay|standby|walreceiver|wal)$",
        r"conflict with recovery|recovery conflict|replication (lag|delay|slot)"
        r"|replica(tion)? (is )?(lagging|behind)|standby|wal receiver|replay (lag|delay)",
        zh="副本延迟 - 只读副本落后于主库 (复制延迟), 读到旧数据或因恢复冲突被取消",
    ),
    CauseKind(
        "network_partition",
        "a network partition - hosts cannot reach each other (no route, connections lost), so "
        "calls between them fail",
        # a cluster's hash slots fail when the nodes serving them cannot be reached
        r"^(unreachable|partition(ed)?|split|quorum|reachable|slots?)$",
        r"ehostunreach|enetunreach|no route to host|(host|network) (is )?unreachable"
        r"|connection (with|to) .{0,60} lost|lost connection (with|to)|link (is )?down"
        r"|split.?brain|partitioned|quorum (lost|not)|cluster (is )?down|marked .{0,20}fail",
        zh="网络分区 - 主机之间互相不可达 (没有路由, 连接断开), 它们之间的调用失败",
    ),
    CauseKind(
        "queue_lag",
        "consumer lag - the consumers fall behind the queue and a backlog builds up",
        # not "offset" alone: a clock's or a zone's offset is no queue
        r"^(lag|consumer\w*|backlog|unacked|queued?|behind|pending)$",
        # a queue's partitions and offsets, not a network partition or a clock's offset
        r"rebalanc|\blag\b|assigned partitions|partitions? (assigned|revoked)|consumer"
        r"|(commit(ted)?|consumer) offsets?|offsets? (commit|out of range)|backlog|revok",
        zh="消费延迟 - 消费者跟不上队列, 消息积压",
    ),
    CauseKind(
        "dns_failure",
        "DNS resolution failure - names do not resolve (lookups fail or time out), so calls "
        "cannot reach their targets",
        r"^(dns|servfail|nxdomain|resolver|resolv|lookups?)$",
        r"eai_again|getaddrinfo|servfail|nxdomain|no such host|name resolution"
        r"|could not resolve|unknown ?host|\bdns\b|\budp\b.{0,60}:53\b|lookup \S+ on \S+"
        r"|\.\s(A|AAAA|SRV|CNAME|PTR|MX|TXT): ",  # "<name>. A: read udp": a resolver's error
        zh="DNS 解析失败 - 域名无法解析 (查询失败或超时), 调用到达不了目标",
    ),
    CauseKind(
        "clock_skew",
        "clock skew - the host's clock drifted after time sync was lost, so timestamps and "
        "tokens are judged wrong and rejected",
        r"^(timex|ntp|ntpd|chrony\w*|timesync\w*|clock|skew|drift)$",
        r"clock skew|clock drift|\bntp|chrony|timesync|time sync|synchroni[sz]e"
        r"|before (it was )?issued|issued in the future|\bnbf\b|\biat\b",
        zh="时钟偏移 - 时间同步丢失后主机时钟漂移, 时间戳和令牌被判为无效而被拒绝",
    ),
    CauseKind(
        "downstream_timeout",
        "a slow dependency - calls to it time out",
        r"^(gc|stw|pause|pauses|upstream|downstream)$",
        r"time(d)? ?out|timeout|deadline|upstream|breaker|\bgc\b|pause full"
        r"|handler threads|stop-the-world",
        zh="依赖变慢 - 对它的调用超时",
    ),
    CauseKind(
        "bad_deploy",
        "a bad deploy - the failures began when a new version was rolled out",
        r"^(version|build|revision|rev|release|deploy\w*)$",
        r"null ?pointer|nil pointer|typeerror|keyerror|attributeerror|unhandled exception"
        r"|stack trace",
        r"deploy|rolling update|rolled out|rollout|release|upgrade|new version|replaces"
        r"|\bversion\b",
        zh="有问题的发布 - 故障始于新版本上线之时",
    ),
    CauseKind(
        "rate_limited",
        "rate limiting - calls get 429 Too Many Requests (a quota or rate limit was hit), so they "
        "are rejected and retried",
        r"^(429|ratelimit\w*|ratelimited|quota)$",
        r"\b429\b|too many requests|rate.?limit|retry-after|quota exceeded",
        zh="限流 - 调用收到 429 Too Many Requests (触及配额或速率限制), 被拒绝并重试",
    ),
    CauseKind(
        "config_change",
        "a configuration change - a config push or reload at the onset changed how the service "
        "behaves (a limit, a timeout, an endpoint)",
        r"^(config|configuration|reloads?|flags?)$",
        r"config(uration)? (reload|push|change|update)|invalid config|reload(ed|ing) config",
        r"\bconfig(uration|map)?\b|\breload|refresh(ed)? keys|keys changed|feature.?flag"
        r"|properties (changed|updated|reloaded)|settings? (changed|updated)",
        zh="配置变更 - 异常开始时的一次配置推送或重载改变了服务的行为 (限额、超时、地址)",
    ),
    CauseKind(
        "storage_saturation",
        "storage saturation - a bulk job floods the storage with reads or writes, so its requests "
        "queue, slow down and are throttled",
        r"^(s3|objectstore|bucket|buckets|blob|iops|ttfb|await|iowait|diskio)$",
        r"reduce your request rate|\bslow ?down\b|storage ?err|i/?o (wait|saturat)"
        r"|(disk|volume|storage|bucket) (is )?(busy|saturated|overloaded|throttl\w*)",
        zh="存储饱和 - 批量任务的大量读写压满了存储, 请求排队、变慢并被限流",
    ),
    CauseKind(
        "cpu_saturation",
        "CPU saturation - a runaway job takes the processor, so requests wait for it",
        r"^(cpu|load|throttl\w*|processor)$",
        r"event loop blocked|cpu|throttl|free worker|starv",
        r"job|batch|scheduler|cron|task",
        strength=0.6,
        zh="CPU 饱和 - 失控的批处理任务占满了处理器, 请求只能等待",
    ),
)

#: Cause kinds a caller sees in its own lines while the cause lies in another service.
ELSEWHERE = frozenset(
    {
        *("downstream_timeout", "dns_failure", "network_partition", "storage_saturation"),
        *("replica_lag", "lock_held", "pool_exhaustion", "clock_skew"),
    }
)


@dataclass(frozen=True)
class Item:
    """One piece of evidence offered to :func:`classify`."""

    kind: str  # "metric", "log" or "event"
    text: str  # the metric name, the log template or the event line
    own: bool  # evidence of the culprit itself (else of a service it hurt)


@dataclass(frozen=True)
class Match:
    """The best cause kind and the evidence items that indicate it."""

    kind: CauseKind
    score: float
    items: tuple[Item, ...]


@lru_cache(maxsize=1024)
def metric_tokens(name: str) -> tuple[str, ...]:
    """The words of a metric name: split on ``_ . - :`` and between lower and upper case."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name)
    return tuple(t for t in re.split(r"[_.\-:/\s]+", spaced) if t)


@cache
def _words(pattern: str) -> re.Pattern[str]:
    """A kind's pattern, compiled case-insensitive."""
    return re.compile(pattern, re.IGNORECASE)


@lru_cache(maxsize=4096)
def matches(kind: CauseKind, item: Item) -> bool:
    """Whether ``item`` is a sign of ``kind`` (cached: every round offers the same items)."""
    if item.kind == "metric":
        return any(_words(kind.metric).match(token) for token in metric_tokens(item.text))
    if item.kind == "event":
        return bool(kind.event and _words(kind.event).search(message_words(item.text)))
    return _words(kind.log).search(_cause_words(item.text)) is not None


#: Lines of a stack trace (``at ...``, ``... 12 more``) and an exception's name before its message.
_FRAME = re.compile(r"^\s+(at\s|\.\.\.)")
_EXCEPTION = re.compile(r"\b[\w.$]*(Exception|Error)\b:\s*")


def innermost(text: str, *, named: bool = False) -> str:
    """The message of a log line's innermost exception: its last line without stack frames,
    from after (``named``: from) its last exception name."""
    lines = [line for line in text.splitlines() if line.strip() and not _FRAME.match(line)]
    line = (lines or [text])[-1]
    names = list(_EXCEPTION.finditer(line))
    if not names:
        return line
    return line[names[-1].start() if named else names[-1].end() :]


@lru_cache(maxsize=4096)
def _cause_words(text: str) -> str:
    """A log line's innermost exception's message when that alone shows a cause kind, else
    the whole message."""
    inner = message_words(innermost(text))
    if any(_words(kind.log).search(inner) for kind in CAUSE_KINDS):
        return inner
    return message_words(text)


#: Arguments of a message rather than its words: quoted values, URLs and file paths.
_ARGUMENTS = re.compile(r"'[^']*'|\"[^\"]*\"|\S*://\S*|\S*/\S*/\S*")


def message_words(text: str) -> str:
    """A log line without its arguments (``open '/etc/ssl/certs/ca.crt'`` names a file)."""
    return _ARGUMENTS.sub(" ", text)


def classify(items: Sequence[Item]) -> Match | None:
    """The cause kind the evidence indicates most strongly, or None below ``MIN_SCORE``; one
    message counts once, as the culprit's own when it is."""
    firsts: dict[tuple[str, str], Item] = {}
    for item in items:
        key = (item.kind, item.text)
        if key not in firsts or (item.own and not firsts[key].own):
            firsts[key] = item
    items = list(firsts.values())
    best: Match | None = None
    for kind in CAUSE_KINDS:
        found = [item for item in items if matches(kind, item)]
        if kind.strength < 1 and all(item.kind == "event" for item in found):
            continue  # a job started: a generic resource sign needs a sign of the resource
        score = kind.strength * sum(
            _WEIGHTS[item.kind] * (OWN_FACTOR if item.own else 1.0) for item in found
        )
        if found and score >= MIN_SCORE and (best is None or score > best.score):
            best = Match(kind, score, tuple(found))
    return best


def own_kind(match: Match | None) -> bool:
    """Whether ``match`` (of a service's own evidence) is a cause that lies in the service itself:
    neither a kind whose cause lies elsewhere nor a generic resource sign."""
    return match is not None and match.kind.key not in ELSEWHERE and match.kind.strength >= 1
