"""A world of the second generator: one system, four incidents, noisy healthy services.

Per seed: the system (the four domains in turn), the date, four faults (a rotation through the
thirteen mechanisms, so four worlds use every one) and when they happen:

* ``early`` - starts between 09:05 and 09:50 and is still going at noon, so a question about
  "the last hour" lies inside it;
* ``first``/``second`` - two unrelated incidents starting 3-8 minutes apart around 10:40;
* ``recovered`` - between 07:20 and 08:20, over after 20-35 minutes.

The data runs 06:00-12:00 UTC at one point a minute; "now" is 12:00. Traffic climbs through
the morning (x1.8), so every count that follows it rises. Healthy services carry the noise a
real system has: a warning logged at the same rate all morning, a low-severity alert that
flaps, a deploy that changed nothing.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from eval.second.catalog import System
from eval.second.faults import LEAK_MINUTES, Binding, Fault, bind
from eval.second.mechanisms import FAULTS
from eval.second.systems import SYSTEMS

STEP_SECONDS = 60
HOURS = 6
SLOTS = {"early": ("09:05", "09:50"), "first": ("10:28", "10:45"), "recovered": ("07:20", "08:20")}
#: The rotation: any four in a row include one that can recover.
ORDER = (
    "dns_failure",
    "fd_exhaustion",
    "clock_skew",
    "connection_leak",
    "lock_by_batch",
    "memory_leak",
    "replica_lag",
    "credentials",
    "storage_saturation",
    "bad_deploy",
    "config_push",
    "network_partition",
    "rate_limited",
)


@dataclass(frozen=True)
class Incident:
    """One fault in one world, with its services and times."""

    slot: str
    fault: Fault
    binding: Binding
    onset: datetime
    end: datetime | None
    delays: tuple[float, ...]  # minutes from the onset to each victim's own onset

    def onset_of(self, service: str) -> datetime:
        """When ``service`` starts to feel it (the culprit and the resource first)."""
        if service in self.binding.victims:
            minutes = self.delays[self.binding.victims.index(service)]
            return self.onset + timedelta(minutes=minutes)
        return self.onset


@dataclass
class World:
    """Everything the writer, the questions and the scorer need about one world."""

    seed: int
    system: System
    start: datetime
    end: datetime
    incidents: list[Incident]
    healthy: list[str]
    noise: dict[str, str] = field(default_factory=dict)  # role -> service
    noop_deploy: datetime | None = None

    @property
    def label(self) -> str:
        """The fixture label: ``s<seed>-<system>``."""
        return f"s{self.seed}-{self.system.key}"

    def minutes(self) -> int:
        """Points per series."""
        return int((self.end - self.start).total_seconds()) // STEP_SECONDS + 1

    def at(self, index: int) -> datetime:
        """The time of point ``index``."""
        return self.start + timedelta(seconds=STEP_SECONDS * index)


def _when(rng: random.Random, day: datetime, lo: str, hi: str) -> datetime:
    """A time between ``lo`` and ``hi`` (HH:MM) off the round minute."""
    start = day + timedelta(hours=int(lo[:2]), minutes=int(lo[3:]))
    span = (int(hi[:2]) - int(lo[:2])) * 60 + int(hi[3:]) - int(lo[3:])
    return start + timedelta(minutes=rng.randrange(span), seconds=rng.choice((10, 25, 40)))


def _delays(fault: Fault, binding: Binding, rng: random.Random) -> tuple[float, ...]:
    delays: list[float] = []
    for _ in binding.victims:
        first = LEAK_MINUTES if fault.key == "memory_leak" else rng.uniform(1.0, 2.5)
        delays.append(delays[-1] + rng.uniform(0.5, 1.5) if delays else first)
    return tuple(round(d, 2) for d in delays)


def _faults(index: int) -> list[Fault]:
    keys = [ORDER[(index * 4 + j) % len(ORDER)] for j in range(4)]
    recovered = next(k for k in keys if FAULTS[k].recovers)
    keys.remove(recovered)
    return [FAULTS[k] for k in (*keys, recovered)]


def _bindings(system: System, faults: list[Fault], rng: random.Random) -> dict[str, Binding]:
    """Services for each fault, the pickiest first, no two incidents sharing one (but the edge)."""

    def choices(fault: Fault) -> int:
        """How many services could be this fault's culprit."""
        return sum(fault.fits(system, s) for s in system.services)

    edges = {s.name for s in system.of_kind("edge")}
    busy: set[str] = set()
    found = {}
    for fault in sorted(faults, key=choices):
        found[fault.key] = bind(fault, system, busy, rng)
        busy |= set(found[fault.key].involved) - edges
    return found


def _incidents(
    system: System, faults: list[Fault], day: datetime, rng: random.Random
) -> list[Incident]:
    bindings = _bindings(system, faults, rng)
    found: list[Incident] = []
    for fault, slot in zip(faults, ("early", "first", "second", "recovered"), strict=True):
        if slot == "second":
            onset = found[-1].onset + timedelta(minutes=rng.randint(3, 8), seconds=35)
        else:
            onset = _when(rng, day, *SLOTS[slot])
        end = onset + timedelta(minutes=rng.randint(20, 35)) if slot == "recovered" else None
        binding = bindings[fault.key]
        found.append(Incident(slot, fault, binding, onset, end, _delays(fault, binding, rng)))
    return found


def build_world(seed: int) -> World:
    """The world of ``seed`` (deterministic)."""
    rng = random.Random(seed * 7919)
    system = SYSTEMS[(seed - 1) % len(SYSTEMS)]
    day = datetime(2027, 3, 8 + seed % 20, tzinfo=timezone.utc)
    incidents = _incidents(system, _faults(seed - 1), day, rng)
    involved = {name for i in incidents for name in i.binding.involved}
    sources = {n for i in incidents for n in (i.binding.culprit, i.binding.resource) if n}
    healthy = [
        s.name
        for s in system.services
        if s.kind == "app" and s.name not in involved and not sources & set(s.deps)
    ]
    roles = ("steady_warning", "flapping_alert", "noop_deploy", "traffic")
    noise = {role: healthy[i % len(healthy)] for i, role in enumerate(roles)}
    return World(
        seed,
        system,
        day + timedelta(hours=6),
        day + timedelta(hours=6 + HOURS),
        incidents,
        healthy,
        noise,
        _when(rng, day, "10:10", "10:25"),
    )
