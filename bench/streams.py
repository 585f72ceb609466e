"""Benchmark: 200 open SSE streams and ``/healthz`` latency (``make bench-streams``).

A throwaway deployment (:mod:`bench.cluster`): one gunicorn web worker with ``make serve``'s
gevent config, ``RUN_EXECUTOR=celery`` with two Celery worker processes, private Redis, a
scratch MariaDB database. ``--streams`` clients each POST ``/api/chat_stream`` at once and keep
reading; from then on ``/healthz`` is requested every 20 ms for ``--seconds`` (default 30),
while the streams open and run. Reported: how many streams had their first event within that
window, its time (p50/p95), and ``/healthz`` latency (p50/p95/max). The target is ``/healthz``
p95 under 200 ms with 200 streams. ``--threaded`` runs the same against
the previous setup (gthread, 2 workers x 8 threads) for comparison.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import threading
import time
from typing import Any

from cluster import Cluster, percentile  # bench/cluster.py, next to this script

QUESTION = "Why is payment-service slow since 10:00?"


def open_stream(port: int, opened: list[float], stop: threading.Event) -> None:
    """POST a chat stream, note the time to its first event, keep reading until ``stop``."""
    started = time.perf_counter()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        conn.request(
            "POST",
            "/api/chat_stream",
            json.dumps({"Question": QUESTION}),
            {"Content-Type": "application/json"},
        )
        response = conn.getresponse()
        response.read1(1)
        opened.append(time.perf_counter() - started)
        while not stop.is_set() and response.read1(65536):
            pass
        conn.close()
    except OSError:
        pass


HEALTHZ_TIMEOUT = 30.0


def healthz(port: int) -> float:
    """Seconds one ``GET /healthz`` takes on a fresh connection (the timeout if none came)."""
    started = time.perf_counter()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=HEALTHZ_TIMEOUT)
        conn.request("GET", "/healthz")
        conn.getresponse().read()
        conn.close()
    except OSError:  # a timeout: the server had no thread left for it
        return HEALTHZ_TIMEOUT
    return time.perf_counter() - started


def measure(streams: int, seconds: float, web_args: tuple[str, ...], web_workers: int) -> Any:
    cluster = Cluster(web_args=web_args, web_workers=web_workers)
    stop = threading.Event()
    try:
        cluster.start_web()
        cluster.start_worker()
        cluster.start_worker()
        opened: list[float] = []
        clients = [
            threading.Thread(target=open_stream, args=(cluster.port, opened, stop), daemon=True)
            for _ in range(streams)
        ]
        for client in clients:
            client.start()
        samples: list[float] = []
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            samples.append(healthz(cluster.port))
            time.sleep(0.02)
        return {
            "streams": streams,
            "opened": len(opened),
            "first_event_p50_ms": 1000 * statistics.median(opened) if opened else None,
            "first_event_p95_ms": 1000 * percentile(opened, 95) if opened else None,
            "healthz_samples": len(samples),
            "healthz_p50_ms": 1000 * statistics.median(samples),
            "healthz_p95_ms": 1000 * percentile(samples, 95),
            "healthz_max_ms": 1000 * max(samples),
        }
    finally:
        stop.set()
        cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--threaded", action="store_true", help="gthread 2x8 instead of gevent")
    args = parser.parse_args()
    if args.threaded:
        web_args: tuple[str, ...] = ("--worker-class", "gthread", "--threads", "8")
        figures = measure(args.streams, args.seconds, web_args, 2)
    else:
        figures = measure(args.streams, args.seconds, (), 1)
    for key, value in figures.items():
        print(f"{key:22} {value:.1f}" if isinstance(value, float) else f"{key:22} {value}")
    print(json.dumps({"worker": "gthread" if args.threaded else "gevent", **figures}))


if __name__ == "__main__":
    main()
