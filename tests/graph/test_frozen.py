"""The read-only values nodes receive: frozen lazily, one level at a time, with no way around."""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from diagnosis_graph import END, START, Append, Replace, StateGraph, freeze
from diagnosis_graph.frozen import FrozenDict, FrozenList, thaw, unfreeze


def _doc() -> dict[str, Any]:
    return {"records": [{"id": 1, "tags": ["a"]}, {"id": 2, "tags": ["b"]}], "meta": {"n": 2}}


def _is_read_only(value: Any) -> bool:
    return type(value) in (FrozenDict, FrozenList)


READS: dict[str, Callable[[Any], Any]] = {
    "index": lambda d: d["records"][0],
    "negative index": lambda d: d["records"][-1],
    "slice": lambda d: d["records"][:1][0],
    "iteration": lambda d: next(iter(d["records"])),
    "reversed": lambda d: next(reversed(d["records"])),
    "get": lambda d: d.get("meta"),
    "values": lambda d: d.values()[0],
    "items": lambda d: d.items()[1][1],
    "dict()": lambda d: dict(d)["meta"],
    "{**d}": lambda d: {**d}["meta"],
    "d | {}": lambda d: (d | {})["meta"],
    "{} | d": lambda d: ({} | d)["meta"],
    "copy()": lambda d: d["records"].copy()[0],
    "list + frozen": lambda d: ([] + d["records"])[0],
    "frozen + list": lambda d: (d["records"] + [])[0],
    "frozen * 2": lambda d: (d["records"] * 2)[0],
    "list()": lambda d: list(d["records"])[-1],
    "sorted()": lambda d: sorted(d["records"], key=lambda r: r["id"])[0],
    "tuple()": lambda d: tuple(d["records"])[-1],
    "copy.copy": lambda d: copy.copy(d)["meta"],
    "copy.deepcopy": lambda d: copy.deepcopy(d)["meta"],
}


@pytest.mark.parametrize("read", list(READS), ids=list(READS))
def test_every_way_of_reading_a_nested_value_hands_it_out_frozen(read: str) -> None:
    frozen = freeze(_doc())
    item = READS[read](frozen)
    assert _is_read_only(item)
    with pytest.raises(TypeError):
        item.clear()


def test_freezing_copies_only_the_top_level_and_never_writes_to_the_source() -> None:
    doc = _doc()
    records = doc["records"]
    frozen = freeze(doc)
    assert dict.__getitem__(frozen, "records") is records  # nested values untouched until read
    assert frozen["records"] is frozen["records"]  # frozen once, then the same object
    assert doc["records"] is records and type(records) is list
    assert unfreeze(frozen) is doc


def test_json_and_equality_see_the_same_content() -> None:
    doc = _doc()
    frozen = freeze(doc)
    assert json.loads(json.dumps(frozen)) == doc
    assert json.loads(json.dumps(frozen, indent=1, sort_keys=True)) == doc
    assert frozen == doc and thaw(frozen) == doc and type(thaw(frozen)["records"]) is list


def test_a_node_gets_back_nothing_it_can_mutate_in_a_long_run() -> None:
    graph = StateGraph({"doc": Replace(), "log": Append()})
    failures: list[str] = []

    def vandal(state: Mapping[str, Any]) -> dict[str, Any]:
        for attempt in (
            lambda: ([] + state["doc"]["records"])[0]["tags"].append("x"),
            lambda: dict(state["doc"])["meta"].update(n=0),
            lambda: list(state["log"])[-1].clear() if state["log"] else state["doc"].clear(),
        ):
            try:
                attempt()
            except TypeError:
                failures.append("refused")
        return {"log": [{"seen": len(state["log"])}]}

    for name in ("a", "b", "c"):
        graph.add_node(name, vandal)
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("b", "c").add_edge("c", END)
    final = graph.compile().invoke({"doc": _doc()})
    assert failures == ["refused"] * 9
    assert final["doc"] == _doc()
    assert final["log"] == [{"seen": 0}, {"seen": 1}, {"seen": 2}]


def test_the_final_state_returns_what_was_written_and_copies_what_the_engine_made() -> None:
    written = {"rows": [1, 2]}
    graph = StateGraph({"out": Replace(), "default": Replace(default={"k": [1]}), "log": Append()})
    graph.add_node("w", lambda s: {"out": written, "log": [written]})
    graph.add_edge(START, "w").add_edge("w", END)
    app = graph.compile()
    final = app.invoke()
    assert final["out"] is written and final["log"][0] is written
    assert type(final["log"]) is list and type(final["default"]["k"]) is list
    final["default"]["k"].append(2)
    assert app.invoke()["default"] == {"k": [1]}


