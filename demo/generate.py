"""Write the demo dataset: ``python -m demo.generate --out DIR [--seed 7] [--variant ...]``.

Output (deterministic for a seed and variant, byte for byte; the format is
``webapp.demo.files``):

* ``dataset.json`` - name, reference time, window, step, services and their aliases (Chinese
  names included); no scenario answers.
* ``logs.jsonl.gz`` - one JSON record per line, sorted by time, gzip with ``mtime=0``.
* ``metrics.json`` - one series per service and metric, one point per minute. The
  ``deploy_version`` series (unit ``version``) encodes a release ``major.minor.patch`` as
  ``major + minor / 10 + patch / 100``: 2.7.3 is 2.73, 2.8.0 is 2.8.
* ``alerts.json`` - the alerts at the reference time.
* ``runbooks/*.md`` - the bundled runbooks of ``webapp/demo/data/runbooks``, the same for every
  variant: generic (no service names), in the words of both log phrasings of each scenario.

The committed ``webapp/demo/data`` is this command's output with the defaults.
"""

from __future__ import annotations

import argparse
from datetime import timedelta
from pathlib import Path

from demo.loggen import Line, generate_lines
from demo.metricgen import BASELINES, METRIC_UNITS, generate_series
from demo.scenarios import ALERTS
from demo.system import ALIASES, SERVICE_KEYS, STEP_SECONDS, VARIANTS, service_name, window
from demo.writer import MetricRow, folder_size, write_metrics, write_runbooks
from webapp.demo.backend import DEFAULT_DATA_DIR
from webapp.demo.files import iso_seconds, write_alerts, write_dataset_json, write_logs

DEFAULT_SEED = 7
DATASET_NAME = "e-commerce demo system"
_PORTS = {"mysql-primary": 3306, "redis-cache": 6379}


def _write_dataset(out: Path, seed: int, variant: str) -> None:
    start, end = window(variant)
    write_dataset_json(
        out,
        name=DATASET_NAME,
        start=start,
        end=end,
        step_seconds=STEP_SECONDS,
        services=[service_name(variant, key) for key in SERVICE_KEYS],
        aliases={service_name(variant, key): ALIASES[key] for key in SERVICE_KEYS},
        generator={"seed": seed, "variant": variant},
    )


def _log_records(variant: str, lines: list[Line]) -> list[tuple[int, str, str, str, str | None]]:
    return [
        (t_ms, service_name(variant, key), level, message, trace)
        for t_ms, key, level, message, trace in lines
    ]


def _metric_rows(variant: str, series: dict[tuple[str, str], list[float]]) -> list[MetricRow]:
    rows = []
    for key in SERVICE_KEYS:
        name = service_name(variant, key)
        labels = {"service": name, "instance": f"{name}:{_PORTS.get(key, 8080)}"}
        for metric in BASELINES[key]:
            rows.append(
                MetricRow(name, metric, METRIC_UNITS[metric][0], labels, series[(key, metric)])
            )
    return rows


def _alerts(variant: str) -> list[dict[str, str]]:
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
    return alerts


def generate(out: Path, *, seed: int = DEFAULT_SEED, variant: str = "default") -> dict[str, int]:
    """Write the dataset of ``variant`` into ``out``; returns line and byte counts."""
    window(variant)  # validates the variant before anything is written
    out.mkdir(parents=True, exist_ok=True)
    series = generate_series(seed)
    lines = generate_lines(variant, seed, series)
    _write_dataset(out, seed, variant)
    write_logs(out / "logs.jsonl.gz", _log_records(variant, lines))
    write_metrics(
        out / "metrics.json", window(variant)[0], STEP_SECONDS, _metric_rows(variant, series)
    )
    write_alerts(out / "alerts.json", _alerts(variant))
    runbooks = {
        p.name: p.read_text(encoding="utf-8") for p in (DEFAULT_DATA_DIR / "runbooks").glob("*.md")
    }
    write_runbooks(out / "runbooks", runbooks)
    return {"log_lines": len(lines), "series": len(series), "bytes": folder_size(out)}


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m demo.generate", description=__doc__)
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_DATA_DIR, help=f"default: {DEFAULT_DATA_DIR}"
    )
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
