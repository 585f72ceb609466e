"""Benchmark: complete diagnoses of every demo scenario with the offline provider.

In-memory ports, nothing excluded: the graph, the agents' prompts and parsing, the ReAct loop,
tool calls against the demo backend and the knowledge index, the gatekeeper and the audit rows.
Prints median milliseconds per run (per scenario and overall) and where the time goes: the
engine's own loop, the tools (backend and knowledge queries), the offline provider, and the rest
(workflow nodes, validation, step/invocation recording), and the prompt tokens the agents send
as their steps record them (``webapp.llm.tokens``: messages, tool definitions and
response_format): per agent (median and largest call) and per diagnosis (median and largest
sum) - what a paid model bills and what a small local model's context must hold. They are read
from the last warm-up round's steps (the same calls as the timed rounds). Run with
``make bench-workflow``.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the demo generator, at the root

from demo.scenarios import scenario_records
from webapp.analysis.logpatterns import clear_caches
from webapp.diagnosis import Diagnoser
from webapp.tools.analysis_tools import forget_outputs
from webapp.wiring import offline_diagnoser

ROUNDS, WARMUP = 15, 2


class Clock:
    """Accumulates time spent inside wrapped callables, per category."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = defaultdict(float)

    def wrap(self, category: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.spent[category] += time.perf_counter() - started

        return timed


def prompt_tokens(steps: list[dict[str, Any]], run_ids: set[str]) -> dict[str, Any]:
    """Recorded prompt tokens of ``run_ids``' steps: per agent and per diagnosis."""
    by_agent: dict[str, list[int]] = defaultdict(list)
    by_run: dict[str, int] = defaultdict(int)
    for step in steps:
        if step["run_id"] in run_ids:
            by_agent[step["agent_name"]].append(step["prompt_tokens"])
            by_run[step["run_id"]] += step["prompt_tokens"]
    agents = {
        agent: {"calls": len(v), "median": statistics.median(v), "max": max(v)}
        for agent, v in sorted(by_agent.items())
    }
    runs = list(by_run.values())
    return {
        "by_agent": agents,
        "per_diagnosis": {"median": statistics.median(runs), "max": max(runs)},
    }


def instrument(diagnoser: Diagnoser, clock: Clock) -> None:
    """Time the provider, every tool handler, and every node function of the graph."""
    diagnoser.model.complete = clock.wrap("provider", diagnoser.model.complete)  # type: ignore[method-assign]
    diagnoser.tools[:] = [
        dataclasses.replace(t, handler=clock.wrap("tools", t.handler)) for t in diagnoser.tools
    ]
    nodes = diagnoser.graph.nodes
    for name, (fn, takes_config) in list(nodes.items()):
        nodes[name] = (clock.wrap("nodes", fn), takes_config)


def main() -> None:
    diagnoser = offline_diagnoser()
    clock = Clock()
    instrument(diagnoser, clock)
    scenarios = scenario_records("default")
    for _ in range(WARMUP):
        warm = {diagnoser.diagnose(record["question"]).run_id for record in scenarios}
    tokens = prompt_tokens(diagnoser.audit.steps, warm)  # type: ignore[attr-defined]
    clock.spent.clear()
    per_scenario: dict[str, list[float]] = {r["id"]: [] for r in scenarios}
    total = 0.0
    for _ in range(ROUNDS):
        for record in scenarios:
            clear_caches()  # no help from earlier runs: each run analyses and masks its log lines
            forget_outputs()  # cold, and no analysis output is kept from an earlier run
            started = time.perf_counter()
            result = diagnoser.diagnose(record["question"])
            elapsed = time.perf_counter() - started
            total += elapsed
            assert result.run.status == "SUCCESS" and not result.run.degraded
            per_scenario[record["id"]].append(elapsed * 1000)
    everything = [ms for values in per_scenario.values() for ms in values]
    nodes = clock.spent["nodes"]
    shares = {
        "engine": (total - nodes) / total,
        "tools": clock.spent["tools"] / total,
        "provider": clock.spent["provider"] / total,
        "workflow_and_adapters": (nodes - clock.spent["tools"] - clock.spent["provider"]) / total,
    }
    print(f"{'scenario':<10}{'median ms':>10}{'p95 ms':>9}")
    for record in scenarios:
        values = sorted(per_scenario[record["id"]])
        p95 = values[int(0.95 * (len(values) - 1))]
        print(f"{record['id']:<10}{statistics.median(values):>10.2f}{p95:>9.2f}")
    print(f"{'all':<10}{statistics.median(everything):>10.2f}")
    for name, share in shares.items():
        print(f"share {name}: {share:.1%}")
    print(f"{'prompt tokens':<14}{'calls':>6}{'median':>8}{'max':>8}")
    for agent, row in tokens["by_agent"].items():
        print(f"{agent:<14}{row['calls']:>6}{row['median']:>8.0f}{row['max']:>8}")
    diagnosis = tokens["per_diagnosis"]
    print(f"{'per diagnosis':<14}{len(warm):>6}{diagnosis['median']:>8.0f}{diagnosis['max']:>8}")
    print(
        json.dumps(
            {
                "runs": len(everything),
                "median_ms": statistics.median(everything),
                "median_ms_by_scenario": {k: statistics.median(v) for k, v in per_scenario.items()},
                "shares": shares,
                "prompt_tokens": tokens,
                "python": sys.version.split()[0],
            }
        )
    )


if __name__ == "__main__":
    main()
