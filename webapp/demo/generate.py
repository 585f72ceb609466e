"""Write the demo dataset: ``python -m webapp.demo.generate --out DIR [--seed 7] [--variant ...]``.

Output (deterministic for a seed and variant, byte for byte):

* ``dataset.json`` - name, reference time, window, step and services; no scenario answers.
* ``logs.jsonl.gz`` - one JSON record per line, sorted by time, gzip with ``mtime=0``.
* ``metrics.json`` - one series per service and metric, one point per minute. The
  ``deploy_version`` series (unit ``version``) encodes a release ``major.minor.patch`` as
  ``major + minor / 10 + patch / 100``: 2.7.3 is 2.73, 2.8.0 is 2.8.
* ``alerts.json`` - the alerts at the reference time.
* ``runbooks/*.md`` - the runbooks of ``webapp.demo.runbooks``.

The committed ``webapp/demo/data`` is this command's output with the defaults.
"""

from __future__ import annotations

import argparse
import gzip
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from webapp.demo.loggen import Line, generate_lines
from webapp.demo.metricgen import BASELINES, METRIC_UNITS, POINTS, generate_series
from webapp.demo.runbooks import RUNBOOKS
from webapp.demo.scenarios import ALERTS
from webapp.demo.system import SERVICE_KEYS, STEP_SECONDS, VARIANTS, service_name, window

DEFAULT_SEED = 7
DATA_DIR = Path(__file__).resolve().parent / "data"
DATASET_NAME = "e-commerce demo system"
_PORTS = {"mysql-primary": 3306, "redis-cache": 6379}
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def iso_seconds(moment: datetime) -> str:
    """``2026-11-30T10:05:00Z``."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_millis(epoch_ms: int) -> str:
    """``2026-11-30T10:05:00.123Z`` for epoch milliseconds."""
    moment = _EPOCH + timedelta(milliseconds=epoch_ms)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{epoch_ms % 1000:03d}Z"


def _dump(path: Path, document: Any) -> None:
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def _write_dataset(out: Path, seed: int, variant: str) -> None:
    start, end = window(variant)
    _dump(
        out / "dataset.json",
        {
            "name": DATASET_NAME,
            "reference_time": iso_seconds(end),
            "start": iso_seconds(start),
            "end": iso_seconds(end),
            "step_seconds": STEP_SECONDS,
            "services": [service_name(variant, key) for key in SERVICE_KEYS],
            "generator": {"seed": seed, "variant": variant},
        },
    )


def _write_logs(path: Path, variant: str, lines: list[Line]) -> None:
    with path.open("wb") as raw, gzip.GzipFile("logs.jsonl", "wb", fileobj=raw, mtime=0) as gz:
        for t_ms, key, level, message, trace in lines:
            record = {
                "timestamp": iso_millis(t_ms),
                "service": service_name(variant, key),
                "level": level,
                "message": message,
                "trace_id": trace,
            }
            gz.write(json.dumps(record, separators=(",", ":")).encode("utf-8") + b"\n")


def _write_metrics(path: Path, variant: str, series: dict[tuple[str, str], list[float]]) -> None:
    start = window(variant)[0]
    stamps = [iso_seconds(start + timedelta(seconds=STEP_SECONDS * i)) for i in range(POINTS)]
    rows = []
    for key in SERVICE_KEYS:
        name = service_name(variant, key)
        instance = f"{name}:{_PORTS.get(key, 8080)}"
        for metric in BASELINES[key]:
            document = {
                "service": name,
                "metric": metric,
                "unit": METRIC_UNITS[metric][0],
                "labels": {"service": name, "instance": instance},
                "points": [
                    list(point) for point in zip(stamps, series[(key, metric)], strict=True)
                ],
            }
            rows.append(json.dumps(document, separators=(",", ":")))
    body = ",\n".join(rows)
    path.write_text(f'{{"step_seconds":{STEP_SECONDS},"series":[\n{body}\n]}}\n', encoding="utf-8")


def _write_alerts(path: Path, variant: str) -> None:
    start = window(variant)[0]
    index = VARIANTS.index(variant)
    alerts = []
    for alert in sorted(ALERTS, key=lambda a: a.active_minutes):
        name = service_name(variant, alert.service)
        alerts.append(
            {
                "alert_name": alert.names[index],
                "severity": alert.severity,
                "service": name,
                "description": alert.descriptions[index].format(service=name),
                "state": alert.state,
                "active_at": iso_seconds(start + timedelta(minutes=alert.active_minutes)),
            }
        )
    _dump(path, {"alerts": alerts})


def _write_runbooks(folder: Path) -> None:
    folder.mkdir(exist_ok=True)
    for stale in folder.glob("*.md"):
        if stale.name not in RUNBOOKS:
            stale.unlink()
    for filename, text in RUNBOOKS.items():
        (folder / filename).write_text(text, encoding="utf-8")


def generate(out: Path, *, seed: int = DEFAULT_SEED, variant: str = "default") -> dict[str, int]:
    """Write the dataset of ``variant`` into ``out``; returns line and byte counts."""
    window(variant)  # validates the variant before anything is written
    out.mkdir(parents=True, exist_ok=True)
    series = generate_series(seed)
    lines = generate_lines(variant, seed, series)
    _write_dataset(out, seed, variant)
    _write_logs(out / "logs.jsonl.gz", variant, lines)
    _write_metrics(out / "metrics.json", variant, series)
    _write_alerts(out / "alerts.json", variant)
    _write_runbooks(out / "runbooks")
    size = sum(path.stat().st_size for path in out.rglob("*") if path.is_file())
    return {"log_lines": len(lines), "series": len(series), "bytes": size}


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m webapp.demo.generate", description=__doc__)
    parser.add_argument("--out", type=Path, default=DATA_DIR, help=f"default: {DATA_DIR}")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--variant", choices=VARIANTS, default="default")
    args = parser.parse_args(argv)
    stats = generate(args.out, seed=args.seed, variant=args.variant)
    print(
        f"wrote {args.out}: {stats['log_lines']} log lines, {stats['series']} series, "
        f"{stats['bytes']} bytes ({args.variant}, seed {args.seed})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
