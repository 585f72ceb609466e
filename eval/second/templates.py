"""Filling log templates: names, addresses and hosts from the catalog, numbers from the seed.

``{svc}``/``{host}``/``{addr}``/``{ip}``/``{path}`` describe the service itself, ``{dep}``/
``{dep_host}``/``{dep_addr}``/``{dep_ip}``/``{dep_path}`` its upstream, ``{fqdn}`` a name it
resolves, ``{dns}`` the cluster DNS address, ``{ext}`` its external API, ``{pkg}``/``{cls}``
a Java package and class; ``{n}``, ``{n2}``, ``{n3}``, ``{n5}``, ``{hex}`` and ``{port}`` are
drawn afresh at each use.
"""

from __future__ import annotations

import random
import string
from datetime import datetime, timedelta
from typing import Any

from eval.second.catalog import System, address, host

DNS_ADDRESS = "10.96.0.10:53"


def camel(name: str) -> str:
    """``renewal-api`` -> ``RenewalApi``."""
    return "".join(part.capitalize() for part in name.replace("_", "-").split("-"))


def service_address(system: System, name: str) -> str:
    """The address callers use (the cluster DNS has its well-known one)."""
    return DNS_ADDRESS if system.service(name).kind == "dns" else address(system, name)


def fqdn(system: System, name: str) -> str:
    """The name a client resolves for ``name``."""
    return f"{name}.{system.key}.svc.cluster.local"


class _Random(dict[str, Any]):
    """Placeholders: fixed ones from the dict, random numbers drawn per use."""

    def __init__(self, fixed: dict[str, Any], rng: random.Random) -> None:
        super().__init__(fixed)
        self.rng = rng

    def __missing__(self, key: str) -> str:
        draws = {
            "n": lambda: str(self.rng.randint(1000, 99999)),
            "n2": lambda: str(self.rng.randint(1, 199)),
            "n3": lambda: str(self.rng.randint(100, 999)),
            "n5": lambda: str(self.rng.randint(10000, 99999)),
            "hex": lambda: f"{self.rng.getrandbits(32):08x}",
            "port": lambda: str(self.rng.randint(32768, 60999)),
        }
        if key not in draws:
            raise KeyError(key)
        return draws[key]()


class Filler:
    """Fills templates for the services of one system."""

    def __init__(self, system: System, rng: random.Random) -> None:
        self.system = system
        self.rng = rng
        self._fixed: dict[tuple[str, str | None], dict[str, Any]] = {}

    def _own(self, name: str) -> dict[str, Any]:
        service = self.system.service(name)
        addr = service_address(self.system, name)
        infra = [d for d in service.deps if self.system.service(d).kind != "app"]
        target = infra[0] if infra else (service.deps[0] if service.deps else name)
        return {
            "svc": name,
            "host": host(self.system, name),
            "addr": addr,
            "ip": addr.split(":")[0],
            "path": service.path,
            "describe": service.describe[0],
            "ext": service.external.split(":")[0] or "api.partner.example",
            "pkg": f"com.{self.system.key}.{name.replace('-', '')}",
            "cls": camel(name.split("-")[0]),
            "meth": "handle",
            "user": f"{name.replace('-', '_')}_rw",
            "db": target.removeprefix("pg-").split("-")[0],
            "fqdn": fqdn(self.system, target),
            "dns": DNS_ADDRESS,
            "ver_old": f"{3 + len(name) % 4}.{len(name) % 9 + 10}.2",
            "ver_new": f"{3 + len(name) % 4}.{len(name) % 9 + 11}.0",
        }

    def values(self, name: str, upstream: str | None, extra: dict[str, Any]) -> _Random:
        """Every fixed placeholder for ``name`` with ``upstream`` as its dependency."""
        key = (name, upstream)
        if key not in self._fixed:
            fixed = self._own(name)
            dep = upstream or str(fixed["fqdn"]).split(".")[0]
            dep_addr = service_address(self.system, dep)
            self._fixed[key] = fixed | {
                "dep": dep,
                "dep_host": host(self.system, dep),
                "dep_addr": dep_addr,
                "dep_ip": dep_addr.split(":")[0],
                "dep_path": self.system.service(dep).path,
                "table": "events",
                "bucket": "events",
            }
        return _Random(self._fixed[key] | extra, self.rng)

    def fill(self, template: str, name: str, upstream: str | None = None, **extra: Any) -> str:
        """``template`` with every placeholder filled for ``name``."""
        return string.Formatter().vformat(template, (), self.values(name, upstream, extra))


def jwt_times(moment: datetime) -> dict[str, str]:
    """``{iat}`` (the skewed issuer's clock, ahead) and ``{now}`` for a verifier's message."""
    iat = moment + timedelta(seconds=94.8)
    return {"iat": f"{iat:%Y-%m-%dT%H:%M:%SZ}", "now": f"{moment:%Y-%m-%dT%H:%M:%SZ}"}
