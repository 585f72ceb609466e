"""Log lines of a world: access logs that follow the metrics, housekeeping, incidents, noise.

Request lines read the minute's latency and error ratio, so logs and metrics agree. A failed
request on an incident's victim after the onset is logged in one of the family's phrasings; the
culprit is named in some lines only (``{dep}`` is an address in the others). Background errors,
a deploy that changed nothing and benign warnings are there before and after every onset.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from demo.loggen import ticks, trace_id
from demo.metricgen import request_latency
from eval.families import FAMILIES, Family
from eval.world import Incident, Service, World
from webapp.demo.files import LogRecord, epoch_ms, iso_millis, iso_seconds

_PATHS = ("/v1/{d}/{id}", "/v1/{d}", "/v1/{d}/{id}/items", "/internal/{d}/sync")
_ACCESS = (
    "{method} {path} {status} {ms}ms",
    "request completed method={method} path={path} status={status} duration={ms}ms",
    '"{method} {path} HTTP/1.1" {status} {bytes} rt={secs}.{ms}',
)
_BENIGN = (
    "failed to deliver webhook to partner endpoint https://hooks.example.net/{id}: 410 Gone",
    "rejected request from 198.51.100.{n}: malformed JSON body",
    "audit sink unavailable, buffering {n} events locally",
)
_HOUSEKEEPING = {
    "database": ("checkpoint complete: wrote {n} buffers (0.{n}%); sync files={n}",),
    "cache": ("{n} changes in 300 seconds. Saving...", "Background saving terminated with success"),
    "queue": ("Rolled new log segment for 'events-{n}' in {n} ms.",),
}


class _Params(dict[str, Any]):
    """Placeholder values drawn on demand."""

    def __init__(self, rng: random.Random, **known: Any) -> None:
        super().__init__(known)
        self.rng = rng

    def __missing__(self, key: str) -> Any:
        rng = self.rng
        value: Any = {
            "id": lambda: rng.randint(10_000, 99_999),
            "n": lambda: rng.randint(2, 99),
            "pid": lambda: rng.randint(2000, 9999),
            "port": lambda: rng.randint(30_000, 60_000),
            "secs": lambda: rng.randint(1, 9),
            "ms": lambda: rng.randint(300, 1900),
            "xid": lambda: rng.randint(700_000, 900_000),
            "ip": lambda: f"10.0.{rng.randint(1, 9)}.{rng.randint(2, 250)}",
            "bytes": lambda: rng.randint(200, 9000),
            "method": lambda: rng.choice(("GET", "POST")),
            "status": lambda: 200,
            "group": lambda: "cg-main",
        }.get(key, lambda: key)()
        return value


@dataclass
class _Ctx:
    world: World
    series: dict[str, dict[str, list[float]]]
    start_ms: int
    end_ms: int
    lines: list[LogRecord] = field(default_factory=list)

    def value(self, service: str, role: str, t_ms: int, default: float = 0.0) -> float:
        values = self.series[service].get(role)
        if values is None:
            return default
        return values[min(len(values) - 1, (t_ms - self.start_ms) // 60_000)]

    def onset_ms(self, incident: Incident) -> int:
        return epoch_ms(self.world.onset(incident))

    def emit(self, t: int, service: str, level: str, text: str, params: _Params) -> None:
        trace = trace_id(params.rng) if level != "INFO" or params.rng.random() < 0.5 else None
        self.lines.append((t, service, level, text.format_map(params), trace))


def _incident_of(ctx: _Ctx, service: str) -> tuple[Incident, Family] | None:
    for incident in ctx.world.incidents:
        family = FAMILIES[incident.family]
        if service in incident.affected and (
            service != incident.culprit or family.culprit in ("self", "queue")
        ):
            return incident, family
    return None


def _dep(rng: random.Random, incident: Incident) -> str:
    if rng.random() < 0.4:
        return incident.culprit
    return f"10.0.{rng.randint(1, 9)}.{rng.randint(2, 250)}"


def _request_lines(ctx: _Ctx, service: Service, style: str) -> None:
    rng = random.Random(f"{ctx.world.seed}:logs:{service.name}")
    trouble = _incident_of(ctx, service.name)
    usual = service.roles["throughput"].mean
    for t in ticks(rng, ctx.start_ms, ctx.end_ms, 4.0, 10.0):
        if rng.random() > ctx.value(service.name, "throughput", t, usual) / usual:
            continue  # fewer requests arrive (a callee whose handshakes fail)
        path = rng.choice(_PATHS).format(d=service.domain, id=rng.randint(1000, 99_999))
        ms = int(request_latency(rng, ctx.value(service.name, "latency_p95", t, 100.0)))
        params = _Params(rng, path=path, victim=service.name, now=iso_millis(t)[:19] + "Z")
        active = trouble is not None and t >= ctx.onset_ms(trouble[0])
        if trouble:
            params["expiry"] = iso_seconds(ctx.world.onset(trouble[0]))
        if rng.random() < ctx.value(service.name, "error_ratio", t):
            if active and trouble and trouble[1].victim_errors:
                params["dep"] = _dep(rng, trouble[0])
                ctx.emit(t, service.name, "ERROR", rng.choice(trouble[1].victim_errors), params)
            else:
                params.update(status=rng.choice((500, 502)), ms=ms)
                ctx.emit(t, service.name, "ERROR", style + " (upstream reset)", params)
            continue
        if active and trouble and trouble[1].victim_warns and rng.random() < trouble[1].warn_rate:
            params.update(dep=_dep(rng, trouble[0]), ms=max(ms, rng.randint(250, 900)))
            ctx.emit(t, service.name, "WARN", rng.choice(trouble[1].victim_warns), params)
        status = 404 if rng.random() < 0.02 else 200
        params.update(status=status, ms=ms)
        ctx.emit(t, service.name, "WARN" if ms >= 1500 else "INFO", style, params)


def _worker_lines(ctx: _Ctx, service: Service) -> None:
    rng = random.Random(f"{ctx.world.seed}:logs:{service.name}")
    trouble = _incident_of(ctx, service.name)
    text = "processed {n} records from partition {k} offset {id} in {ms}ms"
    for t in ticks(rng, ctx.start_ms, ctx.end_ms, 3.0, 8.0):
        active = trouble is not None and t >= ctx.onset_ms(trouble[0])
        params = _Params(rng, victim=service.name, k=rng.randint(0, 11))
        if active and trouble and rng.random() < 0.3:
            level, phrasing = (
                ("ERROR", rng.choice(trouble[1].victim_errors))
                if trouble[1].victim_errors and rng.random() < 0.3
                else ("WARN", rng.choice(trouble[1].victim_warns or ("{victim} is catching up",)))
            )
            ctx.emit(t, service.name, level, phrasing, params)
            continue
        ms = int(request_latency(rng, ctx.value(service.name, "latency_p95", t, 100.0)))
        params["ms"] = ms
        ctx.emit(t, service.name, "INFO", text, params)


def _edge_lines(ctx: _Ctx, edge: Service) -> None:
    rng = random.Random(f"{ctx.world.seed}:logs:{edge.name}")
    apps = [s for s in ctx.world.apps() if s.kind == "app"]
    for t in ticks(rng, ctx.start_ms, ctx.end_ms, 1.5, 3.5):
        upstream = rng.choice(apps)
        path = rng.choice(_PATHS).format(d=upstream.domain, id=rng.randint(1000, 99_999))
        ms = 6 + int(request_latency(rng, ctx.value(upstream.name, "latency_p95", t, 100.0)))
        params = _Params(rng, path=path, ms=ms, upstream=upstream.name)
        if rng.random() < ctx.value(upstream.name, "error_ratio", t):
            params["status"] = rng.choice((500, 502, 503, 504))
            text = "{method} {path} {status} {ms}ms upstream={upstream} (upstream failure)"
            ctx.emit(t, edge.name, "WARN", text, params)
        else:
            ctx.emit(
                t, edge.name, "INFO", "{method} {path} {status} {ms}ms upstream={upstream}", params
            )


def _infra_lines(ctx: _Ctx, service: Service) -> None:
    rng = random.Random(f"{ctx.world.seed}:logs:{service.name}")
    for t in ticks(rng, ctx.start_ms, ctx.end_ms, 45.0, 120.0):
        ctx.emit(t, service.name, "INFO", rng.choice(_HOUSEKEEPING[service.kind]), _Params(rng))


def _cause_lines(ctx: _Ctx, incident: Incident) -> None:
    family = FAMILIES[incident.family]
    rng = random.Random(f"{ctx.world.seed}:cause:{incident.id}")
    onset = ctx.onset_ms(incident)
    for offset, where, level, text in family.precursor:
        service = incident.culprit if where == "culprit" else incident.victim
        params = _Params(rng, victim=incident.victim, **_versions(ctx.world, incident.victim))
        ctx.emit(onset + offset, service, level, text, params)
    _cycle_lines(ctx, incident, family, rng)
    if not family.cause_lines:
        return
    target = incident.culprit
    if family.culprit == "queue":
        target = str(ctx.world.services[incident.victim].queue)
    for t in ticks(rng, onset + 15_000, ctx.end_ms, 6.0, 30.0):
        level, text = rng.choice(family.cause_lines)
        ctx.emit(t, target, level, text, _Params(rng, victim=incident.victim))


def _cycle_lines(ctx: _Ctx, incident: Incident, family: Family, rng: random.Random) -> None:
    """A leak's kill and restart at the end of every period of its sawtooth."""
    periods = [shape.ramp for shape in family.victim if shape.kind == "saw"]
    if not periods or not family.cycle_lines:
        return
    onset = ctx.start_ms + incident.onset_minute * 60_000
    versions = _versions(ctx.world, incident.victim)
    t = onset + periods[0] * 60_000 - rng.randint(5_000, 40_000)
    while t < ctx.end_ms:
        for offset, (level, text) in enumerate(family.cycle_lines):
            params = _Params(rng, victim=incident.victim, **versions)
            ctx.emit(t + offset * 1500, incident.victim, level, text, params)
        t += periods[0] * 60_000


