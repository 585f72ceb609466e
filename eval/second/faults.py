"""How a fault is described: what it does to each service's signals and what they log.

A ``Fault`` is a mechanism (DNS failure, a lock held by a batch job, ...). When a world uses it,
``bind`` picks its services from the system's topology: the **culprit** (where it starts), an
optional **resource** it acts through (the database a batch job locks, the object store it
saturates), and the **victims** (callers, one or two hops up, ending at the edge when the edge
calls them). Each gets ``Effect``s on its metrics and ``Line``s in its logs. Victim lines name
their upstream the way real clients do: its host name, its address, an error that quotes it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from eval.second.catalog import Service, System

#: A leak fills its heap and is OOM-killed this many minutes after it starts, then again and
#: again; its callers fail at each kill.
LEAK_MINUTES = 42

#: Two stack frames of a Java exception, under its first line.
JAVA_FRAMES = (
    "\n\tat {pkg}.{cls}.{meth}({cls}.java:{n3})"
    "\n\tat {pkg}.web.{cls}Controller.handle({cls}Controller.java:57)"
)


@dataclass(frozen=True)
class Effect:
    """A change of one metric role: to ``value`` (times the baseline unless ``absolute``)."""

    role: str
    value: float
    #: step/ramp: to ``value`` over ``minutes``; saw: a leak climbing to ``value`` and killed every
    #: ``minutes``; kills: +``value`` at each kill; spikes: ``value`` for 2 minutes after each
    #: kill; bump: +``value`` once (a deploy's generation).
    shape: str = "step"
    absolute: bool = False
    minutes: float = 2.0  # how long the change takes to reach ``value``
    when: str = ""  # only when the culprit is of this kind (edge, app)


@dataclass(frozen=True)
class Line:
    """A log line of the fault: once at the onset (``per_min`` 0) or repeated while it lasts.

    ``text`` is one template or a template per tech (``java``, ``go``, ``node``, ..., ``*``).
    ``after`` delays the first line (minutes after the service's own onset); ``per_min`` below
    zero means once at each OOM kill of a leak. In PostgreSQL lines a ``|`` separates the
    message from its DETAIL.
    """

    level: str
    text: str | dict[str, str]
    per_min: float = 0.0
    after: float = 0.0
    when: str = ""  # only when the culprit is of this kind (edge, app)

    def template(self, *keys: str) -> str | None:
        """The first template of ``keys`` (a variant, then the tech), else ``*``, else None."""
        if isinstance(self.text, str):
            return self.text
        found = [self.text[k] for k in (*keys, "*") if k in self.text]
        return found[0] if found else None


@dataclass(frozen=True)
class Fault:
    """A mechanism: where it can start, what it changes, what it logs, how it is named."""

    key: str
    #: Words any competent write-up uses for it (English and Chinese), or its log line quoted.
    words: str
    culprit_kinds: tuple[str, ...]
    culprit: tuple[Effect, ...]
    victim: tuple[Effect, ...]
    culprit_lines: tuple[Line, ...] = ()
    victim_lines: tuple[Line, ...] = ()
    resource: tuple[Effect, ...] = ()
    resource_lines: tuple[Line, ...] = ()
    #: The signals whose before/after are the incident's quantities: (who, role).
    key_roles: tuple[tuple[str, str], ...] = ()
    recovers: bool = False
    needs: str = ""  # what the culprit needs: db, cred, external, issuer, java, callers, store, ...

    def fits(self, system: System, service: Service) -> bool:
        """True when ``service`` can be this fault's culprit."""
        if service.kind not in self.culprit_kinds:
            return False
        kinds = {system.service(d).kind for d in service.deps}
        checks = {
            "": True,
            "db": "db" in kinds,
            "external": bool(service.external),
            "issuer": service.issuer,
            "java": service.tech == "java" and "db" in kinds,
            "callers": bool(system.callers(service.name)),
            "store": "store" in kinds,
            "lock": "db" in kinds,
            "cred": "db" in kinds or bool(service.external),
            "config": (service.kind == "app" and bool(system.callers(service.name)))
            or (service.kind == "edge" and system.log_styles == "self_hosted"),
        }
        return checks[self.needs]


@dataclass(frozen=True)
class Binding:
    """The services one incident of a fault involves."""

    culprit: str
    resource: str | None
    victims: tuple[str, ...]  # first hop first; the edge last when it is involved

    @property
    def involved(self) -> tuple[str, ...]:
        """Every service the incident touches."""
        found = [self.culprit, *([self.resource] if self.resource else []), *self.victims]
        return tuple(dict.fromkeys(found))


def _first_hop(system: System, fault: Fault, culprit: Service, resource: str | None) -> list[str]:
    """Services that feel the fault first."""
    if fault.key == "dns_failure":
        return [s.name for s in system.of_kind("app") if s.deps]
    if culprit.kind == "edge":
        return [d for d in culprit.deps if system.service(d).kind == "app"]
    return [s.name for s in system.callers(resource or culprit.name) if s.kind == "app"]


def _victims(
    system: System,
    fault: Fault,
    culprit: Service,
    resource: str | None,
    busy: set[str],
    rng: random.Random,
) -> tuple[str, ...]:
    """First-hop victims (two for DNS), one caller of the first, then the edge in front."""
    free = [n for n in _first_hop(system, fault, culprit, resource) if n not in busy]
    chain = rng.sample(free, min(len(free), 2 if fault.key == "dns_failure" else 1))
    if chain and culprit.kind != "edge":
        callers = [s.name for s in system.callers(chain[0]) if s.kind == "app"]
        chain += [n for n in callers if n not in busy and n not in chain][:1]
    edges = [s for s in system.of_kind("edge") if s.name != culprit.name]
    front = [culprit.name, *chain]
    edge = next((e.name for e in edges if set(e.deps) & set(front)), None)
    return tuple(chain + ([edge] if edge else []))


def bind(fault: Fault, system: System, busy: set[str], rng: random.Random) -> Binding:
    """Services for one incident of ``fault``, avoiding the ``busy`` ones (except the edge)."""
    candidates = [s for s in system.services if s.name not in busy and fault.fits(system, s)]
    if not candidates:
        raise ValueError(f"no service of {system.key} fits {fault.key}")
    culprit = rng.choice(candidates)
    resource = None
    if fault.resource:
        resource = next(d for d in culprit.deps if system.service(d).kind in ("db", "store"))
    victims = _victims(system, fault, culprit, resource, busy | {culprit.name}, rng)
    return Binding(culprit.name, resource, victims)
