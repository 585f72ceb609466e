"""What services log when nothing is wrong, and the noise that only looks like trouble.

Per technology: request lines of applications, access lines of proxies (client user agents at
the edge, the calling service's agent at an origin), PostgreSQL's connection and checkpoint
lines (``application_name`` names the client), Redis saves, CoreDNS NXDOMAIN answers, hourly
batch runs, the issuer host's NTP source. Noise: a warning at the same rate all morning on one
healthy service, client-aborted requests logged as errors all day on two services, a deploy
that changed nothing.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import datetime, timedelta

from eval.second.catalog import Service
from eval.second.styles import Event
from eval.second.templates import Filler, service_address
from eval.second.world import World

CLIENT_AGENTS = (
    "okhttp/4.12.0",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148",
    "Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8 Build/AP1A.240305.019)",
    "Mozilla/5.0 (SMART-TV; Linux; Tizen 7.0) AppleWebKit/537.36 SamsungBrowser/4.0",
)
_STEADY = {
    "java": "c.{sys}.compat.PayloadMapper - ignoring unknown field 'legacyId' sent by app 6.x",
    "go": "deprecated API v1 called by okhttp/4.12.0; clients should move to v2",
    "node": "X-Forwarded-For header missing, falling back to socket address",
    "*": "deprecated configuration directive in use; it will be removed in the next release",
}
_ABORTED = {
    "java": "c.{sys}.web.ErrorHandler - client aborted request: org.apache.catalina.connector."
    "ClientAbortException: java.io.IOException: Broken pipe",
    "go": "request canceled by client: context canceled",
    "node": "request aborted by client (ECONNRESET)",
}
_STARTUP = {
    "java": "{pkg}.Application - Started Application in 9.{n2} seconds (process running for 10.1)",
    "go": "starting {svc} version={ver} commit={hex}",
    "node": "{svc}@{ver} listening on :8080",
}


def every(start: datetime, end: datetime, per_min: float, rng: random.Random) -> Iterator[datetime]:
    """Times from ``start`` to ``end``, ``per_min`` a minute on average, jittered."""
    if per_min <= 0:
        return
    gap = 60.0 / per_min
    moment = start + timedelta(seconds=rng.uniform(0, gap))
    while moment < end:
        yield moment
        moment += timedelta(seconds=gap * rng.uniform(0.5, 1.5))


def access(
    world: World, service: Service, moment: datetime, rng: random.Random, **request: object
) -> Event:
    """One access-log request through ``service`` (defaults: a healthy 200)."""
    system = world.system
    upstream = request.pop("to", None) or rng.choice(service.deps or (service.name,))
    fields = {
        "method": "GET" if rng.random() < 0.7 else "POST",
        "path": system.service(str(upstream)).path
        if service.kind == "edge"
        else f"{service.path}ep{rng.randint(1, 900)}/seg_{rng.randint(1, 700):05d}.ts",
        "status": 200,
        "bytes": rng.randint(180, 9000),
        "ms": rng.randint(4, 90),
        "client": f"203.0.113.{rng.randint(2, 250)}"
        if service.kind == "edge"
        else service_address(
            system, rng.choice(system.callers(service.name) or [service]).name
        ).split(":")[0],
        "ua": rng.choice(CLIENT_AGENTS)
        if service.kind == "edge"
        else f"{(system.callers(service.name) or [service])[0].name}/3.4 (go-http-client/1.1)",
        "upstream": service_address(system, str(upstream)) if upstream != service.name else "",
        "id": f"{rng.getrandbits(64):016x}",
        "authority": f"api.{system.key}.example",
    } | request
    level = "ERROR" if int(str(fields["status"])) >= 500 else "INFO"
    return Event(moment, service.name, level, request=fields, channel="access")


def _requests(world: World, service: Service, filler: Filler, rng: random.Random) -> list[Event]:
    events = []
    for moment in every(world.start, world.end, 1.5, rng):
        ms = rng.randint(3, 80)
        text = {
            "java": f"c.{world.system.key}.web.RequestLog - GET {service.path} -> 200 ({ms} ms)",
            "go": "request handled",
            "node": "request completed",
        }[service.tech]
        request = {
            "method": "GET",
            "path": service.path,
            "status": 200,
            "ms": ms,
            "ua": "okhttp/4.12.0",
        }
        events.append(Event(moment, service.name, "INFO", text, request=request))
    periodic = {
        "java": "com.zaxxer.hikari.pool.HikariPool - HikariPool-1 - Pool stats "
        "(total=10, active=2, idle=8, waiting=0)",
        "go": "cache refreshed: {n} entries",
        "node": "flushed metrics to statsd ({n2} series)",
    }[service.tech]
    for moment in every(world.start, world.end, 0.1, rng):
        events.append(Event(moment, service.name, "INFO", filler.fill(periodic, service.name)))
    return events


#: What infrastructure logs on a quiet day: (lines a minute, template).
_INFRA = {
    "postgres": (
        (0.2, "checkpoint starting: time"),
        (
            0.2,
            "checkpoint complete: wrote {n} buffers (1.{n2}%); 0 WAL file(s) added, 0 removed, "
            "3 recycled; write=26.9 s, sync=0.004 s, total=27.0 s",
        ),
    ),
    "redis": (
        (0.07, "Background saving started by pid {n}"),
        (0.07, "Background saving terminated with success"),
    ),
    "minio": ((0.05, "Scanner: cycle 1{n3} completed in 4m12s"),),
    "coredns": (
        (
            2.0,
            '[INFO] 10.0.{n2}.{n2}:{port} - {n} "AAAA IN metadata.google.internal. udp 52 '
            'false 512" NXDOMAIN qr,aa,rd 145 0.000{n3}s',
        ),
    ),
}


def _infra(world: World, service: Service, filler: Filler, rng: random.Random) -> list[Event]:
    lines = list(_INFRA.get(service.tech, ()))
    if service.tech == "postgres":  # log_connections: each client's application_name
        lines += [
            (
                0.4,
                f"connection authorized: user={caller.name.replace('-', '_')}_rw "
                f"database={{db}} application_name={caller.name}",
            )
            for caller in world.system.callers(service.name)
            if caller.kind == "app"
        ]
    database = service.name.removeprefix("pg-").split("-")[0]
    return [
        Event(moment, service.name, "INFO", filler.fill(text, service.name, db=database))
        for per_min, text in lines
        for moment in every(world.start, world.end, per_min, rng)
    ]


def _batch_runs(world: World, service: Service, filler: Filler) -> list[Event]:
    events = []
    hour = world.start.replace(minute=5)
    while hour < world.end:
        for seconds, text in (
            (0, "systemd[1]: Starting {svc}.service - {describe}..."),
            (60, "processed {n} rows"),
            (170, "systemd[1]: {svc}.service: Deactivated successfully."),
            (171, "systemd[1]: Finished {svc}.service - {describe}."),
        ):
            events.append(
                Event(
                    hour + timedelta(seconds=seconds),
                    service.name,
                    "INFO",
                    filler.fill(text, service.name),
                )
            )
        hour += timedelta(hours=1)
    return events


#: What proxies write to their own log now and then (Envoy's xDS stream reconnects, nginx
#: buffering a large response): warnings that were always there.
_PROXY = {
    "envoy": "[warning][config] [source/common/config/grpc_stream.h:201] StreamAggregatedResources "
    "gRPC config stream to xds_cluster closed since 1799s ago: 13, ",
    "nginx": "an upstream response is buffered to a temporary file "
    "/var/cache/nginx/proxy_temp/{n2}/00/00000{n3} while reading upstream",
}


def background(world: World, service: Service, filler: Filler, rng: random.Random) -> list[Event]:
    """A service's ordinary lines over the whole window."""
    synced = [world.start + timedelta(minutes=10 + 120 * k) for k in range(3)]
    if service.tech in ("envoy", "nginx"):
        per_min = 6.0 if service.kind == "edge" else 4.0
        events = [
            access(world, service, m, rng) for m in every(world.start, world.end, per_min, rng)
        ]
        text = _PROXY[service.tech]
        return events + [
            Event(m, service.name, "WARN", filler.fill(text, service.name))
            for m in every(world.start, world.end, 1 / 30, rng)
        ]
    if service.tech in ("java", "go", "node"):
        events = _requests(world, service, filler, rng)
        if service.issuer:
            text = "chronyd[612]: Selected source 169.254.169.123"
            events += [Event(m, service.name, "INFO", text, channel="host") for m in synced]
        return events
    if service.kind == "batch":
        return _batch_runs(world, service, filler)
    return _infra(world, service, filler, rng)


