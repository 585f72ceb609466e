"""A generated world: services, topology, incidents, noise - and its ground truth.

``build_world(seed, families)`` is deterministic: the same seed and families give the same
world, and ``eval.telemetry.write_world`` writes it in the demo dataset's format
(``webapp.demo.files``), so ``DemoTelemetryBackend(folder)`` serves it. The folder holds
telemetry only; the ground truth (which incident is where, what is healthy) stays on the
:class:`World` object.
"""

from __future__ import annotations

import itertools
import random
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from eval.families import FAMILIES, GENERIC_RUNBOOKS
from eval.metrics import Baseline, app_baselines, infra_baselines
from eval.names import Named, NameDrawer

WINDOW_MINUTES = 180
STEP_SECONDS = 60
APP_KINDS = ("app", "worker")


@dataclass
class Service:
    """One service of a world and what it talks to."""

    name: str
    kind: str  # edge, app, worker, database, cache, queue
    domain: str
    aliases: tuple[str, ...]
    deps: list[str] = field(default_factory=list)
    database: str | None = None
    cache: str | None = None
    queue: str | None = None
    jvm: bool = False
    roles: dict[str, Baseline] = field(default_factory=dict)


@dataclass(frozen=True)
class Incident:
    """Ground truth of one incident: where it shows, where it lives, when it starts."""

    id: str
    family: str
    victim: str
    culprit: str
    onset_minute: int
    onset_second: int
    affected: tuple[str, ...]  # every service whose series move (victims first)


@dataclass
class World:
    """Everything generated from one seed."""

    seed: int
    start: datetime
    scheme: str
    services: dict[str, Service]
    incidents: list[Incident] = field(default_factory=list)
    healthy: list[str] = field(default_factory=list)
    noop_deploy: tuple[str, int] | None = None  # (service, minute)
    spiky: str | None = None
    noisy: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)

    @property
    def end(self) -> datetime:
        """The reference time: the end of the window."""
        return self.start + timedelta(minutes=WINDOW_MINUTES)

    def onset(self, incident: Incident) -> datetime:
        """Wall-clock onset of ``incident``."""
        return self.start + timedelta(minutes=incident.onset_minute, seconds=incident.onset_second)

    def apps(self) -> list[Service]:
        """Application services and workers, in creation order."""
        return [s for s in self.services.values() if s.kind in APP_KINDS]


def _window_start(rng: random.Random) -> datetime:
    day = datetime(2026, 1, 5, tzinfo=timezone.utc) + timedelta(days=rng.randint(0, 330))
    return day + timedelta(hours=rng.randint(6, 15), minutes=rng.choice(range(1, 60, 2)))


def _add(world: World, named: Named, kind: str) -> Service:
    service = Service(named.name, kind, named.domain, named.aliases)
    world.services[service.name] = service
    return service


def _topology(world: World, rng: random.Random, drawer: NameDrawer, apps: int) -> None:
    _add(world, drawer.edge(), "edge")
    created = [_add(world, drawer.app(), "app") for _ in range(apps)]
    workers = [_add(world, drawer.worker(), "worker") for _ in range(rng.randint(1, 2))]
    for index, service in enumerate(created):
        later = created[index + 1 :]
        service.deps = [s.name for s in rng.sample(later, min(len(later), rng.randint(0, 2)))]
        service.jvm = rng.random() < 0.5
    owners = rng.sample(created, 3)
    for owner in owners[:2]:
        owner.database = _add(world, drawer.infra("database", owner.domain), "database").name
    owners[2].cache = _add(world, drawer.infra("cache", owners[2].domain), "cache").name
    queue = _add(world, drawer.infra("queue", drawer.spare_domain()), "queue")
    rng.choice(created).queue = queue.name
    for worker in workers:
        worker.queue = queue.name


def _callers(world: World, callee: str) -> list[str]:
    return [s.name for s in world.apps() if callee in s.deps]


def _pick(world: World, rng: random.Random, family: str, used: set[str]) -> tuple[str, str]:
    """``(victim, culprit)`` for ``family`` among services no other incident touches."""
    culprit_kind = FAMILIES[family].culprit
    apps = [s for s in world.apps() if s.kind == "app" and s.name not in used]
    rng.shuffle(apps)
    if culprit_kind == "self":
        return apps[0].name, apps[0].name
    if culprit_kind in ("database", "cache"):
        attr = culprit_kind
        owners = [s for s in apps if getattr(s, attr) and getattr(s, attr) not in used]
        if not owners:
            raise LookupError(f"no free {culprit_kind} for {family}")
        return owners[0].name, str(getattr(owners[0], attr))
    if culprit_kind == "queue":
        workers = [s for s in world.apps() if s.kind == "worker" and s.name not in used]
        if not workers:
            raise LookupError("no free worker")
        return workers[0].name, workers[0].name
    for caller in apps:
        for dep in caller.deps:
            if dep not in used and not set(_callers(world, dep)) & used:
                return caller.name, dep
    apps[0].deps.append(apps[1].name)
    return apps[0].name, apps[1].name


