from __future__ import annotations

import threading
from typing import Any

import pytest

from webapp.tools.doc_tracker import RetrievedDocTracker


def doc(doc_id: str, score: float = 1.5) -> dict[str, Any]:
    return {
        "doc_id": doc_id,
        "title": f"Runbook > {doc_id}",
        "source": doc_id.split("#")[0],
        "score": score,
        "content": f"full text of {doc_id}",
    }


def seen(tracker: RetrievedDocTracker, session_key: str) -> list[str]:
    """The doc ids ``tracker`` remembers for ``session_key``, oldest first."""
    return list(tracker._seen.get(session_key, ()))


def test_first_retrieval_returns_documents_unchanged() -> None:
    tracker = RetrievedDocTracker()
    documents = [doc("runbooks/pool.md#0"), doc("runbooks/pool.md#1")]

    assert tracker.filter("s1", documents) == documents


def test_a_chunk_retrieved_again_for_the_same_key_becomes_a_stub() -> None:
    tracker = RetrievedDocTracker()
    tracker.filter("s1", [doc("runbooks/pool.md#0")])

    result = tracker.filter("s1", [doc("runbooks/pool.md#0", score=2.0), doc("runbooks/pool.md#1")])

    assert result[0] == {
        "doc_id": "runbooks/pool.md#0",
        "title": "Runbook > runbooks/pool.md#0",
        "source": "runbooks/pool.md",
        "score": 2.0,
        "content": "(already retrieved earlier in this diagnosis; see doc_id runbooks/pool.md#0)",
        "already_retrieved": True,
    }
    assert result[1] == doc("runbooks/pool.md#1")


def test_a_duplicate_within_one_call_is_stubbed_from_its_second_occurrence() -> None:
    tracker = RetrievedDocTracker()

    result = tracker.filter("s1", [doc("a#0"), doc("a#0")])

    assert "already_retrieved" not in result[0]
    assert result[1]["already_retrieved"] is True


def test_other_keys_are_unaffected() -> None:
    tracker = RetrievedDocTracker()
    tracker.filter("s1", [doc("a#0")])

    assert tracker.filter("s2", [doc("a#0")]) == [doc("a#0")]
    assert tracker.filter("s1", [doc("a#0")])[0]["already_retrieved"] is True


def test_clear_forgets_only_that_key() -> None:
    tracker = RetrievedDocTracker()
    tracker.filter("s1", [doc("a#0")])
    tracker.filter("s2", [doc("a#0")])

    assert tracker.clear("s1") is True
    assert tracker.clear("s1") is False
    assert tracker.filter("s1", [doc("a#0")]) == [doc("a#0")]
    assert tracker.filter("s2", [doc("a#0")])[0]["already_retrieved"] is True


def test_inputs_are_not_mutated_and_documents_without_id_pass_through() -> None:
    tracker = RetrievedDocTracker()
    original = doc("a#0")
    tracker.filter("s1", [original])
    odd = {"title": "no id", "content": "x"}

    result = tracker.filter("s1", [original, odd])

    assert original == doc("a#0")
    assert result[1] == odd
    assert seen(tracker, "s1") == ["a#0"]
    assert tracker.filter("s1", []) == []


def test_the_number_of_keys_is_capped_evicting_the_least_recently_used() -> None:
    tracker = RetrievedDocTracker(max_keys=2)
    tracker.filter("s1", [doc("a#0")])
    tracker.filter("s2", [doc("a#0")])
    tracker.filter("s1", [doc("b#0")])  # s1 is now the most recently used

    tracker.filter("s3", [doc("a#0")])

    assert len(tracker._seen) == 2
    assert seen(tracker, "s2") == []
    assert seen(tracker, "s1") == ["a#0", "b#0"]
    assert tracker.filter("s2", [doc("a#0")]) == [doc("a#0")]  # forgotten: returned in full


def test_caps_must_be_positive() -> None:
    with pytest.raises(ValueError):
        RetrievedDocTracker(max_keys=0)


def test_concurrent_filters_give_each_chunk_in_full_exactly_once_per_key() -> None:
    tracker = RetrievedDocTracker()
    documents = [doc(f"a#{n}") for n in range(50)]
    full_counts: list[int] = []
    lock = threading.Lock()
    start = threading.Barrier(8)

    def worker(key: str) -> None:
        start.wait()
        full = sum(
            "already_retrieved" not in d for _ in range(20) for d in tracker.filter(key, documents)
        )
        with lock:
            full_counts.append(full)

    threads = [threading.Thread(target=worker, args=(f"s{n % 2}",)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sum(full_counts) == 2 * len(documents)  # each of the two keys saw each chunk once
