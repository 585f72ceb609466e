"""Service names of generated worlds: several naming styles, aliases in English and Chinese.

No name here is one of the demo's (``demo.system``): a world's services must be new to
the analyser. Every name is lower-case (backends compare service names case-insensitively).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

# Business domains: English stem -> Chinese name (without the 服务 suffix).
DOMAINS: dict[str, str] = {
    "ledger": "账本",
    "invoice": "发票",
    "quote": "报价",
    "basket": "购物篮",
    "wallet": "钱包",
    "refund": "退款",
    "coupon": "优惠券",
    "loyalty": "积分",
    "search": "搜索",
    "review": "评价",
    "notify": "通知",
    "pricing": "定价",
    "tax": "税务",
    "fraud": "风控",
    "auth": "认证",
    "profile": "用户资料",
    "media": "媒体",
    "report": "报表",
    "booking": "预订",
    "ticket": "工单",
    "routing": "路径规划",
    "rating": "评分",
    "feed": "信息流",
    "message": "消息",
    "subscription": "订阅",
    "warehouse": "仓储",
    "dispatch": "调度",
    "identity": "身份",
    "settlement": "结算",
    "recommend": "推荐",
}
CODENAMES = (
    "hermes",
    "atlas",
    "nimbus",
    "orion",
    "falcon",
    "kestrel",
    "juniper",
    "cobalt",
    "quartz",
    "tundra",
    "mosaic",
    "beacon",
    "vega",
    "lynx",
    "sequoia",
)
TEAMS = ("fin", "core", "cx", "ops", "plat", "growth")
# Names that must never appear: the demo's services in both variants.
DEMO_NAMES = frozenset(
    {
        "api-gateway",
        "order-service",
        "payment-service",
        "inventory-service",
        "user-service",
        "catalog-service",
        "shipping-service",
        "mysql-primary",
        "redis-cache",
        "edge-proxy",
        "checkout-svc",
        "billing-api",
        "stock-service",
        "account-service",
        "product-catalog",
        "fulfilment-worker",
        "sql-main",
        "kv-cache",
    }
)
_APP_STYLES = (
    "{d}-service",
    "{d}-svc",
    "{d}-api",
    "{t}-{d}",
    "{d}_svc",
    "{c}",
    "{d}d",
)
_WORKER_STYLES = ("{d}-worker", "{d}-consumer", "{d}_jobs", "{c}-worker")
_DB_STYLES = ("pg-{d}", "{d}-db", "mysql-{d}-01", "{d}-postgres", "maria-{d}")
_CACHE_STYLES = ("{d}-redis", "memcached-{d}", "kv-{d}", "{d}-valkey")
_QUEUE_STYLES = ("kafka-{d}", "{d}-rabbitmq", "nats-{d}", "{d}-events")
_EDGE_NAMES = ("front-door", "envoy-edge", "ingress-web", "bff-web", "edge-router")


@dataclass(frozen=True)
class Named:
    """A service's name, the domain it serves and its aliases."""

    name: str
    domain: str
    aliases: tuple[str, ...]


class NameDrawer:
    """Draws unique names for one world from a seeded random stream."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.domains = list(DOMAINS)
        rng.shuffle(self.domains)
        self.codenames = list(CODENAMES)
        rng.shuffle(self.codenames)
        self.used: set[str] = set(DEMO_NAMES)

    def _domain(self) -> str:
        return self.domains.pop()

    def _fill(self, styles: tuple[str, ...], domain: str) -> str:
        for _ in range(20):
            style = self.rng.choice(styles)
            codename = self.codenames[-1]
            name = style.format(d=domain, c=codename, t=self.rng.choice(TEAMS))
            if name not in self.used:
                if "{c}" in style:
                    self.codenames.pop()
                self.used.add(name)
                return name
        raise RuntimeError(f"no free name for {domain}")

    def app(self, suffix: str = "服务", styles: tuple[str, ...] = _APP_STYLES) -> Named:
        """An application service (or worker, with worker styles)."""
        domain = self._domain()
        name = self._fill(styles, domain)
        aliases = (DOMAINS[domain] + suffix, f"{domain} {'jobs' if suffix == '任务' else 'app'}")
        return Named(name, domain, aliases)

    def worker(self) -> Named:
        """A queue consumer."""
        return self.app("任务", _WORKER_STYLES)

    def infra(self, kind: str, domain: str) -> Named:
        """A database, cache or queue serving ``domain``."""
        styles = {"database": _DB_STYLES, "cache": _CACHE_STYLES, "queue": _QUEUE_STYLES}[kind]
        suffix = {"database": "数据库", "cache": "缓存", "queue": "消息队列"}[kind]
        name = self._fill(styles, domain)
        english = {"database": "db", "cache": "cache", "queue": "queue"}[kind]
        return Named(name, domain, (DOMAINS[domain] + suffix, f"{domain} {english}"))

    def edge(self) -> Named:
        """The edge proxy in front of the app services."""
        name = self.rng.choice([n for n in _EDGE_NAMES if n not in self.used])
        self.used.add(name)
        return Named(name, "edge", ("网关", "入口网关", "edge"))

    def unknown(self) -> str:
        """A plausible service name that is not in the world (and not close to one)."""
        domain = self._domain()
        return f"{domain}-service" if f"{domain}-service" not in self.used else f"{domain}-api"

    def spare_domain(self) -> str:
        """A domain no service of the world uses (for infra names)."""
        return self._domain()


def misspell(name: str, rng: random.Random) -> str:
    """``name`` with one typo in its longest part: a dropped, doubled or swapped letter."""
    parts = name.replace("_", "-").split("-")
    longest = max(parts, key=len)
    index = name.index(longest)
    word = list(longest)
    position = rng.randint(1, max(1, len(word) - 2))
    kind = rng.choice(("drop", "double", "swap"))
    if kind == "drop":
        del word[position]
    elif kind == "double":
        word.insert(position, word[position])
    else:
        word[position], word[position - 1] = word[position - 1], word[position]
        if "".join(word) == longest:
            del word[position]
    return name[:index] + "".join(word) + name[index + len(longest) :]
