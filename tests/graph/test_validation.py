"""compile() rejects malformed graphs and names each fault."""

from __future__ import annotations

import pytest

from diagnosis_graph import END, START, GraphValidationError, Replace, StateGraph


def _noop(state: object) -> None:
    return None


def _graph() -> StateGraph:
    return StateGraph({"x": Replace()})


def _problems(graph: StateGraph) -> list[str]:
    with pytest.raises(GraphValidationError) as info:
        graph.compile()
    return info.value.problems


def test_a_valid_graph_compiles() -> None:
    graph = _graph().add_node("a", _noop).add_edge(START, "a").add_edge("a", END)
    assert graph.compile().invoke({}) == {"x": None}


def test_edge_to_an_unknown_node_is_named() -> None:
    graph = _graph().add_node("a", _noop).add_edge(START, "a").add_edge("a", "ghost")
    assert "edge from 'a' to unknown node 'ghost'" in _problems(graph)


def test_edge_from_an_unknown_node_is_named() -> None:
    graph = _graph().add_node("a", _noop).add_edge(START, "a").add_edge("a", END)
    graph.add_edge("ghost", "a")
    assert "edge from unknown node 'ghost'" in _problems(graph)


def test_router_mapping_to_an_unknown_node_is_named() -> None:
    graph = _graph().add_node("a", _noop).add_edge(START, "a")
    graph.add_conditional_edges("a", lambda s: "x", {"x": END, "y": "nowhere"})
    assert "edge from 'a' to unknown node 'nowhere'" in _problems(graph)


def test_duplicate_node_names_are_rejected() -> None:
    graph = _graph().add_node("a", _noop).add_node("a", _noop)
    graph.add_edge(START, "a").add_edge("a", END)
    assert "duplicate node name 'a'" in _problems(graph)


def test_reserved_and_non_callable_nodes_are_rejected() -> None:
    graph = _graph().add_node(END, _noop).add_node("b", 42)  # type: ignore[arg-type]
    graph.add_edge(START, "b").add_edge("b", END)
    problems = _problems(graph)
    assert f"node name {END!r} is reserved" in problems
    assert "node 'b' is not callable: 42" in problems


def test_node_that_cannot_reach_end_is_named() -> None:
    graph = _graph().add_node("a", _noop).add_node("loop", _noop)
    graph.add_edge(START, "a")
    graph.add_conditional_edges("a", lambda s: "done", {"done": END, "spin": "loop"})
    graph.add_edge("loop", "loop")
    assert _problems(graph) == ["node 'loop' cannot reach END"]


def test_node_without_outgoing_edge_cannot_reach_end() -> None:
    graph = _graph().add_node("a", _noop).add_node("b", _noop)
    graph.add_edge(START, "a").add_edge("a", "b")
    assert "node 'b' cannot reach END (it has no outgoing edge)" in _problems(graph)


def test_unreachable_node_is_named() -> None:
    graph = _graph().add_node("a", _noop).add_node("orphan", _noop)
    graph.add_edge(START, "a").add_edge("a", END).add_edge("orphan", END)
    assert _problems(graph) == ["node 'orphan' is unreachable from START"]


def test_edges_from_end_and_into_start_are_rejected() -> None:
    graph = _graph().add_node("a", _noop).add_edge(START, "a").add_edge("a", END)
    graph.add_edge(END, "a")
    assert "edge from END: END has no outgoing edges" in _problems(graph)
    graph2 = _graph().add_node("a", _noop).add_edge(START, "a").add_edge("a", START)
    assert "edge from 'a' to START: START has no incoming edges" in _problems(graph2)


def test_missing_entry_edge_is_rejected() -> None:
    graph = _graph().add_node("a", _noop).add_edge("a", END)
    assert "no edge from START: add_edge(START, <first node>)" in _problems(graph)


def test_a_node_has_one_way_out() -> None:
    graph = _graph().add_node("a", _noop).add_node("b", _noop).add_edge(START, "a")
    graph.add_edge("a", "b").add_edge("a", END).add_edge("b", END)
    assert any("more than one outgoing edge" in p for p in _problems(graph))


def test_schema_values_must_be_reducers() -> None:
    graph = StateGraph({"x": 0}).add_node("a", _noop)  # type: ignore[dict-item]
    graph.add_edge(START, "a").add_edge("a", END)
    assert any("state key 'x' must map to a Reducer" in p for p in _problems(graph))


def test_every_fault_is_listed_in_the_message() -> None:
    graph = _graph().add_node("a", _noop).add_node("a", _noop).add_edge("a", "ghost")
    with pytest.raises(GraphValidationError) as info:
        graph.compile()
    message = str(info.value)
    assert "duplicate node name 'a'" in message and "unknown node 'ghost'" in message
    assert "no edge from START" in message