def noise(world: World, filler: Filler, rng: random.Random) -> list[Event]:
    """The steady warning, the all-day client aborts and the deploy that changed nothing."""
    system = world.system
    events: list[Event] = []
    steady = system.service(world.noise["steady_warning"])
    text = _STEADY.get(steady.tech, _STEADY["*"]).replace("{sys}", system.key)
    events += [Event(m, steady.name, "WARN", text) for m in every(world.start, world.end, 1.5, rng)]
    culprits = [system.service(i.binding.culprit) for i in world.incidents]
    aborting = [s for s in culprits if s.tech in _ABORTED][:1]
    noisy = [system.service(world.noise["traffic"]), *aborting]
    for service in noisy:
        aborted = _ABORTED.get(service.tech)
        if aborted:
            line = aborted.replace("{sys}", system.key)
            events += [
                Event(m, service.name, "ERROR", line)
                for m in every(world.start, world.end, 0.3, rng)
            ]
    deployed = system.service(world.noise["noop_deploy"])
    if world.noop_deploy and deployed.tech in _STARTUP:
        events.append(
            Event(
                world.noop_deploy - timedelta(seconds=20),
                deployed.name,
                "INFO",
                "received SIGTERM, shutting down gracefully",
            )
        )
        version = filler.fill("{ver_new}", deployed.name)
        events.append(
            Event(
                world.noop_deploy,
                deployed.name,
                "INFO",
                filler.fill(_STARTUP[deployed.tech], deployed.name, ver=version),
            )
        )
    return events
