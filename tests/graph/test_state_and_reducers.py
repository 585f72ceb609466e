"""Replace and Append reducers, the bound of Append, and the plain final state."""

from __future__ import annotations

import enum
import json
from datetime import date
from itertools import pairwise

import pytest

from diagnosis_graph import END, START, Append, InvalidUpdateError, Replace, StateGraph


class Outcome(enum.Enum):
    COMPLETED = "COMPLETED"


def _linear(schema: dict, *updates: dict) -> StateGraph:
    graph = StateGraph(schema)
    names = [f"n{i}" for i in range(len(updates))]
    for name, update in zip(names, updates, strict=True):
        graph.add_node(name, lambda state, update=update: update)
    graph.add_edge(START, names[0])
    for before, after in pairwise(names):
        graph.add_edge(before, after)
    graph.add_edge(names[-1], END)
    return graph


def test_replace_keeps_the_last_written_value_and_defaults() -> None:
    schema = {"a": Replace(default=0), "b": Replace(default="x")}
    final = _linear(schema, {"a": 1}, {"a": 2}).compile().invoke({})
    assert final == {"a": 2, "b": "x"}


def test_replace_default_factory_gives_each_run_its_own_value() -> None:
    calls: list[int] = []

    def factory() -> list[int]:
        calls.append(1)
        return []

    app = _linear({"a": Replace(default_factory=factory)}, {}).compile()
    assert app.invoke({}) == {"a": []}
    assert app.invoke({}) == {"a": []}
    assert len(calls) == 2


def test_append_concatenates_updates_in_order() -> None:
    final = (
        _linear({"log": Append()}, {"log": ["a"]}, {"log": ["b", "c"]})
        .compile()
        .invoke({"log": ["start"]})
    )
    assert final["log"] == ["start", "a", "b", "c"]


def test_bounded_append_keeps_the_newest_items_and_counts_the_dropped() -> None:
    graph = _linear({"log": Append(max_len=3)}, {"log": [1, 2]}, {"log": [3, 4]}, {"log": [5]})
    result = graph.compile().run({})
    assert result.state["log"] == [3, 4, 5]
    assert result.dropped == {"log": 2}
    assert result.steps == 3


def test_append_rejects_a_non_list_update_naming_node_and_key() -> None:
    app = _linear({"log": Append()}, {"log": "oops"}).compile()
    with pytest.raises(InvalidUpdateError) as info:
        app.invoke({})
    assert "'n0'" in str(info.value) and "'log'" in str(info.value)


@pytest.mark.parametrize("bad", [0, -1, 2.5, "3"])
def test_append_bound_must_be_a_positive_integer(bad: object) -> None:
    with pytest.raises(ValueError):
        Append(max_len=bad)  # type: ignore[arg-type]


def test_final_state_is_plain_json_serialisable_data() -> None:
    update = {"doc": {"nested": [{"k": (1, 2)}]}, "log": [{"node": "n0", "attempt": 1}]}
    final = _linear({"doc": Replace(), "log": Append(max_len=8)}, update).compile().invoke({})
    assert json.loads(json.dumps(final)) == {
        "doc": {"nested": [{"k": [1, 2]}]},
        "log": [{"node": "n0", "attempt": 1}],
    }
    assert type(final["doc"]) is dict and type(final["doc"]["nested"]) is list
    assert all(type(event) is dict for event in final["log"])


def test_final_state_is_a_copy_the_caller_may_mutate_freely() -> None:
    app = _linear({"doc": Replace(default_factory=lambda: {"k": [1]})}, {}).compile()
    first = app.invoke({})
    first["doc"]["k"].append(2)
    assert app.invoke({}) == {"doc": {"k": [1]}}


@pytest.mark.parametrize("default", [{}, [], {"k": [1]}, set()])
def test_a_mutable_default_is_refused_with_the_way_to_give_one(default: object) -> None:
    with pytest.raises(ValueError, match="use default_factory"):
        Replace(default=default)
    assert Replace(default_factory=lambda: default).initial() == default


def test_immutable_defaults_of_any_type_are_accepted() -> None:
    for default in (None, 0, "x", (1, 2), frozenset({1}), Outcome.COMPLETED, date(2026, 1, 1)):
        assert Replace(default=default).initial() is default
