"""What each incident's services log, from each one's own onset until it recovers.

The culprit and the resource log the fault's own lines; each victim logs its client-side error
naming its upstream (the culprit, the resource, or the victim before it that it calls). A proxy
that is a victim logs 5xx access lines with the upstream's address (Envoy response flags
``UF``/``UT``); a proxy whose configuration push dropped a route logs 404s (``NR``) for it.
A leak logs its OOM line and a restart at each kill; its callers fail just after each kill.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from eval.second.catalog import Service
from eval.second.chatter import access, every
from eval.second.faults import LEAK_MINUTES, Line
from eval.second.styles import Event
from eval.second.templates import Filler, jwt_times, service_address
from eval.second.world import Incident, World

_TIMEOUTS = frozenset(
    {"lock_by_batch", "storage_saturation", "connection_leak", "network_partition"}
)
#: What a caller of a victim logs: its upstream's error response.
_HOP = (Line("ERROR", "call to {dep} failed: {status} from http://{dep_addr}{dep_path}", 5),)


def upstream_of(world: World, incident: Incident, name: str) -> str | None:
    """The service ``name``'s trouble comes from: the one before it in the chain that it calls."""
    binding = incident.binding
    if name == binding.culprit:
        return (
            binding.resource
            if incident.fault.key in ("lock_by_batch", "storage_saturation")
            else None
        )
    if name == binding.resource:
        return binding.culprit
    chain = [binding.resource or binding.culprit, *binding.victims]
    before = chain[: chain.index(name)]
    deps = world.system.service(name).deps
    return next((n for n in reversed(before) if n in deps), before[-1])


def _stop(world: World, incident: Incident) -> datetime:
    return incident.end or world.end


def _kills(world: World, incident: Incident) -> list[datetime]:
    period = timedelta(minutes=LEAK_MINUTES)
    kills, moment = [], incident.onset + period
    while moment < world.end:
        kills.append(moment)
        moment += period
    return kills


def _times(
    world: World, incident: Incident, line: Line, onset: datetime, rng: random.Random
) -> list[datetime]:
    start = onset + timedelta(minutes=line.after)
    if line.per_min < 0:
        return [
            k + timedelta(minutes=line.after, seconds=rng.uniform(1, 20))
            for k in _kills(world, incident)
        ]
    if line.per_min == 0:
        return [start + timedelta(seconds=rng.uniform(0, 4))] if start < world.end else []
    return list(every(start, _stop(world, incident), line.per_min, rng))


def _lines(
    world: World,
    incident: Incident,
    service: Service,
    lines: tuple[Line, ...],
    filler: Filler,
    rng: random.Random,
    **more: str,
) -> list[Event]:
    variant = (
        "ext"
        if incident.fault.key == "credentials"
        and not any(world.system.service(d).kind == "db" for d in service.deps)
        else ""
    )
    upstream = upstream_of(world, incident, service.name)
    onset = incident.onset_of(service.name)
    culprit = world.system.service(incident.binding.culprit)
    status = "504 Gateway Timeout" if incident.fault.key in _TIMEOUTS else "502 Bad Gateway"
    extra = {
        "table": culprit.table or "events",
        "bucket": culprit.table or "events",
        "status": status,
        **more,
    }
    events = []
    for line in lines:
        if line.when not in ("", culprit.kind):
            continue
        template = line.template(variant, service.tech) if variant else line.template(service.tech)
        if template is None:
            continue
        channel = "host" if template.startswith("chronyd[") else "app"
        for moment in _times(world, incident, line, onset, rng):
            text = filler.fill(template, service.name, upstream, **extra, **jwt_times(moment))
            events.append(Event(moment, service.name, line.level, text, channel=channel))
    return events


def _proxy(world: World, incident: Incident, service: Service, rng: random.Random) -> list[Event]:
    """Access lines of a proxy caught in the incident."""
    binding = incident.binding
    onset, stop = incident.onset_of(service.name), _stop(world, incident)
    if service.name == binding.culprit:  # a pushed route table without one route
        dropped = world.system.service(binding.victims[0]) if binding.victims else service
        return [
            access(
                world,
                service,
                m,
                rng,
                to=dropped.name,
                status=404,
                flags="NR",
                upstream="",
                ms=0,
                bytes=0,
            )
            for m in every(onset, stop, 12, rng)
        ]
    upstream = upstream_of(world, incident, service.name) or binding.culprit
    unresolved = world.system.service(upstream).kind == "dns"
    slow = incident.fault.key in _TIMEOUTS
    times = list(every(onset, stop, 8, rng))
    if incident.fault.key == "memory_leak":
        times = [k + timedelta(seconds=s) for k in _kills(world, incident) for s in (5, 30, 70)]
    return [
        access(
            world,
            service,
            m,
            rng,
            to=upstream,
            status=504 if slow else rng.choice((502, 503)),
            flags="UT" if slow else "UF",
            ms=15000 if slow else rng.randint(1, 40),
            upstream="" if unresolved else service_address(world.system, upstream),
        )
        for m in times
    ]


def incident_events(
    world: World, incident: Incident, filler: Filler, rng: random.Random
) -> list[Event]:
    """Every line ``incident`` adds to its services' logs."""
    system, fault, binding = world.system, incident.fault, incident.binding
    culprit = system.service(binding.culprit)
    # The cluster DNS fails to answer for the names its victims look up.
    looked_up = [filler.values(v, None, {})["fqdn"] for v in binding.victims]
    more = {"fqdn": rng.choice(looked_up)} if culprit.kind == "dns" and looked_up else {}
    events = _lines(world, incident, culprit, fault.culprit_lines, filler, rng, **more)
    if culprit.tech in ("envoy", "nginx") and fault.key == "config_push":
        events += _proxy(world, incident, culprit, rng)
    if binding.resource:
        resource = system.service(binding.resource)
        events += _lines(world, incident, resource, fault.resource_lines, filler, rng)
    for name in binding.victims:
        victim = system.service(name)
        if victim.tech in ("envoy", "nginx"):
            events += _proxy(world, incident, victim, rng)
        if victim.kind != "edge":
            first = upstream_of(world, incident, name) in (binding.culprit, binding.resource)
            lines = fault.victim_lines if first else _HOP
            events += _lines(world, incident, victim, lines, filler, rng)
    return events