def test_frozen_values_a_node_writes_come_back_as_written_or_as_plain_copies() -> None:
    doc = {"rows": [1, 2]}
    schema = {key: Replace() for key in ("doc", "seen", "own_dict", "own_list", "log_copy")}
    graph = StateGraph({**schema, "log": Append()})
    graph.add_node("a", lambda s: {"log": [{"n": 1}]})
    graph.add_node(
        "b",
        lambda s: {
            "seen": s["doc"],  # frozen, made from the input: its source comes back
            "own_dict": FrozenDict({"k": [1]}),  # frozen by the node itself: a plain copy
            "own_list": FrozenList([{"k": 1}]),
            "log_copy": s["log"],  # the run's append-only list: a plain list of its items
        },
    )
    graph.add_edge(START, "a").add_edge("a", "b").add_edge("b", END)
    final = graph.compile().invoke({"doc": doc})
    assert final["doc"] is doc and final["seen"] is doc
    assert type(final["own_dict"]) is dict and final["own_dict"] == {"k": [1]}
    assert type(final["own_list"]) is list and final["own_list"] == [{"k": 1}]
    assert type(final["log_copy"]) is list and final["log_copy"] == [{"n": 1}]
    assert type(final["log"]) is list and final["log"][0] is final["log_copy"][0]


def test_views_kept_at_any_step_keep_their_state_while_later_steps_append_in_place() -> None:
    kept: dict[str, Mapping[str, Any]] = {}
    lists: dict[str, Any] = {}
    graph = StateGraph({"log": Append(), "n": Replace(default=0)})

    def step(name: str, keep: bool) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
        def node(state: Mapping[str, Any]) -> dict[str, Any]:
            if keep:
                kept[name] = state
                lists[name] = state["log"]
            return {"log": [name], "n": state["n"] + 1}

        return node

    order = [("a", False), ("b", False), ("c", True), ("d", False), ("e", False)]
    for name, keep in order:
        graph.add_node(name, step(name, keep))
    graph.add_edge(START, "a")
    for (first, _), (second, _) in itertools.pairwise(order):
        graph.add_edge(first, second)
    graph.add_edge("e", END)
    final = graph.compile().invoke()
    assert final == {"log": ["a", "b", "c", "d", "e"], "n": 5}
    assert dict(kept["c"]) == {"log": ["a", "b"], "n": 2}
    assert list(lists["c"]) == ["a", "b"]


def test_a_bounded_append_in_place_keeps_the_newest_and_counts_drops() -> None:
    graph = StateGraph({"log": Append(max_len=3), "n": Replace(default=0)})
    graph.add_node("add", lambda s: {"log": [s["n"]], "n": s["n"] + 1})
    graph.add_edge(START, "add")
    graph.add_conditional_edges(
        "add", lambda s: "more" if s["n"] < 10 else "done", {"more": "add", "done": END}
    )
    result = graph.compile().run()
    assert result.state["log"] == [7, 8, 9]
    assert result.dropped == {"log": 7}


def test_thaw_gives_a_mutable_deep_copy_of_a_nodes_view() -> None:
    copies: list[Any] = []

    def copier(state: Mapping[str, Any]) -> dict[str, Any]:
        copies.append(thaw(state))
        return {"log": [1]}

    graph = StateGraph({"doc": Replace(), "log": Append()})
    graph.add_node("copy", copier)
    graph.add_edge(START, "copy").add_edge("copy", END)
    final = graph.compile().invoke({"doc": _doc()})
    copied = copies[0]
    assert copied == {"doc": _doc(), "log": []} and type(copied) is dict
    copied["doc"]["records"][0]["tags"].append("x")  # the copy is the caller's to change
    assert final == {"doc": _doc(), "log": [1]}


def test_a_value_frozen_once_is_read_by_every_run_without_being_copied_again() -> None:
    doc = _doc()
    shared = freeze(doc)  # the public one
    seen: list[tuple[Any, Any]] = []

    def reader(state: Mapping[str, Any]) -> dict[str, Any]:
        records = state["doc"]["records"]
        seen.append((records, records[-1]))
        return {"log": [len(records)]}

    graph = StateGraph({"doc": Replace(), "log": Append()})
    graph.add_node("read", reader)
    graph.add_edge(START, "read").add_edge("read", END)
    app = graph.compile()
    finals = [app.invoke({"doc": shared}) for _ in range(3)]
    # The first run froze the nested values it read; the later runs get those very objects.
    assert all(records is seen[0][0] and last is seen[0][1] for records, last in seen)
    assert _is_read_only(seen[0][0]) and _is_read_only(seen[0][1])
    with pytest.raises(TypeError):
        seen[0][1]["tags"].append("x")
    assert all(final["doc"] is doc and final["log"] == [2] for final in finals)
    assert doc == _doc() and type(doc["records"]) is list  # the caller's value never written
