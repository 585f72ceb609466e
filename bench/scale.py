"""Benchmark: runs/s with 1, 2 and 4 Celery workers, and a chaos run (``make bench-scale``).

Each configuration is a fresh deployment (:mod:`bench.cluster`: private Redis, a scratch
MariaDB database, gunicorn gevent web, N Celery worker processes of concurrency 1, the offline
model). ``--runs`` complete diagnoses are streamed through the web app by as many concurrent
clients; runs/s is runs over the wall time from the first request to the last ``done``.

Chaos (:func:`chaos`): two workers behind a database proxy, a burst of ``--runs`` runs (half
streamed, half plain) while a worker, a pool child and the web process are SIGKILLed and the
database drops every connection, then refuses them for 5 s. The report: every accepted run's
end (SUCCESS, or FAILED by reason), runs stuck PENDING or RUNNING (must be 0), runs executed
twice (must be 0), the share of runs hit by a kill that ended SUCCESS by resuming (target
>= 90%), and what the clients were told. One JSON line closes the report.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import signal
import subprocess
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from cluster import Cluster, stream_run  # bench/cluster.py, next to this script

from webapp.persistence.db import bind, open_database
from webapp.persistence.models import AgentStep, DiagnosisRun, utcnow

QUESTIONS = [
    "Why is payment-service slow since 10:00?",
    "What is wrong with checkout errors in the last hour?",
    "Why did the order service start failing?",
]
LEASE_SECONDS = 6
MAX_RESUMES = 2  # RUN_MAX_RESUMES's default


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


def running_on(cluster: Cluster, pids: set[str]) -> bool:
    """Wait until a run is RUNNING in one of ``pids`` (a worker's processes), so a kill right
    after interrupts it; False once no run is left in flight (the burst is over)."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        active = rows(cluster, DiagnosisRun.status.in_(("PENDING", "RUNNING")))
        if not active:
            return False
        running = [r for r in active if r.status == "RUNNING"]
        if any(str(r.lease_owner).rsplit(":", 1)[-1] in pids for r in running):
            return True
        time.sleep(0.05)
    return False


def kill(pids: set[str]) -> None:
    """SIGKILL these processes (those still alive)."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid), signal.SIGKILL)


def children(pid: int) -> list[str]:
    """The process ids of ``pid``'s children."""
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False)
    return found.stdout.split()


def rows(cluster: Cluster, where: Any, *fields: Any) -> list[Any]:
    """Run rows matching ``where``, read directly (not through the proxy)."""
    database = bind(open_database(cluster.database_url))
    try:
        with database.connection_context():
            return list(DiagnosisRun.select(*fields).where(where))
    finally:
        database.close()


