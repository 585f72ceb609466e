"""A world's log events and the style each service writes them in.

Every style is written as the raw file a real process writes (``writer``), by technology:

| tech | ``self_hosted`` systems | ``managed`` systems |
| --- | --- | --- |
| java | Log4j2 pattern | Log4j2 pattern |
| go | zap JSON | zap JSON |
| node | bunyan | (none in these systems) |
| envoy | default access log + application log | (none) |
| nginx | combined access log + error log | JSON access log; the error log is not collected |
| postgres | csvlog | managed database: no log files |
| redis | syslog RFC 5424 | managed: none |
| minio, coredns, batch jobs | journald JSON export | journald short-iso (not minio) |
| the token issuer's host (chronyd) | syslog RFC 3164 | journald short-iso |
"""

from __future__ import annotations

import random
from dataclasses import replace

from eval.second.catalog import Service, System, host, node
from eval.second.chatter import background, noise
from eval.second.incident_logs import incident_events
from eval.second.styles import Event
from eval.second.templates import Filler, camel
from eval.second.world import World

_SELF_HOSTED = {
    "java": "log4j2",
    "go": "zap",
    "node": "bunyan",
    "envoy": "envoy_app",
    "nginx": "nginx_error",
    "postgres": "csvlog",
    "redis": "syslog5424",
    "minio": "journald_json",
    "coredns": "journald_json",
    "job": "journald_json",
}
_MANAGED = {"java": "log4j2", "go": "zap", "coredns": "journald_iso", "job": "journald_iso"}


def style_of(system: System, service: Service, event: Event) -> str | None:
    """The style ``event`` is written in, or None when that log is not collected."""
    hosted = system.log_styles == "self_hosted"
    if event.channel == "access":
        return {"envoy": "envoy_access", "nginx": "nginx_access" if hosted else "nginx_json"}.get(
            service.tech
        )
    if event.channel == "host":
        return "syslog3164" if hosted else "journald_iso"
    return (_SELF_HOSTED if hosted else _MANAGED).get(service.tech)


def world_events(world: World) -> list[tuple[Event, str]]:
    """Every collected event with its style, in time order."""
    rng = random.Random(world.seed * 104729)
    filler = Filler(world.system, rng)
    events: list[Event] = []
    for service in world.system.services:
        events += background(world, service, filler, rng)
    events += noise(world, filler, rng)
    for incident in world.incidents:
        events += incident_events(world, incident, filler, rng)
    found = []
    for event in sorted(events, key=lambda e: (e.moment, e.service)):
        service = world.system.service(event.service)
        style = style_of(world.system, service, event)
        if style is None or not world.start <= event.moment < world.end:
            continue
        moment = event.moment.replace(microsecond=event.moment.microsecond // 1000 * 1000)
        machine = node if event.channel == "host" else host
        where = event.host or machine(world.system, service.name)
        logger = event.logger or _logger(world, service)
        found.append((replace(event, moment=moment, host=where, logger=logger), style))
    return found


def _logger(world: World, service: Service) -> str:
    return f"c.{world.system.key}.{service.name.split('-')[0]}.{camel(service.name)}Service"
