"""Benchmark: this engine vs LangGraph on graphs of other shapes, and how cost grows.

Shapes (each runs the same node functions in both engines; LangGraph without a checkpointer):

* ``linear_3``: three nodes in a row, each writing one small value;
* ``chain_50``: fifty nodes in a row;
* ``counter_1000``: one node looping 1,000 times, incrementing a counter (router decides);
* ``append_read_N``: one node looping N times, appending an event and reading the last one;
* ``state_read_NMB``: an N MB document in the input, read by three nodes (a length and a few
  records each);
* ``rows_1000``: three nodes each writing a fresh 1,000-row output that the next one reads.

Then a growth table of this engine alone: microseconds per step of the append-and-read loop at
100..10,000 steps (an unbounded append-only key copies its tuple on each write, so this grows
with the length of the list, as LangGraph's ``operator.add`` does); per run of the state-read
graph at 0.1..10 MB; and the marginal cost of one more step reading the document (a loop reading
it 3,000 vs 300 times) - flat rows mean the cost does not grow with the state's size, because
the engine never copies a value. The growth table is timed
with CPython's cyclic garbage collector paused, because a collection's cost grows with the
number of live objects in any program (LangGraph's runs pay it too, and the comparison table
keeps it on). Run with ``make bench-engine``; medians of interleaved rounds of CPU time;
prints a table and one JSON line. ``--baseline REV`` adds a column: the engine as it was at git
revision ``REV``, measured in the same rounds.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import operator
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Annotated, Any, TypedDict

from engine_vs_langgraph import engine_at  # bench/engine_vs_langgraph.py, next to this script

import diagnosis_graph
from diagnosis_graph import END, START

ROUNDS = 5
Runner = Callable[[], Any]


class Shape:
    """One graph shape: its nodes, edges and input, buildable in either engine."""

    def __init__(
        self,
        name: str,
        nodes: Mapping[str, Callable[[Mapping[str, Any]], dict[str, Any]]],
        order: list[str],
        *,
        loop: Callable[[Mapping[str, Any]], str] | None = None,
        appends: tuple[str, ...] = (),
        initial: dict[str, Any] | None = None,
        steps: int = 0,
    ) -> None:
        self.name, self.nodes, self.order, self.loop = name, nodes, order, loop
        self.appends, self.initial = appends, initial or {}
        self.steps = steps or len(order)

    def keys(self) -> list[str]:
        return sorted({"n", "doc", "rows", "seen", *self.appends, *self.initial})

    def engine(self, engine: ModuleType = diagnosis_graph) -> Runner:
        schema = {
            k: engine.Append() if k in self.appends else engine.Replace() for k in self.keys()
        }
        graph = engine.StateGraph(schema)
        self._wire(graph, START, END)
        app = graph.compile()
        start = dict(self.initial)
        config = engine.RunConfig(recursion_limit=self.steps + 10)
        return lambda: app.invoke(start, config)

    def langgraph(self) -> Runner:
        from langgraph.graph import END as LG_END
        from langgraph.graph import START as LG_START
        from langgraph.graph import StateGraph as LGStateGraph

        fields = {
            k: (Annotated[list, operator.add] if k in self.appends else Any) for k in self.keys()
        }
        state_type = TypedDict("State", fields, total=False)  # type: ignore[misc]
        graph = LGStateGraph(state_type)
        self._wire(graph, LG_START, LG_END)
        app = graph.compile()
        start = {**{k: [] for k in self.appends}, **self.initial}
        config = {"recursion_limit": self.steps + 10}
        return lambda: app.invoke(start, config)

    def _wire(self, graph: Any, start: Any, end: Any) -> None:
        for name, fn in self.nodes.items():
            graph.add_node(name, fn)
        graph.add_edge(start, self.order[0])
        for a, b in itertools.pairwise(self.order):
            graph.add_edge(a, b)
        last = self.order[-1]
        if self.loop is None:
            graph.add_edge(last, end)
        else:
            graph.add_conditional_edges(last, self.loop, {"again": self.order[0], "done": end})


def linear(count: int) -> Shape:
    nodes = {f"n{i}": (lambda s, i=i: {"n": i}) for i in range(count)}
    return Shape(f"linear_{count}" if count < 10 else f"chain_{count}", nodes, list(nodes))


def counter(steps: int) -> Shape:
    return Shape(
        f"counter_{steps}",
        {"inc": lambda s: {"n": (s["n"] or 0) + 1}},
        ["inc"],
        loop=lambda s: "again" if s["n"] < steps else "done",
        initial={"n": 0},
        steps=steps,
    )


def append_read(steps: int) -> Shape:
    def step(state: Mapping[str, Any]) -> dict[str, Any]:
        events = state["events"]
        last = events[-1]["i"] if events else -1
        return {"events": [{"i": last + 1, "node": "step"}]}

    return Shape(
        f"append_read_{steps}",
        {"step": step},
        ["step"],
        loop=lambda s: "again" if len(s["events"]) < steps else "done",
        appends=("events",),
        steps=steps,
    )


def document(megabytes: float) -> dict[str, Any]:
    """About ``megabytes`` MB of JSON: records of ~200 bytes each."""
    count = int(megabytes * 1_000_000 / 200)
    return {
        "records": [
            {"i": i, "service": f"svc-{i % 50}", "message": "x" * 120, "level": "INFO"}
            for i in range(count)
        ]
    }


def read_doc(state: Mapping[str, Any]) -> tuple[int, int, str]:
    """What each reader of the document takes from it: a length and two records."""
    records = state["doc"]["records"]
    return len(records), records[0]["i"], records[-1]["service"]


def state_read(megabytes: float) -> Shape:
    """Three nodes reading an N MB document of the input."""
    nodes = {f"read{i}": (lambda s: {"seen": read_doc(s)}) for i in range(3)}
    label = f"{megabytes:g}".replace(".", "_")
    doc = document(megabytes)
    return Shape(
        f"state_read_{label}MB",
        nodes,
        list(nodes),
        initial={"doc": doc},
    )


def read_loop(megabytes: float, steps: int) -> Shape:
    """One node reading an N MB document of the (plain) input ``steps`` times, in a loop."""
    label = f"{megabytes:g}".replace(".", "_")
    return Shape(
        f"read_loop_{label}MB_{steps}",
        {"read": lambda s: {"seen": read_doc(s), "n": s["n"] + 1}},
        ["read"],
        loop=lambda s: "again" if s["n"] < steps else "done",
        initial={"doc": document(megabytes), "n": 0},
        steps=steps,
    )


def rows(count: int) -> Shape:
    def writer(state: Mapping[str, Any]) -> dict[str, Any]:
        previous = state.get("rows")
        base = previous[0]["i"] + 1 if previous else 0
        return {"rows": [{"i": base + i, "value": i * 0.5, "name": f"r{i}"} for i in range(count)]}

    nodes = {f"write{i}": writer for i in range(3)}
    return Shape(f"rows_{count}", nodes, list(nodes))


def timed(run: Runner, repeat: int, *, pause_gc: bool = False) -> float:
    """Median CPU microseconds per run over ``repeat`` samples (gc collected before).

    CPU time of this process, because the machine is shared: wall time would also count the
    time other processes held the CPU. A sample runs ``run`` often enough to last about a
    millisecond, so that reading the clock does not weigh on the tiny shapes.
    """
    run()  # warm
    gc.collect()
    start = time.process_time()
    run()
    inner = max(1, int(0.001 / max(time.process_time() - start, 1e-7)))
    samples = []
    for _ in range(repeat):
        if pause_gc:
            gc.disable()
        start = time.process_time()
        for _ in range(inner):
            run()
        samples.append((time.process_time() - start) / inner * 1e6)
        gc.enable()
    return statistics.median(samples)


def compare(
    shapes: list[Shape],
    langgraph: bool,
    *,
    pause_gc: bool = False,
    baseline: ModuleType | None = None,
) -> dict[str, dict[str, float]]:
    """Median us/run per shape and engine, measured round-robin over ``ROUNDS`` rounds."""
    forms: dict[str, dict[str, Runner]] = {}
    for shape in shapes:
        forms[shape.name] = {"engine": shape.engine()}
        if baseline is not None:
            forms[shape.name]["baseline"] = shape.engine(baseline)
        if langgraph:
            forms[shape.name]["langgraph"] = shape.langgraph()
    rounds: dict[str, dict[str, list[float]]] = {
        name: {form: [] for form in runs} for name, runs in forms.items()
    }
    for _ in range(ROUNDS):
        for shape in shapes:
            for form, run in forms[shape.name].items():
                repeat = 1 if shape.steps >= 1000 and form == "langgraph" else 5
                rounds[shape.name][form].append(timed(run, repeat, pause_gc=pause_gc))
    return {
        name: {form: statistics.median(values) for form, values in by_form.items()}
        for name, by_form in rounds.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", metavar="REV", help="also run the engine as it was at REV")
    args = parser.parse_args()
    baseline = engine_at(args.baseline) if args.baseline else None
    try:
        import langgraph  # noqa: F401

        with_langgraph = True
    except ImportError:
        print("langgraph is not installed: pip install -e '.[bench]'", file=sys.stderr)
        with_langgraph = False
    shapes = [
        linear(3),
        linear(50),
        counter(1000),
        append_read(1000),
        append_read(3000),
        state_read(1),
        state_read(10),
        rows(1000),
    ]
    results = compare(shapes, with_langgraph, baseline=baseline)
    print(
        f"{'shape':<22}{'engine us':>12}{'baseline us':>13}{'langgraph us':>14}"
        f"{'langgraph/engine':>18}"
    )
    for name, row in results.items():
        lg, before = row.get("langgraph"), row.get("baseline")
        ratio = f"{lg / row['engine']:.1f}x" if lg else "-"
        old = f"{before:.1f}" if before else "-"
        print(f"{name:<22}{row['engine']:>12.1f}{old:>13}{(lg or 0):>14.1f}{ratio:>18}")
    growth_steps = {
        n: compare([append_read(n)], False, pause_gc=True)[f"append_read_{n}"]["engine"] / n
        for n in (100, 1000, 3000, 10000)
    }
    growth_size, growth_read_step = {}, {}
    for mb in (0.1, 1, 10):
        shapes = [state_read(mb), read_loop(mb, 300), read_loop(mb, 3000)]
        timed_us = compare(shapes, False, pause_gc=True)
        runs = [timed_us[shape.name]["engine"] for shape in shapes]
        growth_size[mb] = runs[0]
        growth_read_step[mb] = (runs[2] - runs[1]) / 2700  # one more read step: its marginal cost
    print(
        "\nappend-and-read loop, engine us per step: "
        + "  ".join(f"{n} steps {us:.2f}" for n, us in growth_steps.items())
    )
    for label, by_mb, spec in (
        ("state read by 3 nodes, engine us per run", growth_size, ".1f"),
        (
            "one read step of the document (3,000 vs 300 steps), engine us per step",
            growth_read_step,
            ".2f",
        ),
    ):
        print(f"{label}: " + "  ".join(f"{mb:g} MB {us:{spec}}" for mb, us in by_mb.items()))
    print(
        json.dumps(
            {
                "rounds": ROUNDS,
                "shapes": results,
                "growth": {
                    "append_read_us_per_step": growth_steps,
                    "state_read_us_per_run_by_mb": growth_size,
                    "read_step_us_by_mb": growth_read_step,
                },
                "python": sys.version.split()[0],
            }
        )
    )


if __name__ == "__main__":
    main()
