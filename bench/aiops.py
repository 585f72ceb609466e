"""Benchmark: one complete offline AIOps run (every firing demo alert) in memory.

The supervisor graph, each alert's nested diagnosis graph with the offline provider, the tools
against the demo backend and the knowledge index, the gatekeeper, the report and the audit rows.
Prints the median wall-clock and CPU (process time: less sensitive to a busy shared machine)
milliseconds per run over ``ROUNDS`` runs after ``WARMUP`` runs. Run with
``make bench-aiops`` (or ``python bench/aiops.py``).
"""

from __future__ import annotations

import json
import statistics
import sys
import time

from webapp.wiring import offline_aiops

ROUNDS, WARMUP = 15, 2


def main() -> None:
    runner = offline_aiops()
    times, cpu = [], []
    for n in range(WARMUP + ROUNDS):
        started, started_cpu = time.perf_counter(), time.process_time()
        result = runner.run(None, session_id="bench", run_id=f"run-bench-{n}")
        elapsed = (time.perf_counter() - started) * 1000
        if result.run.status != "SUCCESS":
            sys.exit(f"run {n} failed: {result.run.error}")
        if n >= WARMUP:
            times.append(elapsed)
            cpu.append((time.process_time() - started_cpu) * 1000)
    rules = result.self_evaluation["aiops_rule_evaluation"]
    print(
        json.dumps(
            {
                "median_ms": round(statistics.median(times), 1),
                "min_ms": round(min(times), 1),
                "median_cpu_ms": round(statistics.median(cpu), 1),
                "rounds": ROUNDS,
                "alerts_covered": rules["alerts_covered"],
                "tool_invocations": rules["tool_invocation_count"],
            }
        )
    )


if __name__ == "__main__":
    main()
