"""Benchmark: complete diagnoses of every demo scenario with the offline provider.

In-memory ports, nothing excluded: the graph, the agents' prompts and parsing, the ReAct loop,
tool calls against the demo backend and the knowledge index, the gatekeeper and the audit rows.
Prints median milliseconds per run (per scenario and overall) and where the time goes: the
engine's own loop, the tools (backend and knowledge queries), the offline provider, and the rest
(workflow nodes, validation, step/invocation recording), and the size of the prompt each agent
sends (median characters of messages, tool definitions and response_format per model call, and
an estimate in tokens at four characters a token - what a small local model's context must
hold). Prompt sizes are measured in the warm-up rounds (the same calls: answers do not depend
on what is cached), not in the timed ones, whose figures would otherwise include encoding every
conversation once more for the count (about 7% of a run). Run with ``make bench-workflow``.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from webapp.analysis.logpatterns import clear_caches
from webapp.demo.scenarios import scenario_records
from webapp.diagnosis import Diagnoser
from webapp.tools.analysis_tools import forget_outputs
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


class PromptSizes:
    """Characters sent per model call, by agent (the response_format's schema name)."""

    def __init__(self) -> None:
        self.calls: dict[str, list[dict[str, int]]] = defaultdict(list)
        self.active = True

    def wrap(self, complete: Callable[..., Any]) -> Callable[..., Any]:
        def measured(messages: Any, **kwargs: Any) -> Any:
            if not self.active:
                return complete(messages, **kwargs)
            response_format = kwargs.get("response_format") or {}
            agent = str((response_format.get("json_schema") or {}).get("name") or "plain")
            self.calls[agent].append(
                {
                    "messages": _chars(messages),
                    "tools": _chars(kwargs.get("tools") or []),
                    "response_format": _chars(response_format),
                }
            )
            return complete(messages, **kwargs)

        return measured

    def medians(self) -> dict[str, dict[str, float]]:
        table: dict[str, dict[str, float]] = {}
        for agent, calls in sorted(self.calls.items()):
            parts = {k: statistics.median(c[k] for c in calls) for k in calls[0]}
            total = statistics.median(sum(c.values()) for c in calls)
            table[agent] = {**parts, "total": total, "tokens_est": total / 4, "calls": len(calls)}
        return table


def _chars(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str))


def instrument(diagnoser: Diagnoser, clock: Clock, sizes: PromptSizes | None = None) -> None:
    """Time the provider, every tool handler, and every node function of the graph."""
    if sizes is not None:
        diagnoser.model.complete = sizes.wrap(diagnoser.model.complete)  # type: ignore[method-assign]
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
    sizes = PromptSizes()
    instrument(diagnoser, clock, sizes)
    scenarios = scenario_records("default")
    for _ in range(WARMUP):
        for record in scenarios:
            diagnoser.diagnose(record["question"])
    clock.spent.clear()
    sizes.active = False  # measured in the warm-up rounds: the timed ones pay no counting
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
    prompts = sizes.medians()
    print(f"{'agent':<22}{'messages':>9}{'tools':>7}{'format':>7}{'total':>7}{'~tokens':>8}")
    for agent, row in prompts.items():
        print(
            f"{agent:<22}{row['messages']:>9.0f}{row['tools']:>7.0f}"
            f"{row['response_format']:>7.0f}{row['total']:>7.0f}{row['tokens_est']:>8.0f}"
        )
    print(
        json.dumps(
            {
                "runs": len(everything),
                "median_ms": statistics.median(everything),
                "median_ms_by_scenario": {k: statistics.median(v) for k, v in per_scenario.items()},
                "shares": shares,
                "prompt_chars_by_agent": prompts,
                "python": sys.version.split()[0],
            }
        )
    )


if __name__ == "__main__":
    main()
