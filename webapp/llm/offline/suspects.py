"""Which services a system-wide question is about: the suspects ``triage`` ranked.

``picked`` chooses the incident nearest the stated time (and one more that began about then),
only those of a service the question describes when it describes one; ``route`` gives the
suspects from a named service to its incident's leader.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from ...analysis.triage import QUIET_SEVERITIES
from .causes import Item, Match, classify, own_kind
from .conversation import Done, call
from .question import iso, parse_time

TRIAGE = "triage"
NEAR_BEFORE = timedelta(minutes=30)
NEAR_AFTER = timedelta(minutes=15)
#: A second incident is answered too when its onset is this close to the time asked about.
TOGETHER = timedelta(minutes=15)
MAX_INCIDENTS = 2


def triage_output(done: Sequence[Done]) -> Mapping[str, Any] | None:
    """The last successful ``triage`` output of the conversation."""
    found = [d.result for d in done if d.tool == TRIAGE and isinstance(d.result, Mapping)]
    return found[-1] if found else None


def picked(done: Sequence[Done], stated: datetime | None) -> list[str]:
    """The services to investigate, in order: of each incident chosen, the described suspects,
    the leader and (alone) a witness."""
    incidents: dict[object, list[Mapping[str, Any]]] = {}
    for suspect in (triage_output(done) or {}).get("suspects") or []:
        # one tied by timing alone that shows a cause of its own is an incident of its own
        key = suspect["service"] if _separate(suspect) else int(suspect.get("incident") or 0)
        incidents.setdefault(key, []).append(suspect)
    near = sorted(
        (m for m in incidents.values() if _nearest(m, stated) is not None),
        key=lambda m: _nearest(m, stated) or timedelta(0),
    )
    candidates = [m for m in near if any(s.get("described") for s in m)] or near
    # The incident nearest the time asked about, and one more that began about then too.
    chosen = [
        m
        for n, m in enumerate(candidates)
        if n == 0 or (stated is None or (_nearest(m, stated) or NEAR_AFTER) < TOGETHER)
    ][:MAX_INCIDENTS]
    services: list[str] = []
    for members in chosen:
        services += [str(s["service"]) for s in members if s.get("described")]
        services.append(str(members[0]["service"]))
        # one incident's witness fits the tool budget; two incidents take it from their leaders
        services += _witness(members) if len(chosen) == 1 else []
    return list(dict.fromkeys(services))


def _separate(suspect: Mapping[str, Any]) -> bool:
    """Whether ``suspect``, tied to its incident by timing alone, shows a cause of its own."""
    links = suspect.get("links") or []
    return bool(links) and all(k.get("how") == "timing" for k in links) and own_kind(_own(suspect))


def _own(suspect: Mapping[str, Any]) -> Match | None:
    """The cause kind a suspect's own signals and new templates show."""
    items = [Item("metric", str(m), True) for m in suspect.get("signals") or []]
    items += [Item("log", str(t), True) for t in suspect.get("new_log_templates") or []]
    return classify(items)


def _witness(members: Sequence[Mapping[str, Any]]) -> list[str]:
    """The first suspect whose lines name the leader, when the leader's own evidence shows no
    cause kind: the service it hurt says how."""
    leader = members[0]
    if _own(leader) is not None:
        return []
    named = [
        str(s["service"])
        for s in members[1:]
        if any(k.get("to") == leader["service"] and k.get("how") == "log" for k in s["links"])
    ]
    return named[:1]


def picked_alerts(done: Sequence[Done], stated: datetime | None) -> set[tuple[str, str]]:
    """``(alert name, service)`` of the alerts triage found on the picked services."""
    chosen = set(picked(done, stated))
    return {
        (str(alert.get("alert_name")), str(suspect["service"]))
        for suspect in (triage_output(done) or {}).get("suspects") or []
        if suspect.get("service") in chosen
        for alert in suspect.get("alerts") or []
    }


def _nearest(members: Sequence[Mapping[str, Any]], stated: datetime | None) -> timedelta | None:
    """How far an incident's leader's onset or loud alerts are from the stated time (None: not
    near)."""
    moments = [str(members[0].get("onset") or "")]
    moments += [
        str(alert.get("active_at") or "")
        for member in members
        for alert in member.get("alerts") or []
        if alert.get("severity") not in QUIET_SEVERITIES
    ]
    found = [d for d in (_distance(m, stated) for m in moments) if d is not None]
    return min(found, default=None)


def _distance(moment: str, stated: datetime | None) -> timedelta | None:
    """How far ``moment`` is from the stated time (None: not near it)."""
    onset = parse_time(moment)
    if onset is None or stated is None:
        return None if onset is None else timedelta(0)
    return abs(onset - stated) if stated - NEAR_BEFORE <= onset <= stated + NEAR_AFTER else None


def analysed_window(done: Sequence[Done]) -> dict[str, str]:
    """The range ``triage`` analysed each service over (its detect_anomalies window)."""
    window = (triage_output(done) or {}).get("window") or {}
    if not window.get("analysed_start") or not window.get("end"):
        return {}
    return {"start": str(window["analysed_start"]), "end": str(window["end"])}


def route(done: Sequence[Done], service: str) -> list[str]:
    """The suspects from ``service`` to the leader of its incident, along triage's links (empty
    when it leads, or triage did not find it)."""
    listed = (triage_output(done) or {}).get("suspects") or []
    suspects = {str(s.get("service")): s for s in listed}
    own = suspects.get(service)
    if own is None:
        return []
    incident = own.get("incident")
    members = [s for s in suspects.values() if s.get("incident") == incident]
    leader = str(members[0].get("service"))
    paths: dict[str, list[str]] = {service: []}
    frontier = [service]
    while frontier and leader not in paths:
        current = frontier.pop(0)
        for link in suspects[current].get("links") or []:
            other = str(link.get("to"))
            if other in suspects and other not in paths:
                paths[other] = [*paths[current], other]
                frontier.append(other)
    return paths.get(leader, [])


def triage_call(start: datetime, end: str | None) -> dict[str, Any]:
    """A ``triage`` call from ``start`` (less ``NEAR_BEFORE``: a cause begins first) on."""
    return call(TRIAGE, start=iso(start - NEAR_BEFORE), **({"end": end} if end else {}))