def _onsets(rng: random.Random, world: World, count: int) -> list[int]:
    """Distinct onset minutes, at least 9 apart, never on a :00 or :30 wall-clock minute."""
    for _ in range(1000):
        minutes = sorted(rng.sample(range(40, 166), count))
        spaced = all(b - a >= 9 for a, b in itertools.pairwise(minutes))
        clock = [(world.start + timedelta(minutes=m)).minute % 30 for m in minutes]
        if spaced and 0 not in clock:
            return minutes
    raise RuntimeError("could not place the onsets")


def _incidents(world: World, rng: random.Random, families: list[str]) -> None:
    used: set[str] = set()
    minutes = _onsets(rng, world, len(families))
    rng.shuffle(minutes)
    placed: dict[str, tuple[str, str]] = {}
    # The most constrained families choose their services first.
    for family in sorted(families, key=lambda f: _PRIORITY[FAMILIES[f].culprit]):
        placed[family] = _pick(world, rng, family, used)
        used.update(_affected(world, family, *placed[family]))
    for index, (family, minute) in enumerate(zip(families, minutes, strict=True)):
        victim, culprit = placed[family]
        affected = _affected(world, family, victim, culprit)
        world.incidents.append(
            Incident(f"I{index + 1}", family, victim, culprit, minute, rng.randint(3, 57), affected)
        )


_PRIORITY = {"database": 0, "cache": 0, "queue": 0, "downstream": 1, "self": 2}


def _affected(world: World, family: str, victim: str, culprit: str) -> tuple[str, ...]:
    """Every service whose series move: victims (other callers too), then the culprit."""
    affected = [victim]
    if FAMILIES[family].culprit == "downstream":
        affected = [victim, *(c for c in _callers(world, culprit) if c != victim)]
        world.services[culprit].jvm = world.services[culprit].jvm or family != "cert_expiry"
    if FAMILIES[family].culprit == "queue":
        affected.append(str(world.services[victim].queue))
    elif culprit != victim:
        affected.append(culprit)
    return tuple(affected)


def _noise(world: World, rng: random.Random, drawer: NameDrawer) -> None:
    touched = {name for incident in world.incidents for name in incident.affected}
    near = {c for name in touched for c in _callers(world, name)}
    calm = [s.name for s in world.apps() if s.name not in touched | near]
    world.healthy = calm
    if len(calm) < 2:
        raise LookupError("a world needs at least two healthy services")
    world.noop_deploy = (calm[0], rng.randint(50, 160))
    world.spiky = calm[1] if len(calm) > 2 else None
    world.noisy = rng.sample([s.name for s in world.apps()], 3)
    world.unknown = [drawer.unknown(), drawer.unknown()]


def _baselines(world: World, rng: random.Random) -> None:
    for service in world.services.values():
        if service.kind in APP_KINDS:
            service.roles = app_baselines(
                rng,
                database=service.database is not None,
                cache=service.cache is not None,
                jvm=service.jvm,
                worker=service.kind == "worker",
            )
        elif service.kind == "edge":
            service.roles = app_baselines(rng, database=False, cache=False, jvm=False, worker=False)
        else:
            service.roles = infra_baselines(rng, service.kind)


def build_world(seed: int, families: list[str]) -> World:
    """The world of ``seed`` with one incident per family in ``families`` (distinct keys)."""
    unknown = sorted(set(families) - set(FAMILIES))
    if unknown or len(set(families)) != len(families):
        raise ValueError(f"families must be distinct keys of {sorted(FAMILIES)}: {families}")
    for attempt in range(8):
        # A topology too tight for the families (no free cache, too few healthy services)
        # is redrawn with one more service: still a function of the seed alone.
        try:
            return _attempt(seed, families, attempt)
        except LookupError:
            continue
    raise RuntimeError(f"no world fits seed {seed} and families {families}")


def _attempt(seed: int, families: list[str], attempt: int) -> World:
    suffix = f":{attempt}" if attempt else ""
    rng = random.Random(f"eval-world:{seed}{suffix}")
    drawer = NameDrawer(rng)
    world = World(seed, _window_start(rng), rng.choice(("prom", "short")), {})
    _topology(world, rng, drawer, max(7, 2 * len(families) + 2) + attempt)
    _incidents(world, rng, families)
    _noise(world, rng, drawer)
    _baselines(world, rng)
    return world


def runbooks() -> dict[str, str]:
    """Every world's runbook folder: one per incident family plus generic ones."""
    books = {
        _slug(family.runbook[0]) + ".md": f"# {family.runbook[0]}\n\n{family.runbook[1]}"
        for family in FAMILIES.values()
    }
    books.update({name: f"# {title}\n\n{text}" for name, (title, text) in GENERIC_RUNBOOKS.items()})
    return dict(sorted(books.items()))


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:48]
