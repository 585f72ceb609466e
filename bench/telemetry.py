"""Benchmark: one offline diagnosis on the demo backend vs a real Prometheus + LOG_DIR.

Starts Debian's Prometheus on a free port with the demo metrics backfilled by promtool, writes
the demo logs out as one JSON-lines file per service, and runs every demo scenario's question
through the offline diagnoser on both backends, interleaved (demo, live, demo, live, ...) so
machine noise hits both alike. Prints the median wall-clock milliseconds per scenario and
overall, side by side, and the median CPU milliseconds of this process (the app's own work;
the live side's wall time also waits on Prometheus). Run with ``make bench-telemetry``.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from demo.scenarios import scenario_records
from tests.webapp.demo_export import write_log_dir, write_openmetrics
from tests.webapp.telemetry.servers import start_prometheus
from webapp.analysis.logpatterns import clear_caches
from webapp.demo.backend import DEFAULT_DATA_DIR, DemoTelemetryBackend
from webapp.diagnosis import Diagnoser
from webapp.llm.offline import OfflineChatModel
from webapp.persistence.memory_audit import MemoryAudit
from webapp.telemetry.composite import CompositeBackend, Signals
from webapp.telemetry.http import HttpOptions, HttpSource
from webapp.telemetry.logfiles import LogFileBackend
from webapp.telemetry.prometheus import PrometheusBackend
from webapp.tools.analysis_tools import forget_outputs
from webapp.tools.doc_tracker import RetrievedDocTracker
from webapp.wiring import knowledge_for, offline_diagnoser

ROUNDS, WARMUP = 9, 1


def live(url: str, logs: Path, demo: DemoTelemetryBackend) -> Diagnoser:
    """The offline diagnoser on Prometheus (metrics, alerts) and log files."""
    now = demo.reference_time()
    prometheus = PrometheusBackend(HttpSource("Prometheus", HttpOptions(url)), clock=lambda: now)
    backend = CompositeBackend(
        Signals(metrics=prometheus, logs=LogFileBackend(logs, clock=lambda: now), alerts=prometheus)
    )
    return Diagnoser(
        model=OfflineChatModel(),
        backend=backend,
        knowledge=knowledge_for(demo),
        audit=MemoryAudit(),
        tracker=RetrievedDocTracker(),
    )


def timed(diagnoser: Diagnoser, question: str) -> tuple[float, float]:
    """Wall-clock and CPU milliseconds of one cold diagnosis.

    Cold like bench-workflow's: the demo backend is immutable, so its analysis outputs and log
    reads would otherwise be served from memory after the first round, which a live backend's
    never are.
    """
    clear_caches()
    forget_outputs()
    started, cpu = time.perf_counter(), time.process_time()
    result = diagnoser.diagnose(question, session_id="bench")
    assert result.run.status == "SUCCESS", result.answer
    return (time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000


def main() -> None:
    demo = DemoTelemetryBackend()
    with tempfile.TemporaryDirectory() as workdir:
        out = Path(workdir)
        write_openmetrics(DEFAULT_DATA_DIR, out)
        logs = write_log_dir(DEFAULT_DATA_DIR, out)
        (out / "prom").mkdir()
        server = start_prometheus(out / "prom", out / "metrics.om")
        try:
            diagnosers = {
                "demo": offline_diagnoser(),
                "prometheus+log_dir": live(server.url, logs, demo),
            }
            samples: dict[str, dict[str, list[float]]] = {name: {} for name in diagnosers}
            cpu: dict[str, list[float]] = {name: [] for name in diagnosers}
            records = scenario_records("default")
            for round_index in range(WARMUP + ROUNDS):
                for record in records:
                    for name, diagnoser in diagnosers.items():
                        spent, used = timed(diagnoser, record["question"])
                        if round_index >= WARMUP:
                            samples[name].setdefault(record["id"], []).append(spent)
                            cpu[name].append(used)
        finally:
            server.stop()
    print(f"median ms per diagnosis ({ROUNDS} rounds, interleaved)")
    print(f"{'scenario':<10}{'demo':>10}{'prometheus+log_dir':>22}")
    for record in records:
        row = [statistics.median(samples[name][record["id"]]) for name in diagnosers]
        print(f"{record['id']:<10}{row[0]:>10.1f}{row[1]:>22.1f}")
    overall = [
        statistics.median([v for values in samples[name].values() for v in values])
        for name in diagnosers
    ]
    print(f"{'all':<10}{overall[0]:>10.1f}{overall[1]:>22.1f}")
    cpu_ms = [statistics.median(cpu[name]) for name in diagnosers]
    print(f"{'cpu (all)':<10}{cpu_ms[0]:>10.1f}{cpu_ms[1]:>22.1f}")
    medians = dict(zip(("demo", "prometheus_log_dir"), overall, strict=True))
    print(json.dumps({"median_ms": medians}))


if __name__ == "__main__":
    main()
