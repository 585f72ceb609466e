"""The questions asked of a world, as on-call people ask them, in English and Chinese.

Kinds (the report's rows):

* ``named`` - names the culprit or a victim ("Why is menu-api failing since 10:45?");
* ``business`` - says what users see ("couriers can't log in since about 9:40");
* ``symptom`` - names nothing ("what broke around 8:00?");
* ``chinese`` - either of the above in Chinese, times as ``10点40分`` or ``北京时间``;
* ``in_incident`` - a window that lies inside an incident that began two hours before it;
* ``state`` - "what is eating its CPU?", "is it a memory leak?", "should we roll it back?";
* ``concurrent`` - two unrelated incidents at once, asked about system-wide;
* ``healthy`` - services with nothing wrong, the noisy ones included (a steady warning, a
  flapping alert, a no-op deploy, counts that follow traffic);
* ``point_value`` - "what was <metric> of <service> at 10:52?";
* ``out_of_range`` - yesterday, or before the data starts.

Times people give are when they noticed: a few minutes after the service they use started to
fail, rounded down to five minutes, sometimes in CET or Beijing time.
"""

from __future__ import annotations

import random
from datetime import timedelta

from eval.second.cases import Case, Expect, clock, noticed, zh_clock
from eval.second.signals import Series
from eval.second.templates import camel
from eval.second.truth import Truth
from eval.second.world import Incident, World

_STATE = {
    "bad_deploy": ("What is eating the CPU on {svc}?", "Should we roll back {svc}?"),
    "memory_leak": ("Is {svc} leaking memory?", "What is eating the CPU on {svc}?"),
}


class Asker:
    """Builds the cases of one world."""

    def __init__(
        self, world: World, truths: dict[str, Truth], series: dict[str, dict[str, Series]]
    ) -> None:
        self.world, self.truths, self.series = world, truths, series
        self.rng = random.Random(world.seed * 31337)
        self.cases: list[Case] = []

    def add(self, kind: str, turns: tuple[str, ...] | str, expect: Expect) -> None:
        """Append a case."""
        asked = (turns,) if isinstance(turns, str) else turns
        number = f"{self.world.label}-{len(self.cases) + 1:02d}"
        self.cases.append(Case(number, self.world.label, kind, asked, expect))

    def incident(self, incidents: list[Incident], asked: str = "", zone: int = 0) -> Expect:
        """An incident expectation: every culprit of ``incidents`` must be named."""
        truths = tuple(self.truths[i.slot] for i in incidents)
        allowed = tuple(dict.fromkeys(n for t in truths for n in (*t.involved, asked) if n))
        return Expect("incident", truths, asked, zone, allowed=allowed)

    def front(self, incident: Incident) -> str:
        """The user-facing service of an incident (a victim before the culprit), or ''."""
        chain = [*incident.binding.victims, incident.binding.culprit]
        return next((n for n in chain if self.world.system.service(n).user_facing), "")

    def victim(self, incident: Incident) -> str:
        """The first application that feels it (the culprit when none does)."""
        apps = [n for n in incident.binding.victims if self.world.system.service(n).kind != "edge"]
        return apps[0] if apps else incident.binding.culprit

    def pick(self, *options: str) -> str:
        """One of ``options``."""
        return self.rng.choice(options)


def _says(asker: Asker, name: str) -> tuple[str, str]:
    says = asker.world.system.service(name).says
    return says[0][0].upper() + says[0][1:], says[1]


def _ask_business(asker: Asker, incident: Incident, front: str, chinese: bool) -> None:
    """What users of ``front`` see, in English and (when ``chinese``) in Chinese."""
    english, words = _says(asker, front)
    when = noticed(incident, front, asker.rng)
    lower = english[0].lower() + english[1:]
    asker.add(
        "business",
        asker.pick(
            f"{english} since about {clock(when)}",
            f"Since {clock(when, 'am')} {lower}. What happened?",
        ),
        asker.incident([incident], front),
    )
    if chinese:
        beijing = asker.rng.random() < 0.5
        question = (
            f"{zh_clock(when, beijing=True)}开始{words}"
            if beijing
            else f"{words},从{zh_clock(when)}开始的,帮忙看看"
        )
        asker.add("chinese", question, asker.incident([incident], front, 480 if beijing else 0))


def ask_incident(asker: Asker, incident: Incident, chinese: int) -> None:
    """Named, business and Chinese questions about one incident."""
    culprit, victim, front = incident.binding.culprit, asker.victim(incident), asker.front(incident)
    seen = noticed(incident, victim, asker.rng)
    asker.add(
        "named",
        asker.pick(
            f"Why is {victim} failing since {clock(seen)}?",
            f"{victim} has been throwing errors since about {clock(seen, 'am')}, why?",
        ),
        asker.incident([incident], victim),
    )
    if culprit != victim and asker.world.system.service(culprit).kind == "app":
        question = f"{culprit} looks unhealthy since {clock(seen, 'CET')} - what is the root cause?"
        asker.add("named", question, asker.incident([incident], culprit, 60))
    if front:
        _ask_business(asker, incident, front, chinese > 0)
    if chinese > 1 or not front:
        question = f"{victim}从{zh_clock(seen)}开始报错,是什么原因?"
        asker.add("chinese", question, asker.incident([incident], victim))


def ask_symptom(asker: Asker, incident: Incident) -> None:
    """Questions that name nothing, around one incident's onset."""
    seen = noticed(incident, asker.victim(incident), asker.rng)
    expect = asker.incident([incident])
    asker.add(
        "symptom",
        asker.pick(
            f"What broke around {clock(seen)}?",
            f"We got paged at {clock(seen, 'am')}. What is the cause?",
        ),
        expect,
    )
    asker.add("chinese", f"{zh_clock(seen)}左右出了什么问题?", expect)


