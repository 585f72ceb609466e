"""Benchmark: this engine vs LangGraph vs a bare Python loop on the diagnosis topology.

All three forms run the *same* node functions and the same router along the same 13-execution
path: planner fails once and retries, executor, gatekeeper, verified_input, verifier finds a
gap, evidence_retry, planner, executor, gatekeeper, verified_input, verifier, composer, END.
Run with ``make bench-engine``. Prints a table (CPU time per run; ratios are medians of
back-to-back pairs), then one JSON line with every figure. ``--baseline REV`` (``make
bench-engine ENGINE_BASELINE=main``) also runs the engine as it was at git revision ``REV``, in
the same rounds; ``engine_checkpointer`` is the engine with its ``InMemoryCheckpointer``.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import io
import json
import operator
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any, TypedDict

import diagnosis_graph
from diagnosis_graph import END, START, Append, InMemoryCheckpointer
from diagnosis_graph.workflow.topology import (
    _CONDITIONAL,
    _FIXED,
    diagnosis_schema,
    route_by_reason,
)

EXPECTED_PATH = [
    "planner",
    "planner",
    "executor",
    "gatekeeper",
    "verified_input",
    "verifier",
    "evidence_retry",
    "planner",
    "executor",
    "gatekeeper",
    "verified_input",
    "verifier",
    "composer",
]
ROUNDS, WARMUP = 31, 50
RUNS_PER_ROUND = {
    "bare_loop": 500,
    "engine": 500,
    "engine_baseline": 500,
    "engine_checkpointer": 100,
    "langgraph": 10,
    "langgraph_checkpointer": 5,
}

# --- the scripted nodes ------------------------------------------------------------------------
# Lean on purpose: each node returns its small output and its orchestration event, so the figures
# measure the engine itself. The routers are the workflow's own (route_by_reason + route maps).

PLAN = {"mode": "FULL", "queries": [{"tool": "query_logs", "arguments": {"service": "payment"}}]}
CLAIMS = {
    "claims": [
        {
            "claim_id": "C1",
            "statement": "pool exhausted",
            "critical": True,
            "bindings": [
                {
                    "source_invocation_id": "inv-1",
                    "raw_path": "$.records[0]",
                    "evidence_excerpt": "pool exhausted",
                }
            ],
        }
    ],
    "summary": "s",
}
GATE = {"verdict": "PASS", "verified_binding_count": 1, "verifier_verdict_ceiling": "PASS"}
EVIDENCE = [{"evidence_id": "E1", "source_invocation_id": "inv-1"}]
GAP = {"verdict": "LOW_CONFID", "critical_gaps": [{"description": "no metrics yet"}]}
NO_GAP = {"verdict": "PASS", "critical_gaps": []}


def event(node: str, reason: str, attempt: int = 1, outcome: str = "COMPLETED") -> dict[str, Any]:
    """The orchestration event and routing key a workflow node writes with its output."""
    return {
        "orchestration_events": [
            {"node": node, "outcome": outcome, "reason_code": reason, "attempt": attempt}
        ],
        "route_reason": reason,
    }


def planner(state: Mapping[str, Any]) -> dict[str, Any]:
    if state["planner_retry_count"] == 0 and state["evidence_retry_count"] == 0:
        return {"planner_retry_count": 1, **event("planner", "invalid_output", 1, "INVALID_OUTPUT")}
    attempt = 2 if state["orchestration_events"][-1]["node"] == "planner" else 1
    return {"planner_plan": PLAN, **event("planner", "completed", attempt)}


def executor(state: Mapping[str, Any]) -> dict[str, Any]:
    return {"executor_output": CLAIMS, **event("executor", "completed")}


def gatekeeper(state: Mapping[str, Any]) -> dict[str, Any]:
    return {"gatekeeper_result": GATE, **event("gatekeeper", "gatekeeper_pass")}


def verified_input(state: Mapping[str, Any]) -> dict[str, Any]:
    return {"verified_evidence": EVIDENCE, **event("verified_input", "completed")}


def verifier(state: Mapping[str, Any]) -> dict[str, Any]:
    if state["evidence_retry_count"] == 0:
        return {"verifier_output": GAP, **event("verifier", "evidence_gap")}
    return {"verifier_output": NO_GAP, **event("verifier", "completed")}


def evidence_retry(state: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "evidence_retry_count": 1,
        "planner_retry_count": 0,
        **event("evidence_retry", "evidence_gap_only"),
    }


def composer(state: Mapping[str, Any]) -> dict[str, Any]:
    return {"final_answer": "the DB pool is exhausted", **event("composer", "completed")}


def fallback(state: Mapping[str, Any]) -> dict[str, Any]:
    return {"final_answer": "fallback", **event("fallback", "completed")}


NODE_FNS: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
    f.__name__: f
    for f in (
        planner,
        executor,
        gatekeeper,
        verified_input,
        verifier,
        evidence_retry,
        composer,
        fallback,
    )
}
INPUT = {"diagnosis_context": {"question": "why is payment-service slow since 10:00?"}}

# --- the three forms ---------------------------------------------------------------------------


def engine_at(revision: str) -> ModuleType:
    """The engine's core as it was at git revision ``revision``, as ``diagnosis_graph_baseline``."""
    root = Path(__file__).resolve().parents[1]
    archive = subprocess.run(
        ["git", "archive", revision, "diagnosis_graph"], cwd=root, capture_output=True, check=True
    ).stdout
    where = Path(tempfile.mkdtemp(prefix="engine-baseline-"))
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(where, filter="data")
    (where / "diagnosis_graph").rename(where / "diagnosis_graph_baseline")
    sys.path.insert(0, str(where))
    return importlib.import_module("diagnosis_graph_baseline")


