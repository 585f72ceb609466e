"""A case: the question (or a short conversation) and what a right answer does."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from eval.second.faults import LEAK_MINUTES
from eval.second.truth import Truth
from eval.second.world import Incident


@dataclass(frozen=True)
class Expect:
    """What a right answer does."""

    outcome: str  # incident | healthy | out_of_range | value
    truths: tuple[Truth, ...] = ()
    service: str = ""  # the service asked about
    zone_minutes: int = 0  # the question's zone offset from UTC
    #: A point value: the metric, its unit and the values one step either side of the time.
    metric: str = ""
    unit: str = ""
    values: tuple[float, ...] = ()
    allowed: tuple[str, ...] = ()  # services an answer may name besides the culprits


@dataclass(frozen=True)
class Case:
    """One question (or a short conversation) and its expectation."""

    id: str
    world: str
    kind: str
    turns: tuple[str, ...]
    expect: Expect
    history: tuple[tuple[str, str], ...] = field(default=())


def clock(moment: datetime, zone: str = "") -> str:
    """``9:40``, ``9:40am``, ``10:40 CET``."""
    if zone == "CET":
        moment += timedelta(hours=1)
        return f"{moment:%H:%M} CET"
    if zone == "am":
        return f"{moment.hour % 12 or 12}:{moment:%M}{'am' if moment.hour < 12 else 'pm'}"
    return f"{moment.hour}:{moment:%M}"


def zh_clock(moment: datetime, beijing: bool = False) -> str:
    """``10点40分`` or ``北京时间18点40分``."""
    moment += timedelta(hours=8 if beijing else 0)
    said = f"{moment.hour}点{moment.minute}分" if moment.minute else f"{moment.hour}点"
    return f"北京时间{said}" if beijing else said


def noticed(incident: Incident, name: str, rng: random.Random) -> datetime:
    """When a person noticed ``name`` failing (a leak: its first OOM kill), a few minutes
    later, rounded down to 5."""
    felt = incident.onset_of(name)
    if incident.fault.key == "memory_leak":
        felt = max(felt, incident.onset + timedelta(minutes=LEAK_MINUTES))
    moment = felt + timedelta(minutes=rng.randint(2, 6))
    return moment.replace(minute=moment.minute - moment.minute % 5, second=0)