def plain_run(port: int, question: str, timeout: float = 600) -> dict[str, Any]:
    """POST /api/chat and wait for its answer: run id and status (None when cut off)."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        conn.request(
            "POST",
            "/api/chat",
            json.dumps({"Question": question}),
            {"Content-Type": "application/json"},
        )
        data = json.loads(conn.getresponse().read()).get("data") or {}
        conn.close()
        return {"run_id": data.get("runId"), "status": data.get("status")}
    except (OSError, ValueError, http.client.HTTPException):
        return {"run_id": None, "status": None}


def mixed_load(cluster: Cluster, runs: int) -> list[dict[str, Any]]:
    """``runs`` runs from as many clients, half streamed, half plain."""

    def one(i: int) -> dict[str, Any]:
        question = QUESTIONS[i % len(QUESTIONS)]
        if i % 2:
            return plain_run(cluster.port, question)
        try:
            return stream_run(cluster.port, question)
        except (OSError, ValueError, http.client.HTTPException):  # cut off (the web was killed)
            return {"run_id": None, "status": None}

    with ThreadPoolExecutor(max_workers=runs) as pool:
        return list(pool.map(one, range(runs)))


def executed_twice(cluster: Cluster, run: Any) -> bool:
    """More model steps of a one-call agent (planner, verifier, composer) than its node ran in
    the final trace, beyond one per resume (a node cut short by a dead worker runs again)."""
    database = bind(open_database(cluster.database_url))
    try:
        with database.connection_context():
            steps = Counter(
                s.agent_name
                for s in AgentStep.select(AgentStep.agent_name).where(
                    AgentStep.run_id == run.run_id
                )
            )
    finally:
        database.close()
    transitions = (run.orchestration_trace or {}).get("transitions") or []
    ran = Counter(t["from"] for t in transitions if t["reason_code"] != "resumed")
    if run.orchestration_trace and run.orchestration_trace.get("final_node"):
        ran[run.orchestration_trace["final_node"]] += 1
    return any(steps[a] > ran[a] + run.resumes for a in ("planner", "verifier", "composer"))


def chaos(runs: int) -> dict[str, Any]:
    """A burst of ``runs`` runs (half streamed, half plain) under every fault at once: a whole
    worker SIGKILLed mid-run, a worker's pool child SIGKILLed, the web process SIGKILLed, every
    database connection dropped, the database refusing connections for 5 s. Then the database
    is asked what became of every accepted run, and the clients what they were told."""
    cluster = Cluster(lease_seconds=LEASE_SECONDS, proxy=True)
    proxy = cluster.proxy
    assert proxy is not None
    try:
        cluster.start_web()
        victim = cluster.start_worker()
        cluster.start_worker()
        load(cluster, 4)  # warm-up: both workers have built their services
        began = utcnow()
        results: list[dict[str, Any]] = []
        loader = threading.Thread(target=lambda: results.extend(mixed_load(cluster, runs)))
        loader.start()
        while not rows(cluster, DiagnosisRun.status.in_(("PENDING", "RUNNING"))):
            time.sleep(0.1)  # the burst has begun
        faults: dict[str, int] = Counter()

        def kill_worker() -> Any:
            pids = {str(victim.pid), *children(victim.pid)}
            faults["workers_killed_mid_run"] += running_on(cluster, pids)
            kill(pids)
            victim.wait(timeout=10)
            return cluster.start_worker()

        def kill_pool_child() -> None:
            pids = set(children(victim.pid))  # the worker forks another
            faults["pool_children_killed_mid_run"] += running_on(cluster, pids)
            kill(pids)

        victim = kill_worker()
        for child in children(cluster.procs[1].pid):  # the web (redis is procs[0])
            os.kill(int(child), signal.SIGKILL)  # gunicorn starts another
            faults["web_processes_killed"] += 1
        proxy.drop()
        faults["database_connections_dropped"] += 1
        kill_pool_child()
        victim = kill_worker()
        proxy.down()
        time.sleep(5)
        proxy.up()
        faults["database_refused_5s"] += 1
        kill_pool_child()
        loader.join(timeout=900)
        # Every run settles within its bounds; then nothing may be left in flight.
        deadline = time.monotonic() + LEASE_SECONDS * (MAX_RESUMES + 2) + 120
        while time.monotonic() < deadline and rows(
            cluster,
            DiagnosisRun.status.in_(("PENDING", "RUNNING")) & (DiagnosisRun.started_at >= began),
        ):
            time.sleep(1)
        time.sleep(LEASE_SECONDS + LEASE_SECONDS / 3)
        accepted = rows(cluster, DiagnosisRun.started_at >= began)
        return account(cluster, accepted, results, dict(faults))
    finally:
        cluster.stop()


def account(
    cluster: Cluster,
    accepted: list[Any],
    results: list[dict[str, Any]],
    faults: dict[str, int],
) -> dict[str, Any]:
    """The figures of a chaos run."""
    by_status = Counter(
        r.status if r.status != "FAILED" else f"FAILED {(r.error_message or '').split(':')[0]}"
        for r in accepted
    )
    # Hit by a kill: its holder died while it ran (the reaper took it back, or failed it).
    hit = [r for r in accepted if r.resumes or (r.error_message or "").startswith("interrupted")]
    record = {r.run_id: r.status for r in accepted}
    told = [r for r in results if r["run_id"] and r["status"]]
    return {
        **faults,
        "accepted": len(accepted),
        "by_status": dict(sorted(by_status.items())),
        "stuck": sum(r.status in ("PENDING", "RUNNING") for r in accepted),
        "executed_twice": sum(executed_twice(cluster, r) for r in accepted),
        "kill_hit": len(hit),
        "kill_hit_resumed_success_pct": round(
            100 * sum(r.status == "SUCCESS" for r in hit) / len(hit)
        )
        if hit
        else None,
        "clients": len(results),
        "clients_told_an_end": len(told),
        "clients_cut_off": len(results) - len(told),
        "clients_told_a_status_the_record_lacks": sum(
            record.get(r["run_id"]) != r["status"] for r in told
        ),
    }


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
        for key, value in report["chaos"].items():
            print(f"chaos {key}: {value}", flush=True)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
