"""Write a world the way a user would point the product at it.

Every world is a telemetry folder (``TELEMETRY_DIR``: ``dataset.json`` with the catalog's
aliases, ``metrics.json`` with ``job``/``team``/``namespace``/``instance`` labels,
``alerts.json``, ``runbooks/``), written by the same writer as the demo, and its logs are raw
files under ``logs/<service>/`` (``LOG_DIR``), named as the process names them (``_FILES``):
Log4j2's ``app.log`` plus a rotated ``app-<date>-1.log.gz``, Envoy's application and access
logs mixed in one ``envoy.log`` as on its stdout, nginx's ``access.log`` and ``error.log``,
``postgresql.csv``, ``syslog``, ``messages``, journald exports. Each file's modification time is
its last line's, as a log file's is (year-less syslog lines take their year from it).
"""

from __future__ import annotations

import gzip
import os
import re
import statistics
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from demo.writer import MetricRow, folder_size, write_metrics, write_runbooks
from eval.second.catalog import address
from eval.second.faults import LEAK_MINUTES
from eval.second.logs import world_events
from eval.second.runbooks import runbooks
from eval.second.signals import Series, world_series
from eval.second.styles import Event, epoch_ms, render
from eval.second.templates import camel
from eval.second.world import STEP_SECONDS, Incident, World
from webapp.demo.files import iso_seconds, write_alerts, write_dataset_json

#: Alerts that watch a culprit's own signal, by fault.
CAUSE_ALERTS = {
    "dns_failure": ("CoreDNSErrorsHigh", "warning", "SERVFAIL responses of {svc} above 1% for 5m"),
    "replica_lag": ("PostgresReplicationLagHigh", "warning", "{svc} is more than 60 s behind"),
    "fd_exhaustion": ("ProcessFdsNearLimit", "warning", "{svc} uses more than 90% of its fds"),
    "clock_skew": ("NodeClockNotSynchronising", "warning", "clock of {svc}'s node is not syncing"),
    "network_partition": ("RedisClusterDown", "critical", "cluster state of {svc} is fail"),
    "memory_leak": ("KubePodCrashLooping", "warning", "{svc} is restarting"),
}
_FILES = {
    "log4j2": "app.log",
    "zap": "{svc}.json.log",
    "bunyan": "{svc}.log",
    "envoy_app": "envoy.log",
    "envoy_access": "envoy.log",
    "nginx_access": "access.log",
    "nginx_error": "error.log",
    "nginx_json": "access.log",
    "csvlog": "postgresql.csv",
    "syslog5424": "syslog",
    "syslog3164": "messages",
    "journald_json": "journal.json",
    "journald_iso": "journal.log",
}


def _symptom(world: World, incident: Incident) -> dict[str, Any]:
    """The alert on the front-most application the incident reaches."""
    binding = incident.binding
    apps = [n for n in binding.victims if world.system.service(n).kind != "edge"]
    name = apps[-1] if apps else binding.culprit
    text = f"5xx ratio of {name} above 5% for 5 minutes"
    since = incident.onset_of(name) + timedelta(minutes=4)
    return _alert(f"{camel(name)}HighErrorRate", "critical", name, text, since)


def _alert(name: str, severity: str, service: str, text: str, since: datetime) -> dict[str, Any]:
    return {
        "alert_name": name,
        "severity": severity,
        "service": service,
        "description": text,
        "state": "firing",
        "active_at": iso_seconds(since),
    }


