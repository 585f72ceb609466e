"""Benchmark: what the curves ``detect_anomalies`` findings record cost (``points``).

Side by side in one process, rounds alternating: complete offline diagnoses of every demo
scenario with the findings' points (as shipped) and without them (the output as it was before,
by swapping ``curves.Analysed.as_dicts`` for the plain ``Finding.as_dict``). Prints the median
CPU milliseconds (``time.process_time``) per diagnosis - whole, in the tools, in the
gatekeeper, ``verified_input`` and composer nodes - the size of the ``detect_anomalies``
outputs, what encoding and decoding one costs (orjson, as the SQL audit stores it; ``json``, as
the tool message the model reads), and the executor's prompt size. Each round starts with the
audit rows of the earlier ones dropped and a full collection. Run with
``.venv/bin/python bench/curves.py [rounds]``.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the demo generator, at the root

from demo.scenarios import scenario_records
from webapp.analysis import curves
from webapp.analysis.logpatterns import clear_caches
from webapp.analysis.onsets import Finding
from webapp.diagnosis import Diagnoser
from webapp.persistence.memory_audit import MemoryAudit
from webapp.tools.analysis_tools import forget_outputs
from webapp.tools.registry import ToolOutput, ToolSpec
from webapp.wiring import offline_diagnoser

ROUNDS = 11
NODES = ("gatekeeper", "verified_input", "composer")
WITH_POINTS = curves.Analysed.as_dicts


def without_points(_self: curves.Analysed, findings: Sequence[Finding]) -> list[dict[str, Any]]:
    """The findings as recorded before they carried their series."""
    return [f.as_dict() for f in findings]


class Setup:
    """One diagnoser, timed per category, keeping its detect_anomalies outputs and prompts."""

    def __init__(self, points: bool) -> None:
        self.points = points
        self.diagnoser: Diagnoser = offline_diagnoser()
        self.spent: dict[str, float] = defaultdict(float)
        self.outputs: list[Any] = []
        self.prompts: list[int] = []
        model = self.diagnoser.model
        complete = model.complete

        def measured(messages: Any, **kwargs: Any) -> Any:
            schema = ((kwargs.get("response_format") or {}).get("json_schema") or {}).get("name")
            if schema == "executor_evidence_v2":
                self.prompts.append(len(json.dumps(messages, ensure_ascii=False, default=str)))
            return complete(messages, **kwargs)

        model.complete = measured  # type: ignore[method-assign]
        tools = self.diagnoser.tools
        tools[:] = [dataclasses.replace(t, handler=self._tool(t)) for t in tools]
        nodes = self.diagnoser.graph.nodes
        for name in NODES:
            fn, takes_config = nodes[name]
            nodes[name] = (self._timed(name, fn), takes_config)

    def _timed(self, category: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.spent[category] += time.process_time() - started

        return timed

    def _tool(self, spec: ToolSpec) -> Callable[[dict[str, Any]], ToolOutput]:
        def handler(arguments: dict[str, Any]) -> ToolOutput:
            out = spec.handler(arguments)
            if spec.name == "detect_anomalies":
                self.outputs.append(out.raw_output)
            return out

        return self._timed("tools", handler)

    def forget(self) -> None:
        """Drop the rows of earlier rounds (a SQL audit writes them out and lets them go): an
        in-memory audit growing for the whole benchmark would make every collection of the
        cyclic GC slower, the more so the larger the outputs it keeps."""
        audit = self.diagnoser.audit
        if isinstance(audit, MemoryAudit):
            with audit._lock:
                audit.steps.clear()
                audit.invocations.clear()
        gc.collect()

    def use(self) -> None:
        chosen = WITH_POINTS if self.points else without_points
        curves.Analysed.as_dicts = chosen  # type: ignore[method-assign,assignment]


def codec_ms(outputs: Sequence[Any], encode: Callable[[Any], Any], rounds: int = 10) -> float:
    started = time.process_time()
    for _ in range(rounds):
        for out in outputs:
            encode(out)
    return (time.process_time() - started) * 1000 / rounds / len(outputs)


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else ROUNDS
    scenarios = scenario_records("default")
    setups = {"without": Setup(points=False), "with": Setup(points=True)}
    for setup in setups.values():  # warm-up
        setup.use()
        for record in scenarios:
            setup.diagnoser.diagnose(record["question"])
        setup.outputs.clear()
        setup.prompts.clear()
    per_run: dict[str, list[float]] = {name: [] for name in setups}
    parts: dict[str, dict[str, list[float]]] = {name: defaultdict(list) for name in setups}
    try:
        for n in range(rounds):
            for name in ("without", "with") if n % 2 == 0 else ("with", "without"):
                setup = setups[name]
                setup.use()
                setup.spent.clear()
                setup.forget()
                started = time.process_time()
                for record in scenarios:
                    clear_caches()  # cold: each run masks and mines its own log lines
                    forget_outputs()  # and keeps no analysis output of an earlier run
                    result = setup.diagnoser.diagnose(record["question"])
                    assert result.run.status == "SUCCESS" and not result.run.degraded
                per_run[name].append((time.process_time() - started) * 1000 / len(scenarios))
                for category, spent in setup.spent.items():
                    parts[name][category].append(spent * 1000 / len(scenarios))
    finally:
        curves.Analysed.as_dicts = WITH_POINTS  # type: ignore[method-assign]
    print(f"{rounds} rounds x {len(scenarios)} scenarios; CPU ms per diagnosis, medians")
    print(f"{'':18}{'without':>10}{'with':>10}")
    rows = {"whole diagnosis": per_run} | {
        c: {k: parts[k][c] for k in setups} for c in ("tools", *NODES)
    }
    for label, values in rows.items():
        print(f"{label:18}" + "".join(f"{statistics.median(values[k]):>10.3f}" for k in setups))
    for name, setup in setups.items():
        sizes = [len(orjson.dumps(o)) for o in setup.outputs]
        orjson_ms = codec_ms(setup.outputs, lambda o: orjson.loads(orjson.dumps(o)))
        message_ms = codec_ms(
            setup.outputs, lambda o: json.loads(json.dumps({"result": o}, ensure_ascii=False))
        )
        print(
            f"{name} points: {len(sizes)} detect_anomalies outputs, bytes median "
            f"{statistics.median(sizes):.0f} max {max(sizes)}; orjson dump+load "
            f"{orjson_ms:.3f} ms, json tool message dump+load {message_ms:.3f} ms an output; "
            "executor prompt chars "
            f"median {statistics.median(setup.prompts):.0f} max {max(setup.prompts)}"
        )


if __name__ == "__main__":
    main()