def schema_for(engine: ModuleType) -> dict[str, Any]:
    """The diagnosis schema, built from ``engine``'s own reducer classes."""
    if engine is diagnosis_graph:
        return diagnosis_schema()
    return {
        key: engine.Append(max_len=r.max_len)
        if isinstance(r, Append)
        else engine.Replace(r.initial())
        for key, r in diagnosis_schema().items()
    }


def build_engine(
    engine: ModuleType = diagnosis_graph, checkpointer: Any = None
) -> Callable[[], dict[str, Any]]:
    graph = engine.StateGraph(schema_for(engine))
    for name, fn in NODE_FNS.items():
        graph.add_node(name, fn)
    graph.add_edge(START, "planner")
    for name, routes in _CONDITIONAL.items():
        graph.add_conditional_edges(name, route_by_reason, routes)
    for name, target in _FIXED.items():
        graph.add_edge(name, target)
    app = graph.compile(checkpointer) if checkpointer else graph.compile()
    config = engine.RunConfig(
        thread_id="bench", metadata={"session_id": "s", "run_id": "bench"}, recursion_limit=32
    )
    return lambda: app.invoke(INPUT, config)


def build_bare_loop() -> Callable[[], dict[str, Any]]:
    defaults = {key: reducer.initial() for key, reducer in diagnosis_schema().items()}
    routes = {**_CONDITIONAL}

    def run() -> dict[str, Any]:
        state = dict(defaults)
        state["orchestration_events"] = []
        state.update(INPUT)
        node = "planner"
        for _ in range(32):
            update = NODE_FNS[node](state)
            for key, value in update.items():
                if key == "orchestration_events":
                    state[key] = state[key] + value
                else:
                    state[key] = value
            node = routes[node][route_by_reason(state)] if node in routes else _FIXED[node]
            if node == END:
                return state
        raise RuntimeError("recursion limit")

    return run


def build_langgraph(checkpointer: bool) -> Callable[[], dict[str, Any]]:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END as LG_END
    from langgraph.graph import START as LG_START
    from langgraph.graph import StateGraph as LGStateGraph

    class State(TypedDict, total=False):
        diagnosis_context: Any
        planner_plan: Any
        executor_output: Any
        gatekeeper_result: Any
        verified_executor_output: Any
        verified_evidence: Any
        verifier_output: Any
        composer_output: Any
        final_answer: Any
        planner_retry_count: int
        verifier_retry_count: int
        composer_retry_count: int
        evidence_retry_count: int
        orchestration_events: Annotated[list[dict[str, Any]], operator.add]
        route_reason: str

    graph = LGStateGraph(State)
    for name, fn in NODE_FNS.items():
        graph.add_node(name, fn)
    graph.add_edge(LG_START, "planner")
    for name, routes in _CONDITIONAL.items():
        graph.add_conditional_edges(
            name, route_by_reason, {k: (LG_END if v == END else v) for k, v in routes.items()}
        )
    for name, target in _FIXED.items():
        graph.add_edge(name, LG_END if target == END else target)
    app = graph.compile(checkpointer=InMemorySaver() if checkpointer else None)
    start = {
        "planner_retry_count": 0,
        "verifier_retry_count": 0,
        "composer_retry_count": 0,
        "evidence_retry_count": 0,
        "orchestration_events": [],
        **INPUT,
    }
    counter = iter(range(10**9))

    def run() -> dict[str, Any]:
        config = {"recursion_limit": 32, "configurable": {"thread_id": f"t{next(counter)}"}}
        return app.invoke(start, config)

    return run


# --- measurement -------------------------------------------------------------------------------


def path_of(final: Mapping[str, Any]) -> list[str]:
    return [event["node"] for event in final["orchestration_events"]]


