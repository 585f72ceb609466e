"""Benchmark: runs/s with 1, 2 and 4 Celery workers, and a chaos run (``make bench-scale``).

Each configuration is a fresh deployment (:mod:`bench.cluster`: private Redis, a scratch
MariaDB database, gunicorn gevent web, N Celery worker processes of concurrency 1, the offline
model). ``--runs`` complete diagnoses are streamed through the web app by as many concurrent
clients; runs/s is runs over the wall time from the first request to the last ``done``.

Chaos: two workers, ``--runs`` streamed runs; a worker is SIGKILLed mid-load and a fresh one
started; when the load is over the database is asked what became of every run: finished
(SUCCESS), failed as interrupted (the reaper's "interrupted: ..."), failed otherwise, and stuck
(still PENDING or RUNNING after lease + reaper tick: must be 0). One JSON line closes the report.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from cluster import Cluster, stream_run  # bench/cluster.py, next to this script

from webapp.persistence.db import bind, open_database
from webapp.persistence.models import DiagnosisRun

QUESTIONS = [
    "Why is payment-service slow since 10:00?",
    "What is wrong with checkout errors in the last hour?",
    "Why did the order service start failing?",
]
LEASE_SECONDS = 6


def load(cluster: Cluster, runs: int) -> tuple[float, list[dict[str, Any]]]:
    """``runs`` streamed runs from as many clients; (wall seconds, per-run results)."""
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=runs) as pool:
        results = list(
            pool.map(lambda i: stream_run(cluster.port, QUESTIONS[i % len(QUESTIONS)]), range(runs))
        )
    return time.perf_counter() - started, results


def throughput(workers: int, runs: int) -> dict[str, Any]:
    """runs/s with ``workers`` Celery workers."""
    cluster = Cluster(lease_seconds=LEASE_SECONDS)
    try:
        cluster.start_web()
        for _ in range(workers):
            cluster.start_worker()
        load(cluster, 2)  # warm-up: imports, connections, knowledge index
        wall, results = load(cluster, runs)
        ok = sum(r["status"] == "SUCCESS" for r in results)
        return {
            "workers": workers,
            "runs": runs,
            "success": ok,
            "runs_per_s": runs / wall,
            "failures": failures(cluster, results),
        }
    finally:
        cluster.stop()


def failures(cluster: Cluster, results: list[dict[str, Any]]) -> dict[str, int]:
    """Error messages of the runs that did not succeed, counted."""
    ids = [r["run_id"] for r in results if r["run_id"] and r["status"] != "SUCCESS"]
    if not ids:
        return {}
    database = bind(open_database(cluster.database_url))
    with database.connection_context():
        rows = list(DiagnosisRun.select().where(DiagnosisRun.run_id.in_(ids)))
    database.close()
    counted: dict[str, int] = {}
    for row in rows:
        key = f"{row.status}: {(row.error_message or '')[:80]}"
        counted[key] = counted.get(key, 0) + 1
    return counted


def running_on(cluster: Cluster, worker: Any, timeout: float = 180) -> bool:
    """Wait until a run is RUNNING in ``worker``'s process tree (so a kill interrupts one)."""
    pids = {str(worker.pid)}
    found = subprocess.run(
        ["pgrep", "-P", str(worker.pid)], capture_output=True, text=True, check=False
    )
    pids.update(found.stdout.split())
    database = bind(open_database(cluster.database_url))
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            with database.connection_context():
                owners = [
                    str(r.lease_owner)
                    for r in DiagnosisRun.select(DiagnosisRun.lease_owner).where(
                        DiagnosisRun.status == "RUNNING"
                    )
                ]
            if any(owner.rsplit(":", 1)[-1] in pids for owner in owners):
                return True
            time.sleep(0.1)
        return False
    finally:
        database.close()


def chaos(runs: int, kills: int = 2) -> dict[str, Any]:
    """SIGKILL a worker mid-run ``kills`` times under load (a fresh one replaces it each time);
    account for every run."""
    cluster = Cluster(lease_seconds=LEASE_SECONDS)
    try:
        cluster.start_web()
        victim = cluster.start_worker()
        cluster.start_worker()
        load(cluster, 4)  # warm-up: both workers have built their services
        results: list[dict[str, Any]] = []
        loader = threading.Thread(target=lambda: results.extend(load(cluster, runs)[1]))
        loader.start()
        killed_mid_run = 0
        for _ in range(kills):
            killed_mid_run += running_on(cluster, victim)
            cluster.kill(victim)
            victim = cluster.start_worker()
        loader.join(timeout=300)
        time.sleep(LEASE_SECONDS + LEASE_SECONDS / 3 + 1)
        database = bind(open_database(cluster.database_url))
        ids = [r["run_id"] for r in results if r["run_id"]]
        with database.connection_context():
            rows = list(DiagnosisRun.select().where(DiagnosisRun.run_id.in_(ids)))
        database.close()
        interrupted = [r for r in rows if (r.error_message or "").startswith("interrupted")]
        return {
            "workers_killed_mid_run": killed_mid_run,
            "started": len(ids),
            "finished": sum(r.status == "SUCCESS" for r in rows),
            "failed_interrupted": len(interrupted),
            "failed_other": sum(r.status == "FAILED" for r in rows) - len(interrupted),
            "stuck": sum(r.status in ("PENDING", "RUNNING") for r in rows),
            "clients_told_done": sum(r["status"] is not None for r in results),
        }
    finally:
        cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_RUNS", "40")))
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--skip-chaos", action="store_true")
    parser.add_argument("--only-chaos", action="store_true")
    args = parser.parse_args()
    report: dict[str, Any] = {"cpus": os.cpu_count(), "throughput": []}
    for n in [] if args.only_chaos else [int(w) for w in args.workers.split(",")]:
        figures = throughput(n, args.runs)
        report["throughput"].append(figures)
        print(
            f"{n} worker(s): {figures['runs_per_s']:.2f} runs/s "
            f"({figures['success']}/{figures['runs']} SUCCESS)",
            flush=True,
        )
    if not args.skip_chaos:
        report["chaos"] = chaos(args.runs)
        print("chaos:", ", ".join(f"{k} {v}" for k, v in report["chaos"].items()), flush=True)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
