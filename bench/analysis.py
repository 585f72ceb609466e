"""Benchmark: the analysis library over the bundled demo dataset (``make bench-analysis``).

Prints the median milliseconds of ``detect_anomalies`` and ``log_patterns`` per service over the
recent range (what one tool call costs the executor), of ``detect_onset`` per metric series, and
of ``resolve_window`` and ``resolve_services`` per question. Warm: the dataset is loaded and
every function called once before timing.

Then the log-template miner on the regression set (``tests/webapp/analysis/logs``): grouping
accuracy per system and its mean, for ``mine_patterns`` and for plain drain3 with its defaults
(the library baseline), and lines per second of ``mine_patterns`` on one core, cold (caches
cleared): over the regression set, and over the demo dataset's log lines in one call.
"""

from __future__ import annotations

import gzip
import json
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from drain3 import TemplateMiner

from webapp.analysis.anomalies import service_anomalies, service_log_patterns
from webapp.analysis.logpatterns import clear_caches, mine_patterns
from webapp.analysis.names import resolve_services
from webapp.analysis.onsets import detect_onset
from webapp.analysis.series import metric_points, recent_range
from webapp.analysis.timeexpr import resolve_window
from webapp.demo.backend import DEFAULT_DATA_DIR, DemoTelemetryBackend

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the set lives with the tests
from tests.webapp.analysis.logsets import (
    grouping_accuracy,
    mined_groups,
    records,
    systems,
)

ROUNDS = 5
QUESTIONS = [
    "Why is payment-service slow since 10:00?",
    "since 11:00 CET",
    "payment-service 为什么从10点开始变慢?",
    "in the last 30 minutes",
    "p95 is 1.30 s",
    "between 09:50 and 10:30",
    "why is paymnt-service slow?",
    "缓存命中率下降的原因是什么?",
]


def median_ms(fn: Callable[[], Any], rounds: int = ROUNDS) -> float:
    fn()
    spent = []
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        spent.append((time.perf_counter() - started) * 1000)
    return statistics.median(spent)


def main() -> None:
    backend = DemoTelemetryBackend()
    start, end = recent_range(backend)
    now = backend.reference_time()
    services = backend.services()
    print(f"{'service':<20} {'detect_anomalies ms':>20} {'log_patterns ms':>16}")
    anomalies, patterns = [], []
    for service in services:
        a = median_ms(partial(service_anomalies, backend, service, start, end))
        p = median_ms(partial(service_log_patterns, backend, service, start, end))
        anomalies.append(a)
        patterns.append(p)
        print(f"{service:<20} {a:>20.1f} {p:>16.1f}")
    mid_a, mid_p = statistics.median(anomalies), statistics.median(patterns)
    print(f"{'median':<20} {mid_a:>20.1f} {mid_p:>16.1f}")
    series = [
        metric_points(backend, service, metric, start, end)[0]
        for service, metrics in backend.metrics_by_service().items()
        for metric in metrics
    ]
    onset = median_ms(lambda: [detect_onset(points, signal="s") for points in series])
    print(f"detect_onset: {onset / len(series):.2f} ms per series ({len(series)} series)")
    window = median_ms(lambda: [resolve_window(q, now) for q in QUESTIONS], rounds=20)
    print(f"resolve_window: {window / len(QUESTIONS):.3f} ms per question")
    names = median_ms(lambda: [resolve_services(q, services) for q in QUESTIONS], rounds=20)
    print(f"resolve_services: {names / len(QUESTIONS):.3f} ms per question")


def drain3_groups(messages: list[str]) -> list[int]:
    """The cluster plain drain3 (default settings) puts each message in."""
    miner = TemplateMiner()
    return [miner.add_log_message(message)["cluster_id"] for message in messages]


def cold_mining_ms(lines: list[dict[str, Any]]) -> float:
    """Median milliseconds of one ``mine_patterns`` call with its caches cleared."""

    def cold() -> None:
        clear_caches()
        mine_patterns(lines, None)

    return median_ms(cold)


def templates() -> None:
    sets = {name: (truth, records(messages)) for name, (truth, messages) in systems().items()}
    print(f"\n{'system':<16} {'lines':>6} {'GA mine_patterns':>17} {'GA drain3 defaults':>19}")
    ours, baseline = [], []
    for name, (truth, lines) in sets.items():
        ours.append(grouping_accuracy(truth, mined_groups(lines)))
        baseline.append(grouping_accuracy(truth, drain3_groups([r["message"] for r in lines])))
        print(f"{name:<16} {len(lines):>6} {ours[-1]:>17.3f} {baseline[-1]:>19.3f}")
    mean_ours, mean_baseline = statistics.mean(ours), statistics.mean(baseline)
    print(f"{'mean GA':<16} {'':>6} {mean_ours:>17.3f} {mean_baseline:>19.3f}")
    total = sum(len(lines) for _, lines in sets.values())
    spent = sum(cold_mining_ms(lines) for _, lines in sets.values())
    print(f"mine_patterns, regression set: {total / spent * 1000:,.0f} lines/s (cold, per system)")
    with gzip.open(DEFAULT_DATA_DIR / "logs.jsonl.gz", "rt", encoding="utf-8") as handle:
        demo = records([json.loads(line)["message"] for line in handle])
    rate = len(demo) / cold_mining_ms(demo) * 1000
    print(f"mine_patterns, demo dataset ({len(demo):,} lines in one call): {rate:,.0f} lines/s")


if __name__ == "__main__":
    main()
    templates()