def _versions(world: World, service: str) -> dict[str, str]:
    base = world.services[service].roles.get("version")
    major = base.mean if base else 1.0
    return {"old": _version(major), "new": _version(major + 0.1)}


def _version(value: float) -> str:
    whole = round(value * 100)
    return f"{whole // 100}.{whole // 10 % 10}.{whole % 10}"


def _noise_lines(ctx: _Ctx) -> None:
    world = ctx.world
    for name in world.noisy:
        rng = random.Random(f"{world.seed}:benign:{name}")
        for t in ticks(rng, ctx.start_ms, ctx.end_ms, 1500.0, 3000.0):
            ctx.emit(t, name, "ERROR", rng.choice(_BENIGN), _Params(rng))
    if world.noop_deploy:
        name, minute = world.noop_deploy
        rng = random.Random(f"{world.seed}:noop:{name}")
        t = ctx.start_ms + minute * 60_000 + rng.randint(1000, 50_000)
        base = world.services[name].roles["version"].mean
        params = _Params(rng, old=_version(base), new=_version(base + 0.01))
        ctx.emit(
            t,
            name,
            "INFO",
            "rolling update complete: {new} replaces {old} (change CHG-{id})",
            params,
        )
        ctx.emit(t + 8000, name, "INFO", "listening on :8080, v{new}", params)


def world_lines(world: World, series: dict[str, dict[str, list[float]]]) -> list[LogRecord]:
    """Every log line of ``world``, sorted by time."""
    ctx = _Ctx(world, series, epoch_ms(world.start), epoch_ms(world.end))
    style = random.Random(f"{world.seed}:style").choice(_ACCESS)
    for service in world.services.values():
        if service.kind == "app":
            _request_lines(ctx, service, style)
        elif service.kind == "worker":
            _worker_lines(ctx, service)
        elif service.kind == "edge":
            _edge_lines(ctx, service)
        else:
            _infra_lines(ctx, service)
    for incident in world.incidents:
        _cause_lines(ctx, incident)
    _noise_lines(ctx)
    lines = [line for line in ctx.lines if ctx.start_ms <= line[0] < ctx.end_ms]
    lines.sort(key=lambda line: (line[0], line[1]))
    return lines
