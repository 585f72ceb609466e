"""Write a :class:`~eval.world.World` as a dataset folder ``DemoTelemetryBackend`` serves."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from demo.writer import MetricRow, folder_size, write_metrics, write_runbooks
from eval.families import FAMILIES
from eval.logs import world_lines
from eval.metrics import ROLES
from eval.series import metric_name, world_series
from eval.world import STEP_SECONDS, World, runbooks
from webapp.demo.files import iso_seconds, write_alerts, write_dataset_json, write_logs

_PORTS = {"database": 5432, "cache": 6379, "queue": 9092}


def _camel(domain: str) -> str:
    return "".join(part.capitalize() for part in domain.replace("_", "-").split("-"))


def world_alerts(world: World) -> list[dict[str, Any]]:
    """Each incident's alert on its victim (firing), plus the always-firing watchdog."""
    alerts = []
    edge = next(s.name for s in world.services.values() if s.kind == "edge")
    for incident in world.incidents:
        suffix, severity, description = FAMILIES[incident.family].alert
        victim = world.services[incident.victim]
        alerts.append(
            {
                "alert_name": _camel(victim.domain) + suffix,
                "severity": severity,
                "service": victim.name,
                "description": description.format(victim=victim.name),
                "state": "firing",
                "active_at": iso_seconds(world.onset(incident) + timedelta(minutes=3)),
            }
        )
    alerts.append(
        {
            "alert_name": "Watchdog",
            "severity": "none",
            "service": edge,
            "description": "always firing: proves the alerting pipeline works end to end",
            "state": "firing",
            "active_at": iso_seconds(world.start),
        }
    )
    return sorted(alerts, key=lambda a: (a["active_at"], a["alert_name"]))


def _rows(world: World, series: dict[str, dict[str, list[float]]]) -> list[MetricRow]:
    rows = []
    for name, service in world.services.items():
        labels = {"service": name, "instance": f"{name}:{_PORTS.get(service.kind, 8080)}"}
        for role, values in series[name].items():
            rows.append(MetricRow(name, metric_name(world, role), ROLES[role][0], labels, values))
    return rows


def write_world(world: World, out: Path) -> dict[str, int]:
    """Write ``world`` into ``out``; returns line, series and byte counts."""
    out.mkdir(parents=True, exist_ok=True)
    series = world_series(world)
    lines = world_lines(world, series)
    write_dataset_json(
        out,
        name=f"generated world {world.seed}",
        start=world.start,
        end=world.end,
        step_seconds=STEP_SECONDS,
        services=list(world.services),
        aliases={name: s.aliases for name, s in world.services.items()},
        generator={"seed": world.seed, "generator": "eval.world"},
    )
    write_logs(out / "logs.jsonl.gz", lines)
    rows = _rows(world, series)
    write_metrics(out / "metrics.json", world.start, STEP_SECONDS, rows)
    write_alerts(out / "alerts.json", world_alerts(world))
    write_runbooks(out / "runbooks", runbooks())
    return {"log_lines": len(lines), "series": len(rows), "bytes": folder_size(out)}
