"""Benchmark: offline chat runs/s with ``make serve`` (``make bench-serve``).

Starts what ``make serve`` starts with no configuration - gunicorn with its gevent config and
``--workers`` web processes (default 2, as ``WORKERS``), runs executed in the web processes
(``RUN_EXECUTOR=thread``), the offline model, no Redis - on a fresh SQLite file (or, with
``--mysql``, a scratch database on ``BENCH_MYSQL_URL``), 127.0.0.1 and a free port. Then
``--clients`` concurrent clients POST ``/api/chat`` (the demo questions in turn) until
``--runs`` runs are done, after ``--warmup`` runs that are not timed. Reported: runs/s over the
wall time of the timed runs, request latency p50/p95, and CPU per run - the user + system time
the web processes spent (from ``/proc``) divided by the runs: the figure a loaded machine
disturbs least - and, timed in this process right after, the CPU of the in-memory offline
diagnosis of the same questions (no HTTP, database, events or history), whose difference is
what serving costs a run. The target is >= 40 runs/s on this 2-core machine. One JSON line
closes the report.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from cluster import Cluster, percentile, wait_until  # bench/cluster.py, next to this script

from demo.scenarios import scenario_records
from webapp.wiring import offline_diagnoser

TARGET_RUNS_PER_S = 40
QUESTIONS = [record["question"] for record in scenario_records("default")]
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds of ``pids`` (and of their children that were waited for)."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += sum(int(v) for v in fields[11:15])  # utime stime cutime cstime
    return total / TICKS


def children(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False)
    return [int(p) for p in found.stdout.split()]


def chat(port: int, question: str) -> tuple[float, str]:
    """One ``POST /api/chat``: (seconds, run status)."""
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    headers = {"Content-Type": "application/json"}
    conn.request("POST", "/api/chat", json.dumps({"Question": question}), headers)
    response = conn.getresponse()
    body = json.loads(response.read())
    conn.close()
    status = body.get("data", {}).get("status") if response.status == 200 else response.status
    return time.perf_counter() - started, str(status)


def load(port: int, runs: int, clients: int) -> tuple[float, list[float], list[str]]:
    """``runs`` chats from ``clients`` threads: (wall seconds, latencies, statuses)."""
    lock = threading.Lock()
    latencies: list[float] = []
    statuses: list[str] = []
    issued = [0]

    def client() -> None:
        while True:
            with lock:
                if issued[0] >= runs:
                    return
                n = issued[0]
                issued[0] += 1
            took, status = chat(port, QUESTIONS[n % len(QUESTIONS)])
            with lock:
                latencies.append(took)
                statuses.append(status)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started, latencies, statuses


def diagnosis_cpu_ms(runs: int) -> float:
    """Mean CPU milliseconds of the in-memory offline diagnosis over the questions in turn."""
    diagnose = offline_diagnoser().diagnose
    for question in QUESTIONS:
        diagnose(question)
    started = time.process_time()
    for n in range(runs):
        diagnose(QUESTIONS[n % len(QUESTIONS)])
    return (time.process_time() - started) / runs * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--workers", type=int, default=int(os.environ.get("WORKERS", "2")))
    parser.add_argument("--mysql", action="store_true", help="MariaDB instead of SQLite")
    args = parser.parse_args()
    if not args.mysql:
        os.environ["BENCH_MYSQL_URL"] = ""  # the Cluster's SQLite file
    cluster = Cluster(web_workers=args.workers, redis=False)
    try:
        cluster.start_web()
        master = cluster.procs[-1].pid
        wait_until(lambda: len(children(master)) == args.workers, 60, "web workers")
        load(cluster.port, args.warmup, args.clients)
        pids = [master, *children(master)]
        cpu_before = cpu_seconds(pids)
        wall, latencies, statuses = load(cluster.port, args.runs, args.clients)
        cpu = cpu_seconds(pids) - cpu_before
    finally:
        cluster.stop()
    alone = diagnosis_cpu_ms(max(len(QUESTIONS), args.runs // 4))
    figures: dict[str, Any] = {
        "database": "MariaDB" if args.mysql else "SQLite",
        "web_workers": args.workers,
        "clients": args.clients,
        "runs": args.runs,
        "success": statuses.count("SUCCESS"),
        "runs_per_s": round(args.runs / wall, 1),
        "latency_p50_ms": round(statistics.median(latencies) * 1000, 1),
        "latency_p95_ms": round(percentile(latencies, 95) * 1000, 1),
        "cpu_ms_per_run": round(cpu / args.runs * 1000, 1),
        "in_memory_diagnosis_cpu_ms": round(alone, 1),
        "serving_cpu_ms_per_run": round(cpu / args.runs * 1000 - alone, 1),
        "cpu_bound_runs_per_s": round(
            (os.cpu_count() or 1) / (cpu / args.runs), 1
        ),  # if the web processes had every core to themselves
        "load_average": round(os.getloadavg()[0], 1),
        "target_runs_per_s": TARGET_RUNS_PER_S,
    }
    print(
        f"make serve ({args.workers} gevent workers, {figures['database']}), "
        f"{args.clients} clients, {args.runs} offline chat runs ({figures['success']} SUCCESS): "
        f"{figures['runs_per_s']} runs/s (target >= {TARGET_RUNS_PER_S}); latency p50 "
        f"{figures['latency_p50_ms']} ms, p95 {figures['latency_p95_ms']} ms; CPU "
        f"{figures['cpu_ms_per_run']} ms per run ({figures['cpu_bound_runs_per_s']} runs/s on "
        f"{os.cpu_count()} idle cores), of which the in-memory diagnosis "
        f"{figures['in_memory_diagnosis_cpu_ms']} ms and serving "
        f"{figures['serving_cpu_ms_per_run']} ms; load average {figures['load_average']}"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