def world_alerts(world: World, series: dict[str, dict[str, Series]]) -> list[dict[str, Any]]:
    """Alerts at noon: each ongoing incident's symptom (and cause) alert, the noise, Watchdog."""
    alerts = []
    for incident in world.incidents:
        if incident.end is not None:
            continue  # resolved by noon
        alerts.append(_symptom(world, incident))
        if incident.fault.key in CAUSE_ALERTS:
            name, severity, text = CAUSE_ALERTS[incident.fault.key]
            culprit = incident.binding.culprit
            delay = LEAK_MINUTES + 2 if incident.fault.key == "memory_leak" else 3
            since = incident.onset + timedelta(minutes=delay)
            alerts.append(_alert(name, severity, culprit, text.format(svc=culprit), since))
    flapping = world.noise["flapping_alert"]
    p99 = statistics.median(series[flapping]["latency"].values)
    text = f"p99 latency of {flapping} above {p99 * 1.04:.3g} for 1 minute"
    since = world.end - timedelta(minutes=4)  # it fired again a moment ago, as it does all day
    alerts.append(_alert(f"{camel(flapping)}LatencyP99Elevated", "info", flapping, text, since))
    edge = world.system.of_kind("edge")[0].name
    text = "always firing: the alerting pipeline works"
    alerts.append(_alert("Watchdog", "none", edge, text, world.start))
    return sorted(alerts, key=lambda a: (a["active_at"], a["alert_name"]))


def _rows(world: World, series: dict[str, dict[str, Series]]) -> list[MetricRow]:
    rows = []
    for service in world.system.services:
        labels = {
            "service": service.name,
            "job": service.name,
            "team": service.team,
            "namespace": world.system.key,
            "instance": address(world.system, service.name),
        }
        for found in series[service.name].values():
            rows.append(
                MetricRow(service.name, found.name, found.metric.unit, labels, found.values)
            )
    return rows


def _context(world: World, event: Event) -> dict[str, str]:
    """csvlog's user, database, client and application for a PostgreSQL line."""
    callers = world.system.callers(event.service) or [world.system.service(event.service)]
    named = re.search(r"application_name=([\w-]+)", event.text)
    client = named.group(1) if named else callers[epoch_ms(event.moment) % len(callers)].name
    port = epoch_ms(event.moment) % 30000 + 30000
    return {
        "user": f"{client.replace('-', '_')}_rw",
        "db": event.service.removeprefix("pg-").split("-")[0],
        "client": f"{address(world.system, client).split(':')[0]}:{port}",
        "app": client,
        "command": "UPDATE" if event.level != "INFO" else "idle",
    }


def _log_dir(world: World, events: list[tuple[Event, str]], out: Path) -> int:
    files: dict[Path, list[tuple[Event, str]]] = {}
    rotation = world.start.replace(hour=9)
    for event, style in events:
        name = _FILES[style].format(svc=event.service)
        if style == "log4j2" and event.moment < rotation:
            name = f"app-{world.start:%Y-%m-%d}-1.log.gz"
        context = _context(world, event) if style == "csvlog" else None
        files.setdefault(out / event.service / name, []).append(
            (event, render(style, event, context))
        )
    for path, lines in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        body = "".join(f"{line}\n" for _, line in lines).encode("utf-8")
        path.write_bytes(gzip.compress(body, mtime=0) if path.suffix == ".gz" else body)
        last = lines[-1][0].moment.timestamp()
        os.utime(path, (last, last))
    return sum(len(lines) for lines in files.values())


def write_world(world: World, out: Path) -> dict[str, int]:
    """Write ``world`` under ``out``; returns line, series and byte counts."""
    out.mkdir(parents=True, exist_ok=True)
    series = world_series(world)
    system = world.system
    write_dataset_json(
        out,
        name=f"{system.title} ({system.key}), seed {world.seed}",
        start=world.start,
        end=world.end,
        step_seconds=STEP_SECONDS,
        services=[s.name for s in system.services],
        aliases={s.name: list(s.aliases) for s in system.services if s.aliases},
        generator={"seed": world.seed, "generator": "eval.second", "logs": system.log_styles},
    )
    rows = _rows(world, series)
    write_metrics(out / "metrics.json", world.start, STEP_SECONDS, rows)
    write_alerts(out / "alerts.json", world_alerts(world, series))
    write_runbooks(out / "runbooks", runbooks(world))
    lines = _log_dir(world, world_events(world), out / "logs")
    return {"log_lines": lines, "series": len(rows), "bytes": folder_size(out)}


def log_dir(folder: Path) -> Path:
    """The ``LOG_DIR`` of a written world."""
    return folder / "logs"