def ask_inside(asker: Asker, incident: Incident) -> None:
    """Windows that lie inside an incident that began long before them."""
    culprit, front = incident.binding.culprit, asker.front(incident) or asker.victim(incident)
    asker.add(
        "in_incident",
        f"Is {culprit} healthy in the last hour?",
        asker.incident([incident], culprit),
    )
    asker.add(
        "in_incident",
        f"What's wrong with {front} in the last 30 minutes?",
        asker.incident([incident], front),
    )
    asker.add("in_incident", f"{culprit}最近一小时正常吗?", asker.incident([incident], culprit))


def ask_state(asker: Asker, incident: Incident) -> None:
    """What-is-it questions about a service's state."""
    culprit = incident.binding.culprit
    for question in _STATE.get(incident.fault.key, ()):
        asker.add("state", question.format(svc=culprit), asker.incident([incident], culprit))
    if asker.world.system.service(culprit).kind == "app" and incident.fault.key != "bad_deploy":
        seen = noticed(incident, culprit, asker.rng)
        turns = (f"Is {culprit} ok since {clock(seen)}?", "Should we roll it back?")
        asker.add("state", turns, asker.incident([incident], culprit))


def ask_concurrent(asker: Asker, first: Incident, second: Incident) -> None:
    """Two unrelated incidents a few minutes apart, asked about system-wide."""
    seen = noticed(second, asker.victim(second), asker.rng)
    expect = asker.incident([first, second])
    asker.add("concurrent", f"What broke around {clock(seen)}?", expect)
    asker.add(
        "concurrent", f"Several alerts fired around {clock(seen, 'am')} - what is going on?", expect
    )
    asker.add("concurrent", f"{zh_clock(seen)}左右好几个告警,出了什么问题?", expect)


def ask_healthy(asker: Asker) -> None:
    """The noisy healthy services, and a quiet one, in both languages."""
    world = asker.world
    noise = world.noise
    steady, flapping, busy = noise["steady_warning"], noise["flapping_alert"], noise["traffic"]
    involved = {n for i in world.incidents for n in i.binding.involved}
    quiet = [s.name for s in world.system.services if s.kind in ("db", "cache")]
    questions = [
        (steady, f"{steady} has been logging warnings all morning - is it broken?"),
        (
            flapping,
            f"{camel(flapping)}LatencyP99Elevated keeps firing for {flapping}. Real problem?",
        ),
        (busy, f"{busy} is handling almost twice the requests it had at 7am - is it overloaded?"),
        (world.healthy[-1], f"{world.healthy[-1]}正常吗?"),
        *[(name, f"Is {name} ok?") for name in quiet if name not in involved][:1],
    ]
    for name, question in questions:
        asker.add("healthy", question, Expect("healthy", service=name))
    if world.noop_deploy:
        deployed = noise["noop_deploy"]
        question = f"We deployed {deployed} at {clock(world.noop_deploy)}. Should we roll it back?"
        asker.add("state", question, Expect("healthy", service=deployed))


def ask_value(asker: Asker, incident: Incident, healthy: str) -> None:
    """Point values: a culprit's key signal inside its incident, a healthy service's latency."""
    world = asker.world
    culprit = incident.binding.culprit
    role = next(
        (
            r
            for who, r in incident.fault.key_roles
            if who == "culprit" and r in asker.series[culprit]
        ),
        "",
    )
    targets = (
        [(culprit, role, incident.onset + timedelta(minutes=asker.rng.randint(9, 20)))]
        if role
        else []
    )
    targets.append(
        (healthy, "latency", world.start + timedelta(hours=4, minutes=asker.rng.randint(1, 50)))
    )
    for number, (name, which, moment) in enumerate(targets):
        series = asker.series[name][which]
        moment = moment.replace(second=0)
        index = int((moment - world.start).total_seconds()) // 60
        expect = Expect(
            "value",
            service=name,
            metric=series.name,
            unit=series.metric.unit,
            values=tuple(series.values[index - 1 : index + 2]),
        )
        question = (
            f"What was {series.name} of {name} at {clock(moment)}?"
            if number == 0
            else f"{name}的{series.name}在{zh_clock(moment)}是多少?"
        )
        asker.add("point_value", question, expect)


def ask_out_of_range(asker: Asker, names: list[str]) -> None:
    """Windows the data does not cover: yesterday, and before it starts today."""
    first, second = names[0], names[-1]
    asker.add(
        "out_of_range",
        f"What happened to {first} yesterday at 14:00?",
        Expect("out_of_range", service=first),
    )
    asker.add(
        "out_of_range", f"{second}昨天下午2点有异常吗?", Expect("out_of_range", service=second)
    )
    asker.add(
        "out_of_range",
        f"Was {first} ok at 3:00 this morning?",
        Expect("out_of_range", service=first),
    )


def world_cases(
    world: World, truths: dict[str, Truth], series: dict[str, dict[str, Series]]
) -> list[Case]:
    """Every case of ``world``."""
    asker = Asker(world, truths, series)
    slots = {i.slot: i for i in world.incidents}
    early, first, second, recovered = (slots[k] for k in ("early", "first", "second", "recovered"))
    ask_incident(asker, early, chinese=2)
    ask_symptom(asker, early)
    ask_inside(asker, early)
    for incident in (first, second):
        ask_incident(asker, incident, chinese=1)
    ask_incident(asker, recovered, chinese=1)
    ask_symptom(asker, recovered)
    for incident in world.incidents:
        ask_state(asker, incident)
    ask_concurrent(asker, first, second)
    ask_healthy(asker)
    ask_value(asker, first, world.healthy[0])
    ask_out_of_range(asker, [first.binding.culprit, world.healthy[0]])
    return asker.cases
