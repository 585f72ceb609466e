"""Question sets of a world, each with its expected outcome.

Kinds: ``direct``, ``paraphrase``, ``time`` (10am, CET, last N minutes, ISO, ranges),
``chinese``, ``misspelling``, ``follow_up`` (two turns; the second says "it", "its database",
"它"), ``healthy``, ``unknown_service``, ``alerts`` and ``two_services``. Times are written a few
minutes before the onset (never on it), in the zone the wording names; a time without a zone is
UTC, the product's default.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from eval.families import FAMILIES
from eval.names import misspell
from eval.world import Incident, World

KINDS = (
    "direct",
    "paraphrase",
    "time",
    "chinese",
    "misspelling",
    "follow_up",
    "healthy",
    "unknown_service",
    "alerts",
    "two_services",
)


@dataclass(frozen=True)
class Expected:
    """What a correct answer says.

    ``incident``: every ``(culprit, family)`` of ``causes`` is named with its cause category and
    nothing is called healthy; ``healthy``: ``service`` is said to be fine; ``unknown``:
    ``service`` is said to be unknown; ``alerts``: every name in ``alerts`` is listed.
    """

    outcome: str
    causes: tuple[tuple[str, str], ...] = ()
    service: str | None = None
    alerts: tuple[str, ...] = ()

    @property
    def family(self) -> str:
        """The table row: the incident family, or the outcome for the other kinds."""
        if self.outcome == "incident":
            return self.causes[0][1] if len(self.causes) == 1 else "several"
        return self.outcome


@dataclass(frozen=True)
class Case:
    """One question (or conversation) and its expected outcome."""

    id: str
    world: str
    kind: str
    turns: tuple[str, ...]
    expected: Expected
    history: tuple[tuple[str, str], ...] = ()  # earlier (role, content) turns, not re-asked


_EN = {
    "slow": ("slow", "sluggish", "taking forever to respond", "slower than usual"),
    "errors": ("throwing errors", "failing requests", "returning 5xx", "erroring"),
    "delayed": ("lagging behind", "processing late", "falling behind"),
}
_ZH = {"slow": "变慢", "errors": "报错", "delayed": "处理延迟"}
_PARAPHRASES = (
    "{name} is {symptom}",
    "p99 on {name} went up {when}, what happened?",
    "users are complaining that {name} is {symptom}",
    "{name}",
    "something is off with {name} {when}",
    "can you check {name}? it's {symptom}",
)


def _zone(moment: datetime, hours: int) -> datetime:
    return moment.astimezone(timezone(timedelta(hours=hours)))


def _ampm(moment: datetime) -> str:
    hour = moment.hour % 12 or 12
    return f"{hour}{'am' if moment.hour < 12 else 'pm'}"


class _Writer:
    """Builds the cases of one world."""

    def __init__(self, world: World, label: str) -> None:
        self.world = world
        self.label = label
        self.rng = random.Random(f"eval-questions:{world.seed}")
        self.cases: list[Case] = []

    def add(self, kind: str, turns: tuple[str, ...], expected: Expected) -> None:
        number = len(self.cases) + 1
        self.cases.append(Case(f"{self.label}-{number:03d}", self.label, kind, turns, expected))

    def before(self, incident: Incident) -> datetime:
        """A time 2-6 minutes before the onset, whole minutes, never on :00."""
        moment = self.world.onset(incident) - timedelta(minutes=self.rng.randint(2, 6))
        moment = moment.replace(second=0)
        return moment if moment.minute else moment - timedelta(minutes=1)

    def times(self, incident: Incident) -> list[tuple[str, str]]:
        """``(format, phrase)`` pairs that all cover the onset."""
        at = self.before(incident)
        end = self.world.end
        minutes = (end - at).total_seconds() / 60
        last = int(minutes // 5 * 5 + 10)
        phrases = [
            ("ampm", f"since {_ampm(at)}"),
            ("cet", f"since {_zone(at, 1):%H:%M} CET"),
            ("last", f"in the last {last} minutes"),
            ("iso", f"since {at:%Y-%m-%dT%H:%M:%S}Z"),
            ("offset", f"since {_zone(at, 8):%Y-%m-%dT%H:%M}+08:00"),
            ("range", f"between {at:%H:%M} and {end:%H:%M}"),
            ("ago", f"starting about {int(minutes) // 5 * 5 + 5} minutes ago"),
        ]
        if end.hour < 12 and at.hour >= 5:
            phrases.append(("morning", "this morning"))
        return phrases


def _expect(incident: Incident) -> Expected:
    return Expected("incident", ((incident.culprit, incident.family),))


def _incident_cases(w: _Writer, incident: Incident) -> None:
    world, rng = w.world, w.rng
    victim = world.services[incident.victim]
    family = FAMILIES[incident.family]
    symptom = rng.choice(_EN[family.symptom])
    at = w.before(incident)
    expected = _expect(incident)
    w.add("direct", (f"Why is {victim.name} {symptom} since {at:%H:%M}?",), expected)
    times = w.times(incident)
    name = rng.choice((victim.name, victim.aliases[-1]))
    # Only a slow service is said to have a worse p99; a failing one may not.
    templates = [t for t in _PARAPHRASES if family.symptom != "errors" or "p99" not in t]
    phrase = rng.choice(templates).format(name=name, symptom=symptom, when=times[0][1])
    w.add("paraphrase", (phrase,), expected)
    for _fmt, when in rng.sample(times, 2):
        w.add("time", (f"{victim.name} is {symptom} {when}",), expected)
    zh = _ZH[family.symptom]
    chinese = rng.choice(
        (
            f"{victim.aliases[0]}为什么从{at.hour}点{at.minute}分开始{zh}?",
            f"{victim.name} 为什么从{at.hour}点开始{zh}?",
            f"{victim.name}{zh}了,帮我看看",
            f"{victim.aliases[0]}最近{int((world.end - at).total_seconds() // 60) + 5}分钟{zh}",
        )
    )
    w.add("chinese", (chinese,), expected)
    typo = misspell(victim.name, rng)
    w.add("misspelling", (f"why is {typo} {symptom} since {at:%H:%M}",), expected)
    first = f"{victim.name} looks unhappy since {at:%H:%M}, can you take a look?"
    if family.culprit == "database":
        second = rng.choice(("and what about its database?", "那它的数据库呢?"))
    else:
        second = rng.choice((f"why is it {symptom}?", f"它为什么{zh}?", "what is causing it?"))
    w.add("follow_up", (first, second), expected)


def _other_cases(w: _Writer, alerts: list[str]) -> None:
    world, rng = w.world, w.rng
    earliest = min(world.incidents, key=lambda i: i.onset_minute)
    at = w.before(earliest)
    for index, name in enumerate(world.healthy[:3]):
        service = world.services[name]
        question = (
            f"Is {name} healthy?",
            f"{service.aliases[0]}正常吗?",
            f"anything wrong with {name} since {at:%H:%M}?",
        )[index % 3]
        w.add("healthy", (question,), Expected("healthy", service=name))
    if world.noop_deploy:
        name, minute = world.noop_deploy
        deployed = world.start + timedelta(minutes=minute)
        question = f"{name} was deployed at {deployed:%H:%M}, did that break anything?"
        w.add("healthy", (question,), Expected("healthy", service=name))
    for index, name in enumerate(world.unknown):
        question = (f"Why is {name} slow?", f"{name} 报错了,帮我看看")[index % 2]
        w.add("unknown_service", (question,), Expected("unknown", service=name))
    for question in ("What alerts are firing right now?", "现在有哪些告警?"):
        w.add("alerts", (question,), Expected("alerts", alerts=tuple(alerts)))
    pairs = [(a, b) for a in world.incidents for b in world.incidents if a.victim < b.victim]
    for first, second in rng.sample(pairs, min(2, len(pairs))):
        question = f"Why are {first.victim} and {second.victim} misbehaving since {at:%H:%M}?"
        causes = ((first.culprit, first.family), (second.culprit, second.family))
        w.add("two_services", (question,), Expected("incident", causes))


def world_cases(world: World, alerts: list[str], minimum: int = 50) -> list[Case]:
    """At least ``minimum`` cases for ``world``: every kind, every incident."""
    w = _Writer(world, f"w{world.seed}")
    for incident in world.incidents:
        _incident_cases(w, incident)
    _other_cases(w, alerts)
    extra = 0
    while len(w.cases) < minimum:
        incident = world.incidents[extra % len(world.incidents)]
        victim = world.services[incident.victim].name
        symptom = w.rng.choice(_EN[FAMILIES[incident.family].symptom])
        _fmt, when = w.rng.choice(w.times(incident))
        w.add("time", (f"{victim} is {symptom} {when}",), _expect(incident))
        extra += 1
    return w.cases
