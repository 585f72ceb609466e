"""Every benchmark in one run, one table (``make bench``).

Runs each ``bench/*.py`` script of the ``make bench-*`` targets in turn, in a subprocess, with
a quick setting where it has one (``--full``: each script's own defaults, as ``make bench-*``
runs it), keeps each one's output in ``--logs`` (default ``bench-logs/``, one file per script),
reads its closing JSON line (``bench/analysis.py`` has none: its median row is read) and prints
one table: target, figure, target value, met? ("yes", "NO", or "-" for a figure without a
target). A script that fails or is skipped (MariaDB, Prometheus or LangGraph missing) shows
why in the table and the run goes on. The exit status is 0 even when a target is missed: the
table is the report.

The quick settings (about 20 minutes on the shared 2-core VM): the lists at 20,000 runs
instead of 100,000 (their pages are O(log n)), the 10,000-step trace as it is, one repeat and
100 queries for the knowledge index, 100 served chat runs, 10 s of 200 open streams, one
2-worker throughput run and the chaos run at 20 runs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
Row = tuple[str, str, str, str]  # target, figure, target value, met?
Figures = Callable[[dict[str, Any], str], list[Row]]


@dataclass(frozen=True)
class Bench:
    """One script: its make target, quick arguments and how its figures become rows."""

    target: str
    script: str
    figures: Figures
    quick: tuple[str, ...] = ()
    full: tuple[str, ...] = ()
    timeout: int = 1800
    env: dict[str, str] = field(default_factory=dict)


def met(ok: bool | None) -> str:
    return "-" if ok is None else ("yes" if ok else "NO")


def num(value: float, unit: str = "") -> str:
    text = f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}" if value else "0"
    return text + (f" {unit}" if unit else "")


def at_most(name: str, value: float | None, limit: float, unit: str, note: str = "") -> Row:
    """A row for ``value <= limit`` (``note``: shown after the figure)."""
    return _row(name, value, limit, unit, note, "<=")


def at_least(name: str, value: float | None, limit: float, unit: str, note: str = "") -> Row:
    """A row for ``value >= limit``."""
    return _row(name, value, limit, unit, note, ">=")


def _row(name: str, value: float | None, limit: float, unit: str, note: str, op: str) -> Row:
    bound = f"{op} {num(limit, unit)}"
    if value is None:
        return (name, note or "not measured", bound, "-")
    ok = value <= limit if op == "<=" else value >= limit
    return (name, num(value, unit) + (f" {note}" if note else ""), bound, met(ok))


def info(name: str, text: str) -> Row:
    return (name, text, "-", "-")


# -- figures of each script --------------------------------------------------------------


def engine_path(data: dict[str, Any], _: str) -> list[Row]:
    ratios = data["ratios"]
    lang = ratios.get("langgraph_vs_engine")
    return [
        at_least(
            "engine: diagnosis path vs LangGraph",
            lang,
            50,
            "x",
            "" if lang is not None else "LangGraph not installed",
        ),
        at_most("engine: diagnosis path vs bare loop", ratios["engine_vs_bare_loop"], 3, "x"),
    ]


def engine_shapes(data: dict[str, Any], _: str) -> list[Row]:
    shapes = data["shapes"]
    compared = {name: s for name, s in shapes.items() if s.get("langgraph")}
    rows: list[Row] = []
    if compared:
        slower = [name for name, s in compared.items() if s["engine"] >= s["langgraph"]]
        worst = min(compared.items(), key=lambda kv: kv[1]["langgraph"] / kv[1]["engine"])
        rows.append(
            (
                "engine: faster than LangGraph on every shape",
                f"{len(compared) - len(slower)}/{len(compared)} shapes; least "
                f"{worst[1]['langgraph'] / worst[1]['engine']:.2g}x ({worst[0]})",
                "all",
                met(not slower),
            )
        )
    else:
        rows.append(info("engine: faster than LangGraph on every shape", "LangGraph not installed"))
    steps = {int(k): v for k, v in data["growth"]["append_read_us_per_step"].items()}
    sizes = {float(k): v for k, v in data["growth"]["state_read_us_per_run_by_mb"].items()}
    # An unbounded append-only key copies its tuple per write: this grows with the list.
    rows.append(
        info(
            "engine: cost per append-and-read step, 10,000 vs 1,000 steps",
            f"{steps[max(steps)] / steps[1000]:.2g}x",
        )
    )
    rows.append(
        at_most(
            "engine: run reading state, 10 MB vs 0.1 MB",
            sizes[max(sizes)] / sizes[min(sizes)],
            1.5,
            "x",
        )
    )
    by_mb = {float(k): v for k, v in data["growth"]["read_step_us_by_mb"].items()}
    label = "engine: a step reading state, 10 MB vs 0.1 MB"
    rows.append(at_most(label, by_mb[max(by_mb)] / by_mb[min(by_mb)], 1.5, "x"))
    return rows


def workflow(data: dict[str, Any], _: str) -> list[Row]:
    return [
        info(
            "workflow: offline diagnosis, every demo scenario",
            f"median {num(data['median_ms'], 'ms')}",
        )
    ]


def analysis(_: dict[str, Any], text: str) -> list[Row]:
    found = re.search(r"^median\s+([\d.]+)\s+([\d.]+)", text, re.M)
    if found is None:
        return [info("analysis: tools per service", "no median row in the output")]
    return [
        info(
            "analysis: detect_anomalies / log_patterns per service",
            f"median {found.group(1)} / {found.group(2)} ms",
        )
    ]


def aiops(data: dict[str, Any], _: str) -> list[Row]:
    keys = [k for k in data if "median" in k and isinstance(data[k], (int, float))]
    text = ", ".join(f"{k} {num(data[k])}" for k in keys) or json.dumps(data)[:80]
    return [info("aiops: one offline run over every firing alert", text)]


def telemetry(data: dict[str, Any], _: str) -> list[Row]:
    medians = data["median_ms"]
    return [
        info(
            "telemetry: diagnosis, demo vs Prometheus + LOG_DIR",
            f"{num(medians['demo'], 'ms')} vs {num(medians['prometheus_log_dir'], 'ms')}",
        )
    ]


def chat_runs(data: dict[str, Any], _: str) -> list[Row]:
    rows: list[Row] = []
    for label, limit in (("sqlite", 10.0), ("mariadb", 25.0)):
        figures = data.get(label)
        if figures is None:
            rows.append(
                info(
                    f"chat run own overhead, {label}",
                    ("skipped: " + "; ".join(data.get("notes", [])))[:120],
                )
            )
            continue
        overhead = figures["own_overhead"]
        rows.append(
            at_most(
                f"chat run own overhead, {label} (median)",
                overhead["median_ms"],
                overhead.get("target_ms", limit),
                "ms",
            )
        )
        beyond = figures["chat_sql_beyond_one_per_step"]
        rows.append(
            at_most(
                f"SQL statements per run beyond one per step, {label}",
                max(beyond),
                12,
                "",
                f"(the most; {beyond[0]}-{beyond[1]})",
            )
        )
        growth = figures["react_growth"]
        per_step = [growth[k]["bytes_per_step"] for k in sorted(growth, key=int)]
        name = f"stored bytes per step, most vs fewest ReAct rounds, {label}"
        rows.append(info(name, f"{per_step[-1] / per_step[0]:.1f}x"))
        # Checked on the trace viewer's list (inputs=none), as the 10,000-step trace is: the
        # whole body with every input (36 MB here) is shown beside it.
        trace = figures["trace"]["1000"]
        name = f"trace API at 1,000 steps, inputs=none, {label} (median)"
        rows.append(at_most(name, trace["none"]["median_ms"], 50, "ms"))
        name = f"  ... inputs=full, whole body ({trace['bytes'] / 1e6:.0f} MB), {label}"
        rows.append(info(name, num(trace["median_ms"], "ms")))
    return rows


def lists(data: dict[str, Any], _: str) -> list[Row]:
    rows: list[Row] = []
    for label, figures in data["figures"].items():
        pages = {k: v for k, v in figures.items() if k.startswith("GET ")}
        worst = max(pages, key=lambda k: pages[k])
        rows.append(
            at_most(
                f"list pages at {data['runs']:,} runs, {label} (slowest)",
                pages[worst],
                10,
                "ms",
                worst.split(" ")[1].split("?")[0],
            )
        )
        steps = f"{data['steps']:,}"
        for form in ("none", "full"):
            name = f"{steps}-step trace, inputs={form}, {label}"
            trace = figures.get(f"trace of {data['steps']} steps, inputs={form}")
            if form == "none":  # the trace viewer's list: the target
                rows.append(at_most(name, trace, 150, "ms"))
            else:
                rows.append(info(name, "not measured" if trace is None else num(trace, "ms")))
    return rows


def knowledge(data: dict[str, Any], _: str) -> list[Row]:
    return [
        at_most("knowledge: 10,000 documents indexed", data["sync 10k (s)"], 10, "s"),
        at_most(
            "knowledge: search p95 at 10,000 documents", data["search p95 10k (ms)"], 100, "ms"
        ),
        at_most(
            "knowledge: 1 MiB upload at 10,000 documents", data["upload 1 MiB at 10k (s)"], 1, "s"
        ),
    ]


def serve(data: dict[str, Any], _: str) -> list[Row]:
    return [
        at_least(
            "make serve: offline chat runs/s",
            data["runs_per_s"],
            40,
            "",
            f"(load {data['load_average']})",
        ),
        at_least(
            "make serve: runs/s the CPU per run allows on idle cores",
            data["cpu_bound_runs_per_s"],
            40,
            "",
            f"({num(data['cpu_ms_per_run'], 'ms')} CPU a run)",
        ),
    ]


def streams(data: dict[str, Any], _: str) -> list[Row]:
    key = next((k for k in data if "healthz" in k and "p95" in k), None)
    value = data[key] if key else None
    return [at_most("/healthz p95 with 200 open streams", value, 200, "ms")]


def scale(data: dict[str, Any], _: str) -> list[Row]:
    rows = [
        info(
            f"runs/s with {t['workers']} Celery worker(s)" if "workers" in t else "runs/s",
            f"{t['runs_per_s']:.2f} runs/s",
        )
        for t in data.get("throughput", [])
    ]
    chaos = data.get("chaos")
    if chaos:
        rows.append(at_most("chaos: runs stuck after workers were killed", chaos["stuck"], 0, ""))
    return rows


BENCHES = (
    Bench("bench-engine", "engine_vs_langgraph.py", engine_path),
    Bench("bench-engine", "engine_shapes.py", engine_shapes),
    Bench("bench-workflow", "workflow.py", workflow),
    Bench("bench-analysis", "analysis.py", analysis),
    Bench("bench-aiops", "aiops.py", aiops),
    Bench("bench-telemetry", "telemetry.py", telemetry),
    Bench("bench-api", "api.py", chat_runs),
    Bench("bench-api", "api_lists.py", lists, quick=("--runs", "20000")),
    Bench(
        "bench-knowledge", "knowledge.py", knowledge, quick=("--repeats", "1", "--queries", "100")
    ),
    Bench("bench-serve", "serve.py", serve, quick=("--runs", "100", "--warmup", "10")),
    Bench("bench-streams", "streams.py", streams, quick=("--seconds", "10")),
    Bench("bench-scale", "scale.py", scale, quick=("--runs", "20", "--workers", "2")),
)


def last_json(text: str) -> dict[str, Any]:
    """The last line of ``text`` that is a JSON object ({} when there is none)."""
    for line in reversed(text.splitlines()):
        if line.startswith("{"):
            try:
                found = json.loads(line)
            except ValueError:
                continue
            if isinstance(found, dict):
                return found
    return {}


def run(bench: Bench, full: bool, logs: Path) -> tuple[list[Row], float]:
    """Run one script; its rows and its wall seconds."""
    argv = [sys.executable, str(HERE / bench.script), *(bench.full if full else bench.quick)]
    started = time.monotonic()
    print(f"{bench.target}: {' '.join(argv[1:])}", file=sys.stderr, flush=True)
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=bench.timeout,
            check=False,
            env={**os.environ, **bench.env},
            cwd=HERE.parent,
        )
        output, code = done.stdout + done.stderr, done.returncode
    except subprocess.TimeoutExpired as exc:
        partial = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        output, code = f"{partial}\ntimed out after {bench.timeout} s", -1
    seconds = time.monotonic() - started
    (logs / f"{Path(bench.script).stem}.txt").write_text(output)
    if code != 0:
        last = next((ln for ln in reversed(output.splitlines()) if ln.strip()), "")
        return [info(f"{bench.target} ({bench.script})", f"failed ({code}): {last[:90]}")], seconds
    try:
        return bench.figures(last_json(output), output), seconds
    except (KeyError, ValueError, TypeError, StopIteration, ZeroDivisionError) as exc:
        return [info(f"{bench.target} ({bench.script})", f"figures unreadable: {exc!r}")], seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true", help="each script's own default sizes")
    parser.add_argument("--logs", default="bench-logs", help="folder for each script's output")
    parser.add_argument("--only", help="comma-separated make targets (bench-api,bench-serve)")
    args = parser.parse_args()
    logs = Path(args.logs)
    logs.mkdir(parents=True, exist_ok=True)
    chosen = [b for b in BENCHES if not args.only or b.target in args.only.split(",")]
    rows: list[Row] = []
    timings: list[str] = []
    began = time.monotonic()
    for bench in chosen:
        found, seconds = run(bench, args.full, logs)
        rows.extend(found)
        timings.append(f"{Path(bench.script).stem} {seconds:.0f} s")
    widths = [
        max(len(r[i]) for r in [("target", "figure", "target value", "met?"), *rows])
        for i in range(4)
    ]
    header = ("target", "figure", "target value", "met?")
    print()
    for row in (header, tuple("-" * w for w in widths), *rows):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
    load = os.getloadavg()
    print(
        f"\n{len(chosen)} scripts in {(time.monotonic() - began) / 60:.1f} min "
        f"({'full' if args.full else 'quick'} settings; load average now {load[0]:.1f}): "
        + ", ".join(timings)
    )
    print(f"each script's output: {logs}/")
    print(json.dumps({"rows": [dict(zip(header, r, strict=True)) for r in rows]}))


if __name__ == "__main__":
    main()
