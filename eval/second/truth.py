"""Ground truth of a world's incidents, read from the telemetry it writes.

For each incident: the culprit and its declared aliases, the services it involves, the
mechanism, the onsets an answer may give (the culprit's own; for a leak also its first OOM
kill, when callers start to fail), and quantities - for each key signal of the fault and for
the first victim's symptom: the median of the 30 minutes before its own onset (baseline), the
median once the change has settled (plateau) and the extreme while it lasts (peak).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta

from eval.second.faults import LEAK_MINUTES
from eval.second.signals import Series
from eval.second.world import STEP_SECONDS, Incident, World


@dataclass(frozen=True)
class Quantity:
    """Before and after of one signal."""

    service: str
    metric: str
    unit: str
    baseline: float
    plateau: float
    peak: float


@dataclass(frozen=True)
class Truth:
    """What a right answer about one incident says."""

    slot: str
    mechanism: str
    culprit: str
    aliases: tuple[str, ...]
    involved: tuple[str, ...]
    onsets: tuple[datetime, ...]
    quantities: tuple[Quantity, ...]


def _index(world: World, moment: datetime) -> int:
    return min(
        max(0, -(-int((moment - world.start).total_seconds()) // STEP_SECONDS)), world.minutes() - 1
    )


def quantity(world: World, incident: Incident, series: Series, settle: float) -> Quantity:
    """Baseline, plateau and peak of ``series`` around ``incident``."""
    values = series.values
    onset = _index(world, incident.onset_of(series.service))
    stop = _index(world, incident.end) if incident.end else world.minutes()
    before = values[max(0, onset - 30) : onset]
    during = values[onset:stop] or values[onset:]
    settled = values[min(onset + int(settle) + 1, stop - 1) : stop] or during
    baseline, plateau = statistics.median(before), statistics.median(settled)
    peak = max(during) if plateau >= baseline else min(during)
    return Quantity(series.service, series.name, series.metric.unit, baseline, plateau, peak)


def _who(incident: Incident, who: str) -> str | None:
    binding = incident.binding
    if who == "culprit":
        return binding.culprit
    if who == "resource":
        return binding.resource
    return binding.victims[0] if binding.victims else None


def _settle(incident: Incident, role: str) -> float:
    effects = (*incident.fault.culprit, *incident.fault.resource, *incident.fault.victim)
    return max((e.minutes for e in effects if e.role == role and e.shape != "saw"), default=2.0)


def _changes(incident: Incident, who: str, role: str, culprit_kind: str) -> bool:
    """True when the fault changes ``role`` of its ``who`` service in this incident."""
    fault = incident.fault
    effects = {"culprit": fault.culprit, "resource": fault.resource, "victim": fault.victim}[who]
    return any(e.role == role and e.when in ("", culprit_kind) for e in effects)


def truth(world: World, incident: Incident, series: dict[str, dict[str, Series]]) -> Truth:
    """The ground truth of ``incident``."""
    kind = world.system.service(incident.binding.culprit).kind
    roles = [(w, r) for w, r in incident.fault.key_roles if _changes(incident, w, r, kind)]
    symptom = next((n for n in incident.binding.victims if n in series), None)
    if symptom:
        roles.append(("victim", "errors" if "errors" in series[symptom] else "latency"))
    found = []
    for who, role in roles:
        name = _who(incident, who)
        if name and role in series[name]:
            found.append(quantity(world, incident, series[name][role], _settle(incident, role)))
    onsets = [incident.onset]
    if incident.fault.key == "memory_leak":
        onsets.append(incident.onset + timedelta(minutes=LEAK_MINUTES))
    culprit = world.system.service(incident.binding.culprit)
    return Truth(
        incident.slot,
        incident.fault.key,
        culprit.name,
        culprit.aliases,
        incident.binding.involved,
        tuple(onsets),
        tuple(dict.fromkeys(found)),
    )


def world_truths(world: World, series: dict[str, dict[str, Series]]) -> dict[str, Truth]:
    """Every incident's truth, by slot."""
    return {i.slot: truth(world, i, series) for i in world.incidents}
