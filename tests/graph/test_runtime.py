"""Running a compiled graph: updates, routing, errors, streaming and configuration."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Mapping
from typing import Any

import pytest

from diagnosis_graph import (
    END,
    START,
    Append,
    GraphRecursionError,
    InvalidRouteError,
    InvalidUpdateError,
    NodeError,
    Reducer,
    Replace,
    RunConfig,
    StateGraph,
)


def recording(seen: list[Any], item: Any, update: dict[str, Any]) -> dict[str, Any]:
    """Note ``item`` in ``seen`` and return ``update``: a node that leaves a trace."""
    seen.append(item)
    return update


def counter_graph(limit_to: int = 3) -> StateGraph:
    """count goes up by one per execution of ``work`` until it reaches ``limit_to``."""
    graph = StateGraph({"count": Replace(default=0), "events": Append(max_len=64)})

    def work(state: Mapping[str, Any]) -> dict[str, Any]:
        return {"count": state["count"] + 1, "events": [{"node": "work", "n": state["count"]}]}

    graph.add_node("work", work)
    graph.add_edge(START, "work")
    graph.add_conditional_edges(
        "work",
        lambda s: "again" if s["count"] < limit_to else "done",
        {"again": "work", "done": END},
    )
    return graph


def test_invoke_loops_until_the_router_says_done() -> None:
    final = counter_graph(3).compile().invoke({"count": 0}, RunConfig(thread_id="run-1"))
    assert final["count"] == 3
    assert [e["n"] for e in final["events"]] == [0, 1, 2]


def test_stream_yields_one_plain_dict_event_per_node_execution() -> None:
    events = list(counter_graph(2).compile().stream({"count": 0}))
    assert events == [
        {
            "node": "work",
            "step": 1,
            "update": {"count": 1, "events": [{"node": "work", "n": 0}]},
            "next": "work",
        },
        {
            "node": "work",
            "step": 2,
            "update": {"count": 2, "events": [{"node": "work", "n": 1}]},
            "next": END,
        },
    ]
    assert all(type(e) is dict and type(e["update"]) is dict for e in events)


def test_stream_events_are_snapshots_that_later_steps_do_not_change() -> None:
    reused: dict[str, Any] = {}

    def work(state: Mapping[str, Any]) -> dict[str, Any]:
        reused["count"] = state["count"] + 1  # the same dict object every time
        reused["events"] = [state["count"]]
        return reused

    graph = StateGraph({"count": Replace(default=0), "events": Append()})
    graph.add_node("work", work).add_edge(START, "work")
    graph.add_conditional_edges(
        "work", lambda s: "again" if s["count"] < 3 else "done", {"again": "work", "done": END}
    )
    events = list(graph.compile().stream({}))
    assert [e["update"] for e in events] == [
        {"count": 1, "events": [0]},
        {"count": 2, "events": [1]},
        {"count": 3, "events": [2]},
    ]


def test_stream_is_lazy_each_event_arrives_before_the_next_node_runs() -> None:
    seen: list[str] = []
    graph = StateGraph({"x": Replace(default=0)})
    graph.add_node("a", lambda s: recording(seen, "a", {"x": 1}))
    graph.add_node("b", lambda s: recording(seen, "b", {"x": 2}))
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("b", END)
    stream = graph.compile().stream({})
    first = next(stream)
    assert first["node"] == "a" and seen == ["a"]
    assert [e["node"] for e in stream] == ["b"] and seen == ["a", "b"]


def test_unknown_key_in_an_update_names_the_node_and_the_key() -> None:
    graph = StateGraph({"x": Replace()})
    graph.add_node("writer", lambda s: {"x": 1, "typo": 2})
    graph.add_edge(START, "writer").add_edge("writer", END)
    with pytest.raises(InvalidUpdateError) as info:
        graph.compile().invoke({})
    assert "node 'writer' wrote unknown state key 'typo'" in str(info.value)
    assert info.value.node == "writer" and info.value.step == 1


def test_a_key_error_raised_by_a_reducer_is_not_taken_for_an_unknown_key() -> None:
    class Picky(Reducer):
        def initial(self) -> Any:
            return 0

        def merge(self, current: Any, update: Any) -> Any:
            return {"a": 1}[update]  # KeyError for any other update

    graph = StateGraph({"x": Picky(), "y": Replace()})
    graph.add_node("writer", lambda s: {"y": 1, "x": "b"})
    graph.add_edge(START, "writer").add_edge("writer", END)
    with pytest.raises(KeyError) as info:
        graph.compile().invoke({})
    assert info.value.args == ("b",)
    fine = StateGraph({"x": Picky(), "y": Replace()})
    fine.add_node("writer", lambda s: {"y": 1, "x": "a"})
    fine.add_edge(START, "writer").add_edge("writer", END)
    assert fine.compile().invoke({}) == {"x": 1, "y": 1}


def test_a_custom_reducer_merges_current_and_update() -> None:
    class Total(Reducer):
        def initial(self) -> int:
            return 0

        def merge(self, current: int, update: int) -> int:
            return current + update

    graph = StateGraph({"total": Total()})
    graph.add_node("a", lambda s: {"total": 2}).add_node("b", lambda s: {"total": 5})
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("b", END)
    assert graph.compile().invoke({"total": 1}) == {"total": 8}


def test_unknown_key_in_the_input_is_rejected() -> None:
    with pytest.raises(InvalidUpdateError, match="unknown state key 'nope'"):
        counter_graph().compile().invoke({"nope": 1})


def test_a_node_returning_a_non_dict_is_an_error_naming_it() -> None:
    graph = StateGraph({"x": Replace()})
    graph.add_node("bad", lambda s: ["x"])  # type: ignore[arg-type,return-value]
    graph.add_edge(START, "bad").add_edge("bad", END)
    with pytest.raises(InvalidUpdateError, match="node 'bad' returned list"):
        graph.compile().invoke({})


def test_a_node_cannot_write_to_the_state_it_reads() -> None:
    graph = StateGraph({"doc": Replace(default_factory=lambda: {"items": [1]}), "log": Append()})
    attempts: list[str] = []

    def vandal(state: Mapping[str, Any]) -> None:
        for label, action in [
            ("assign", lambda: state.__setitem__("doc", None)),  # type: ignore[index]
            ("delete", lambda: state.__delitem__("doc")),  # type: ignore[attr-defined]
            ("pop", lambda: state.pop("doc")),  # type: ignore[attr-defined]
            ("update", lambda: state.update({"doc": None})),  # type: ignore[attr-defined]
            ("clear", lambda: state.clear()),  # type: ignore[attr-defined]
            ("append to an append-only key", lambda: state["log"].append(1)),
            ("extend an append-only key", lambda: state["log"].extend([1])),
        ]:
            try:
                action()
            except (TypeError, AttributeError):
                attempts.append(label)

    graph.add_node("vandal", vandal)
    graph.add_edge(START, "vandal").add_edge("vandal", END)
    final = graph.compile().invoke({})
    assert len(attempts) == 7
    assert final == {"doc": {"items": [1]}, "log": []}


def test_a_view_is_a_snapshot_of_its_own_step() -> None:
    kept: list[Mapping[str, Any]] = []
    graph = StateGraph({"n": Replace(default=0), "log": Append()})
    graph.add_node("first", lambda s: recording(kept, s, {"n": 1, "log": ["a"]}))
    graph.add_node("second", lambda s: {"n": 2, "log": ["b"]})
    graph.add_edge(START, "first").add_edge("first", "second").add_edge("second", END)
    assert graph.compile().invoke({}) == {"n": 2, "log": ["a", "b"]}
    assert dict(kept[0]) == {"n": 0, "log": ()}


def test_each_node_reads_the_appended_items_of_earlier_steps_only() -> None:
    reads: list[Any] = []
    graph = StateGraph({"log": Append()})
    for name in ("a", "b", "c"):
        graph.add_node(
            name, lambda s, name=name: recording(reads, s["log"], {"log": [{"by": name}]})
        )
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("b", "c").add_edge("c", END)
    final = graph.compile().invoke({})
    # What a node read is unaffected by later appends, and cannot be appended to itself.
    assert reads == [(), ({"by": "a"},), ({"by": "a"}, {"by": "b"})]
    assert all(type(r) is tuple for r in reads)
    assert final["log"] == [{"by": "a"}, {"by": "b"}, {"by": "c"}]
    assert type(final["log"]) is list and all(type(item) is dict for item in final["log"])


def test_routers_get_the_read_only_state_after_the_update() -> None:
    seen: list[Any] = []

    def router(state: Mapping[str, Any]) -> str:
        seen.append(state["count"])
        with pytest.raises(TypeError):
            state["count"] = 100  # type: ignore[index]
        return "done"

    graph = StateGraph({"count": Replace(default=0)})
    graph.add_node("work", lambda s: {"count": s["count"] + 5})
    graph.add_edge(START, "work")
    graph.add_conditional_edges("work", router, {"done": END})
    assert graph.compile().invoke({}) == {"count": 5}
    assert seen == [5]


def test_router_returning_a_key_outside_its_mapping_is_an_error() -> None:
    graph = StateGraph({"x": Replace(default=1)})
    graph.add_node("a", lambda s: None)
    graph.add_edge(START, "a")
    graph.add_conditional_edges("a", lambda s: "sideways", {"done": END})
    with pytest.raises(InvalidRouteError) as info:
        graph.compile().invoke({})
    assert "returned 'sideways', which is not one of ['done']" in str(info.value)
    assert info.value.node == "a" and info.value.state == {"x": 1}


def test_recursion_limit_carries_node_step_and_partial_state() -> None:
    app = counter_graph(limit_to=100).compile()
    with pytest.raises(GraphRecursionError) as info:
        app.invoke({"count": 0}, RunConfig(recursion_limit=4))
    error = info.value
    assert error.node == "work" and error.step == 4
    assert error.state["count"] == 4 and len(error.state["events"]) == 4
    json.dumps(error.state)


def test_recursion_limit_allows_exactly_that_many_steps() -> None:
    final = counter_graph(limit_to=4).compile().run({"count": 0}, RunConfig(recursion_limit=4))
    assert final.steps == 4 and final.state["count"] == 4


def test_node_error_wraps_the_exception_with_node_step_and_partial_state() -> None:
    graph = StateGraph({"x": Replace(default=0)})
    graph.add_node("ok", lambda s: {"x": 7})

    def boom(state: Mapping[str, Any]) -> None:
        raise RuntimeError("disk on fire")

    graph.add_node("boom", boom)
    graph.add_edge(START, "ok").add_edge("ok", "boom").add_edge("boom", END)
    with pytest.raises(NodeError) as info:
        graph.compile().invoke({})
    error = info.value
    assert (error.node, error.step, error.state) == ("boom", 2, {"x": 7})
    assert isinstance(error.original, RuntimeError) and error.__cause__ is error.original
    assert "node 'boom' raised RuntimeError: disk on fire" in str(error)


def test_a_raising_router_is_reported_as_a_node_error_of_its_node() -> None:
    graph = StateGraph({"x": Replace(default=0)})
    graph.add_node("a", lambda s: None)
    graph.add_edge(START, "a")
    graph.add_conditional_edges("a", lambda s: 1 / 0, {"done": END})
    with pytest.raises(NodeError, match="router after node 'a' raised ZeroDivisionError"):
        graph.compile().invoke({})


def test_run_config_is_immutable() -> None:
    config = RunConfig(thread_id="run-1", metadata={"session_id": "s"}, recursion_limit=32)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.thread_id = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        config.metadata["session_id"] = "x"  # type: ignore[index]


def test_run_config_copies_metadata_so_the_caller_cannot_change_it_later() -> None:
    metadata = {"session_id": "s"}
    config = RunConfig(metadata=metadata)
    metadata["session_id"] = "changed"
    assert config.metadata["session_id"] == "s"


@pytest.mark.parametrize("limit", [0, -3, True, 2.0])
def test_run_config_rejects_a_nonsense_recursion_limit(limit: Any) -> None:
    with pytest.raises(ValueError):
        RunConfig(recursion_limit=limit)


def test_child_config_keeps_only_business_identity() -> None:
    parent = RunConfig(
        thread_id="run-1",
        metadata={"session_id": "s1", "run_id": "run-1", "resume": True, "checkpoint_id": "c"},
        recursion_limit=32,
    )
    child = parent.child(thread_id="run-1:executor", recursion_limit=8)
    assert dict(child.metadata) == {"session_id": "s1", "run_id": "run-1"}
    assert (child.thread_id, child.recursion_limit) == ("run-1:executor", 8)


def test_a_node_taking_config_gets_it_and_can_run_a_nested_graph() -> None:
    inner_seen: list[dict[str, Any]] = []
    inner = StateGraph({"y": Replace(default=0)})

    def inner_node(state: Mapping[str, Any], config: RunConfig) -> dict[str, Any]:
        inner_seen.append(dict(config.metadata))
        return {"y": state["y"] * 2}

    inner.add_node("double", inner_node).add_edge(START, "double").add_edge("double", END)
    inner_app = inner.compile()

    outer = StateGraph({"x": Replace(default=0)})

    def outer_node(state: Mapping[str, Any], config: RunConfig) -> dict[str, Any]:
        result = inner_app.invoke({"y": state["x"]}, config.child())
        return {"x": result["y"]}

    outer.add_node("nest", outer_node).add_edge(START, "nest").add_edge("nest", END)
    parent = RunConfig(thread_id="r", metadata={"session_id": "s", "run_id": "r", "resume": 1})
    assert outer.compile().invoke({"x": 21}, parent) == {"x": 42}
    assert inner_seen == [{"session_id": "s", "run_id": "r"}]


def test_a_compiled_graph_is_safe_to_share_between_threads() -> None:
    app = counter_graph(limit_to=50).compile()
    config = RunConfig(recursion_limit=64)
    results: list[int] = []

    def worker() -> None:
        results.append(app.invoke({"count": 0}, config)["count"])

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [50] * 8


def test_to_mermaid_renders_nodes_and_labelled_conditional_edges() -> None:
    text = counter_graph().compile().to_mermaid()
    assert text.startswith("flowchart TD\n")
    assert "__start__ --> n_work" in text
    assert "n_work -.->|again| n_work" in text
    assert "n_work -.->|done| __end__" in text


def test_to_mermaid_groups_keys_that_share_a_target_and_escapes_names() -> None:
    graph = StateGraph({"x": Replace()})
    graph.add_node("a b|c", lambda s: None)
    graph.add_edge(START, "a b|c")
    graph.add_conditional_edges("a b|c", lambda s: "ok", {"ok": END, "fine": END})
    text = graph.compile().to_mermaid()
    assert 'n_a_b_c["a b c"]' in text
    assert "n_a_b_c -.->|ok / fine| __end__" in text


def test_to_mermaid_highlights_the_route_a_run_took() -> None:
    text = counter_graph().compile().to_mermaid(taken=[(START, "work"), ("work", "work")])
    lines = text.splitlines()
    edge_lines = [line.strip() for line in lines if "-->" in line or "-.->" in line]
    assert edge_lines == [
        "__start__ --> n_work",
        "n_work -.->|again| n_work",
        "n_work -.->|done| __end__",
    ]
    assert "    linkStyle 0,1 stroke:#c0392b,stroke-width:3px" in lines
    assert "    class __start__,n_work taken" in lines


def test_a_router_that_keeps_its_view_sees_the_state_of_its_step() -> None:
    kept: list[Mapping[str, Any]] = []

    def router(state: Mapping[str, Any]) -> str:
        kept.append(state)
        return "again" if state["n"] < 3 else "done"

    graph = StateGraph({"n": Replace(default=0), "log": Append()})
    graph.add_node("work", lambda s: {"n": s["n"] + 1, "log": [s["n"]]})
    graph.add_edge(START, "work")
    graph.add_conditional_edges("work", router, {"again": "work", "done": END})
    assert graph.compile().invoke({}) == {"n": 3, "log": [0, 1, 2]}
    assert [(view["n"], list(view["log"])) for view in kept] == [
        (1, [0]),
        (2, [0, 1]),
        (3, [0, 1, 2]),
    ]


def test_conditional_edges_from_start_route_on_the_input() -> None:
    graph = StateGraph({"x": Replace(default=0), "path": Append()})
    graph.add_node("small", lambda s: {"path": ["small"]})
    graph.add_node("big", lambda s: {"path": ["big"]})
    graph.add_conditional_edges(START, lambda s: "big" if s["x"] > 5 else "small", ["small", "big"])
    graph.add_edge("small", END).add_edge("big", END)
    app = graph.compile()
    assert app.invoke({"x": 9})["path"] == ["big"]
    assert [e["node"] for e in app.stream({"x": 1})] == ["small"]


def test_replacing_a_node_function_after_compiling_runs_the_new_one() -> None:
    app = counter_graph(limit_to=2).compile()
    calls: list[int] = []
    fn, takes_config = app.nodes["work"]

    def wrapped(state: Mapping[str, Any]) -> Any:
        calls.append(state["count"])
        return fn(state)

    app.nodes["work"] = (wrapped, takes_config)
    assert app.invoke({"count": 0})["count"] == 2
    assert calls == [0, 1]
