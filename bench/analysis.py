"""Benchmark: the analysis library over the bundled demo dataset (``make bench-analysis``).

Prints the median milliseconds of ``detect_anomalies`` and ``log_patterns`` per service over the
recent range (what one tool call costs the executor), of ``detect_onset`` per metric series, and
of ``resolve_window`` and ``resolve_services`` per question. Warm: the dataset is loaded and
every function called once before timing.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from webapp.analysis.anomalies import service_anomalies, service_log_patterns
from webapp.analysis.names import resolve_services
from webapp.analysis.onsets import detect_onset
from webapp.analysis.series import metric_points, recent_range
from webapp.analysis.timeexpr import resolve_window
from webapp.demo.backend import DemoTelemetryBackend

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


if __name__ == "__main__":
    main()
