"""Benchmark: complete diagnoses of every demo scenario with the offline provider.

In-memory ports, nothing excluded: the graph, the agents' prompts and parsing, the ReAct loop,
tool calls against the demo backend and the knowledge index, the gatekeeper and the audit rows.
Prints median milliseconds per run (per scenario and overall) and where the time goes: the
engine's own loop, the tools (backend and knowledge queries), the offline provider, and the rest
(workflow nodes, validation, step/invocation recording). Run with ``make bench-workflow``.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from webapp.demo.scenarios import scenario_records
from webapp.diagnosis import Diagnoser
from webapp.llm.offline.analysis import template
from webapp.tools.registry import ToolSpec
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


def instrument(diagnoser: Diagnoser, clock: Clock) -> None:
    """Time the provider, every tool handler, and every node function of the graph."""
    diagnoser.model.complete = clock.wrap("provider", diagnoser.model.complete)  # type: ignore[method-assign]
    diagnoser.tools[:] = [
        ToolSpec(t.name, t.description, t.parameters, clock.wrap("tools", t.handler), t.role)
        for t in diagnoser.tools
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
        for record in scenarios:
            diagnoser.diagnose(record["question"])
    clock.spent.clear()
    per_scenario: dict[str, list[float]] = {r["id"]: [] for r in scenarios}
    total = 0.0
    for _ in range(ROUNDS):
        for record in scenarios:
            template.cache_clear()  # no help from earlier runs: each run starts cold
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
    print(
        json.dumps(
            {
                "runs": len(everything),
                "median_ms": statistics.median(everything),
                "median_ms_by_scenario": {k: statistics.median(v) for k, v in per_scenario.items()},
                "shares": shares,
                "python": sys.version.split()[0],
            }
        )
    )


if __name__ == "__main__":
    main()
