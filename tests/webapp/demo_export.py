"""Export the demo dataset to the formats real systems load (for the live-backend tests and demos).

``python -m tests.webapp.demo_export --data DIR --out OUT [--shift-to-now]`` writes:

* ``metrics.om`` - OpenMetrics text, for ``promtool tsdb create-blocks-from openmetrics``;
* ``metrics.prom`` - Prometheus exposition format with millisecond timestamps, for
  VictoriaMetrics' ``/api/v1/import/prometheus``;
* ``logs/<service>.log`` - the logs as JSON lines, one file per service (a ``LOG_DIR``);
* ``rules.yml`` - Prometheus alerting rules that fire the dataset's alerts.

``shift`` moves every timestamp by a whole number of minutes (``--shift-to-now``: the reference
time becomes the current minute), so rules evaluated on the real clock see the incident.
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from webapp.demo.backend import DEFAULT_DATA_DIR


@dataclass(frozen=True)
class Rule:
    """How one demo alert is computed from a metric of its service."""

    metric: str
    threshold: float
    hold_minutes: int


#: The demo's alerts as rules (by alert name; the service comes from ``alerts.json``). The
#: hold is written as ``min_over_time(...[hold])`` so a rule fires on its first evaluation;
#: a pending alert gets a ``for`` longer than any test.
RULES = {
    "PaymentLatencyHigh": Rule("latency_p95_ms", 2000, 3),
    "ShippingErrorRateHigh": Rule("error_rate", 0.10, 3),
    "OrderErrorRateHigh": Rule("error_rate", 0.10, 3),
    "RedisMemoryFull": Rule("redis_memory_used_ratio", 0.98, 1),
    "CatalogLatencyHigh": Rule("latency_p95_ms", 500, 3),
    "GatewayErrorRateHigh": Rule("error_rate", 0.08, 3),
}


def _labels(labels: dict[str, str]) -> str:
    body = ",".join(
        f'{key}="{str(value).replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
        for key, value in sorted(labels.items())
    )
    return "{" + body + "}"


def _epoch(stamp: str, shift: timedelta) -> float:
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00")) + shift
    return moment.timestamp()


def _series(data: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads((data / "metrics.json").read_text())["series"]
    return rows


def write_openmetrics(data: Path, out: Path, shift: timedelta = timedelta(0)) -> Path:
    """Every series as OpenMetrics text (families contiguous, samples in time order)."""
    families: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in _series(data):
        families[row["metric"]].append(row)
    lines: list[str] = []
    for metric, rows in sorted(families.items()):
        lines.append(f"# TYPE {metric} gauge")
        for row in rows:
            labels = _labels(row.get("labels") or {"service": row["service"]})
            lines.extend(
                f"{metric}{labels} {value} {_epoch(stamp, shift):.0f}"
                for stamp, value in row["points"]
            )
    lines.append("# EOF")
    path = out / "metrics.om"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_exposition(data: Path, out: Path, shift: timedelta = timedelta(0)) -> Path:
    """Every sample in Prometheus exposition format with millisecond timestamps."""
    lines = [
        f"{row['metric']}{_labels(row.get('labels') or {'service': row['service']})} "
        f"{value} {int(_epoch(stamp, shift) * 1000)}"
        for row in _series(data)
        for stamp, value in row["points"]
    ]
    path = out / "metrics.prom"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _shifted(line: str, shift: timedelta) -> str:
    item = json.loads(line)
    moment = datetime.fromisoformat(item["timestamp"].replace("Z", "+00:00")) + shift
    item["timestamp"] = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    return json.dumps(item, separators=(",", ":"), ensure_ascii=False)


def write_log_dir(data: Path, out: Path, shift: timedelta = timedelta(0)) -> Path:
    """The logs as JSON lines, one ``<service>.log`` per service."""
    folder = out / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    handles: dict[str, Any] = {}
    try:
        with gzip.open(data / "logs.jsonl.gz", "rt", encoding="utf-8") as lines:
            for line in lines:
                service = json.loads(line)["service"]
                if shift:
                    line = _shifted(line, shift)
                if service not in handles:
                    handles[service] = (folder / f"{service}.log").open("w", encoding="utf-8")
                handles[service].write(line if line.endswith("\n") else line + "\n")
    finally:
        for handle in handles.values():
            handle.close()
    return folder


def write_rules(data: Path, out: Path) -> Path:
    """Alerting rules for the dataset's alerts (YAML is a JSON superset: written as JSON)."""
    rules = []
    for alert in json.loads((data / "alerts.json").read_text())["alerts"]:
        rule = RULES.get(alert["alert_name"])
        if rule is None:
            continue
        selector = _labels({"__name__": rule.metric, "service": alert["service"]})
        entry: dict[str, Any] = {
            "alert": alert["alert_name"],
            "expr": f"min_over_time({selector}[{rule.hold_minutes}m]) > {rule.threshold}",
            "labels": {"severity": alert["severity"], "service": alert["service"]},
            "annotations": {"description": alert["description"]},
        }
        if alert["state"] == "pending":
            entry["for"] = "1h"
        rules.append(entry)
    path = out / "rules.yml"
    path.write_text(json.dumps({"groups": [{"name": "demo", "rules": rules}]}, indent=1))
    return path


def shift_to_now(data: Path, now: datetime | None = None) -> timedelta:
    """The whole-minute shift that moves the dataset's reference time to the current minute."""
    dataset = json.loads((data / "dataset.json").read_text())
    reference = datetime.fromisoformat(dataset["reference_time"].replace("Z", "+00:00"))
    current = (now or datetime.now(timezone.utc)).replace(second=0, microsecond=0)
    return current - reference


def main(argv: list[str] | None = None) -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--shift-to-now", action="store_true")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    shift = shift_to_now(args.data) if args.shift_to_now else timedelta(0)
    write_openmetrics(args.data, args.out, shift)
    write_exposition(args.data, args.out, shift)
    write_log_dir(args.data, args.out, shift)
    write_rules(args.data, args.out)


if __name__ == "__main__":
    main()
