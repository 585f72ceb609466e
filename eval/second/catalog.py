"""What a system is made of: services with their catalog metadata, technology and callers.

A ``Service`` carries what a real service catalog (Backstage, an owners file, Prometheus job and
team labels, runbook titles) holds about it - a description in English and Chinese, the team,
declared aliases - plus what the catalog does NOT hold: ``says``, the words users and on-call
people use when it breaks ("couriers can't log in", "骑手登录失败"). Those only reach questions.

``tech`` decides the log style and the metric names (``eval.second.signals``); ``kind`` decides
which fault mechanisms can start in it (``eval.second.faults``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

#: Kinds of service: an ingress proxy, an application, a primary database, a read replica, a
#: cache cluster, a message broker, an object store, the cluster DNS, a batch job.
KINDS = ("edge", "app", "db", "replica", "cache", "queue", "store", "dns", "batch")


@dataclass(frozen=True)
class Service:
    """One service of a system, as its catalog and its callers know it."""

    name: str
    kind: str
    tech: str
    team: str
    describe: tuple[str, str]
    deps: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    says: tuple[str, str] = ("", "")
    #: The external API it calls (``api.fcm.example:443``), if any.
    external: str = ""
    #: For a token issuer: it signs the JWTs its callers verify.
    issuer: bool = False
    #: Its main route (access logs, a config push that drops it).
    path: str = "/"
    #: For a batch job: the table it works on.
    table: str = ""

    @property
    def user_facing(self) -> bool:
        """True when users have words for its failure."""
        return bool(self.says[0])


@dataclass(frozen=True)
class System:
    """A whole system: its domain, its services and how its logs reach the product."""

    key: str
    title: str
    #: ``self_hosted``: every service writes its own log files (Envoy, nginx, PostgreSQL, Redis,
    #: hosts' syslog); ``managed``: managed databases and caches write none (``logs`` maps both).
    log_styles: str
    services: tuple[Service, ...]

    @cached_property
    def _by_name(self) -> dict[str, Service]:
        return {s.name: s for s in self.services}

    def service(self, name: str) -> Service:
        """The service called ``name``."""
        return self._by_name[name]

    def callers(self, name: str) -> list[Service]:
        """Services that call ``name``, in catalog order."""
        return [s for s in self.services if name in s.deps]

    def of_kind(self, *kinds: str) -> list[Service]:
        """Services of the given kinds, in catalog order."""
        return [s for s in self.services if s.kind in kinds]


def address(system: System, name: str) -> str:
    """A stable private address ``10.x.y.z:port`` for a service."""
    index = [s.name for s in system.services].index(name)
    port = PORTS.get(system.service(name).tech, 8080)
    return f"10.{40 + len(system.key)}.{index // 8 + 1}.{10 + index * 3}:{port}"


def host(system: System, name: str) -> str:
    """The host (or pod) name a service's log lines carry."""
    index = [s.name for s in system.services].index(name)
    service = system.service(name)
    if service.kind in ("db", "replica", "cache", "queue", "store", "dns", "batch"):
        return f"{name}-{index % 3 + 1}"
    return f"{name}-{7 + index:x}f{index * 37 % 251:02x}c-{'xkqbz'[index % 5]}{index % 9}"


def node(system: System, name: str) -> str:
    """The machine a service runs on, as its own daemons (chronyd, the kernel) name it."""
    return "ip-" + address(system, name).split(":")[0].replace(".", "-")


PORTS = {
    "postgres": 5432,
    "redis": 6379,
    "minio": 9000,
    "coredns": 53,
    "kafka": 9092,
    "envoy": 8443,
    "nginx": 443,
}