def interleaved_us(
    forms: Mapping[str, Callable[[], Any]],
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Microseconds per run of every form - CPU time of this process and wall time - measured
    round-robin so that machine noise (this is a shared VM) hits all forms alike; one figure
    per form per round. CPU time is what the table reports: on a loaded machine wall time
    also counts the time other processes held the CPU."""
    for run in forms.values():
        for _ in range(WARMUP):
            run()
    cpu: dict[str, list[float]] = {name: [] for name in forms}
    wall: dict[str, list[float]] = {name: [] for name in forms}
    for _ in range(ROUNDS):
        for name, run in forms.items():
            count = RUNS_PER_ROUND[name]
            gc.collect()
            start, start_cpu = time.perf_counter(), time.process_time()
            for _ in range(count):
                run()
            cpu[name].append((time.process_time() - start_cpu) / count * 1e6)
            wall[name].append((time.perf_counter() - start) / count * 1e6)
    return cpu, wall


def paired_ratio(rounds: Mapping[str, list[float]], slow: str, fast: str) -> float:
    """Median over rounds of slow/fast, each pair measured back to back."""
    return statistics.median(a / b for a, b in zip(rounds[slow], rounds[fast], strict=True))


def peak_kib(run: Callable[[], Any]) -> float:
    gc.collect()
    tracemalloc.start()
    run()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 1024


def import_ms(module: str) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    times = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(5)
    ]
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", metavar="REV", help="also run the engine as it was at REV")
    args = parser.parse_args()
    forms: dict[str, Callable[[], dict[str, Any]]] = {
        "bare_loop": build_bare_loop(),
        "engine": build_engine(),
    }
    if args.baseline:
        forms["engine_baseline"] = build_engine(engine_at(args.baseline))
    forms["engine_checkpointer"] = build_engine(checkpointer=InMemoryCheckpointer())
    try:
        forms["langgraph"] = build_langgraph(checkpointer=False)
        forms["langgraph_checkpointer"] = build_langgraph(checkpointer=True)
    except ImportError:
        print("langgraph is not installed: pip install -e '.[bench]'", file=sys.stderr)
    for name, run in forms.items():
        assert path_of(run()) == EXPECTED_PATH, f"{name} took another path: {path_of(run())}"
    rounds, wall = interleaved_us(forms)
    results: dict[str, dict[str, float]] = {
        name: {
            "median_us": statistics.median(values),
            "min_us": min(values),
            "wall_median_us": statistics.median(wall[name]),
            "peak_kib": peak_kib(forms[name]),
        }
        for name, values in rounds.items()
    }
    results["engine"]["import_ms"] = import_ms("diagnosis_graph")
    if "langgraph" in results:
        results["langgraph"]["import_ms"] = import_ms("langgraph.graph")
    ratios = {
        "engine_vs_bare_loop": paired_ratio(rounds, "engine", "bare_loop"),
        "engine_vs_bare_loop_wall": paired_ratio(wall, "engine", "bare_loop"),
    }
    for name in ("langgraph", "langgraph_checkpointer", "engine_baseline"):
        if name in results:
            ratios[f"{name}_vs_engine"] = paired_ratio(rounds, name, "engine")
    if "langgraph_checkpointer" in results:
        ratios["langgraph_checkpointer_vs_engine_checkpointer"] = paired_ratio(
            rounds, "langgraph_checkpointer", "engine_checkpointer"
        )
    if "engine_baseline" in results:
        ratios["engine_baseline_vs_bare_loop"] = paired_ratio(
            rounds, "engine_baseline", "bare_loop"
        )
        if "langgraph" in results:
            ratios["langgraph_vs_engine_baseline"] = paired_ratio(
                rounds, "langgraph", "engine_baseline"
            )
    print(
        f"{'form':<24}{'CPU us/run':>12}{'min':>9}{'wall us/run':>13}{'peak KiB':>10}"
        f"{'import ms':>11}"
    )
    for name, row in results.items():
        imp = f"{row['import_ms']:.1f}" if "import_ms" in row else "-"
        print(
            f"{name:<24}{row['median_us']:>12.1f}{row['min_us']:>9.1f}"
            f"{row['wall_median_us']:>13.1f}{row['peak_kib']:>10.1f}{imp:>11}"
        )
    for name, value in ratios.items():
        print(f"{name}: {value:.1f}x")
    print(
        json.dumps(
            {
                "path_executions": len(EXPECTED_PATH),
                "rounds": ROUNDS,
                "runs_per_round": RUNS_PER_ROUND,
                "results": results,
                "ratios": ratios,
                "python": sys.version.split()[0],
            }
        )
    )


if __name__ == "__main__":
    main()
