"""The knowledge index under load: pruned ranking, concurrent readers, locks, corruption, re-sync.

Real SQLite files and real threads throughout; nothing here measures time (the figures are in
``make bench-knowledge``).
"""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from webapp.tools import term_scores
from webapp.tools.bm25_pruning import Plan, bound, phrase_query
from webapp.tools.knowledge import (
    AUTOMERGE,
    KnowledgeIndex,
    ReadOnlyDocument,
    build_match_query,
    match_terms,
)
from webapp.tools.term_scores import MAX_INCREMENTAL_CHUNKS

# The ranking as it was before pruning: bm25 over every match, ties by chunk id.
EXACT = (
    "SELECT doc_id, bm25(chunks, 5.0, 1.0, 0.0, 0.0, 1.0) AS score FROM chunks "
    "WHERE chunks MATCH ? ORDER BY score, doc_id LIMIT ?"
)
ROOT = Path(__file__).resolve().parents[3]
COMMON_TEXT = "error latency timeout restart replica disk memory queue cache network"
COMMON = COMMON_TEXT.split()
RARE = [f"zq{n:03d}x" for n in range(400)]


def corpus_text(rng: random.Random, sections: int = 4) -> str:
    """A runbook whose sections mix common words with a few rare ones (Zipf-like)."""
    parts = [f"# Runbook {rng.choice(RARE)} {rng.choice(COMMON)}"]
    for n in range(sections):
        words = [rng.choice(RARE) if rng.random() < 0.08 else rng.choice(COMMON) for _ in range(30)]
        parts.append(f"## Step {n}\n\n" + " ".join(words) + ".")
    return "\n\n".join(parts) + "\n"


def write_corpus(folder: Path, count: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        (folder / f"doc-{n:04d}.md").write_text(corpus_text(rng), encoding="utf-8")


def synced_corpus(tmp_path: Path, count: int) -> tuple[Path, KnowledgeIndex, sqlite3.Connection]:
    """A folder of ``count`` runbooks synced into an index file, and a connection of its own."""
    folder = tmp_path / "runbooks"
    write_corpus(folder, count)
    db = tmp_path / "knowledge.db"
    kb = KnowledgeIndex(db)
    kb.sync_directory(folder)
    return folder, kb, sqlite3.connect(db)


def guarded(errors: list[BaseException], target: Callable[[], None]) -> threading.Thread:
    def run() -> None:
        try:
            target()
        except BaseException as exc:  # surfaced by the test's assertion
            errors.append(exc)

    return threading.Thread(target=run)


# --- ranking ----------------------------------------------------------------------------------


def test_pruned_searches_rank_exactly_as_scoring_every_match(tmp_path: Path) -> None:
    folder, kb, raw = synced_corpus(tmp_path, 300)
    rng = random.Random(3)
    queries = [
        " ".join(
            rng.choice(RARE if rng.random() < 0.3 else COMMON) for _ in range(rng.randint(2, 7))
        )
        for _ in range(40)
    ]

    def assert_exact() -> int:
        prunable = 0
        for query in queries:
            for top_k in (1, 3, 10):
                found = kb.search(query, top_k)
                expected = raw.execute(EXACT, (build_match_query(query), top_k)).fetchall()
                assert [(d["doc_id"], d["score"]) for d in found] == [
                    (doc_id, max(round(-score, 3), 0.001)) for doc_id, score in expected
                ], query
            prunable += is_prunable(raw, query, 3)
        return prunable

    assert assert_exact() >= len(queries) // 4  # the comparison covered the pruned path
    # Counts remembered from before these writes now serve as bounds: still exact.
    for n in range(0, 300, 30):  # few enough deletions that common counts are reused
        (folder / f"doc-{n:04d}.md").unlink()
    kb.sync_directory(folder)
    for n in range(20):
        kb.add_document(f"extra-{n}.md", corpus_text(rng, 6))
    assert_exact()


def is_prunable(raw: sqlite3.Connection, query: str, top_k: int) -> bool:
    """Whether the first pass of the plan can leave the common terms out for ``query``."""
    terms = match_terms(query)
    rows = raw.execute("SELECT COUNT(*) FROM chunk_rows").fetchone()[0]
    hits = {
        term: raw.execute(
            "SELECT COUNT(*) FROM chunks WHERE chunks MATCH ?", (phrase_query([term]),)
        ).fetchone()[0]
        for term in terms
    }
    plan = Plan.of(hits, rows)
    if not plan.useful:
        return False
    probe = raw.execute(
        "SELECT bm25(chunks, 5.0, 1.0, 0.0, 0.0, 1.0) AS s FROM chunks WHERE chunks MATCH ? "
        "ORDER BY s LIMIT ?",
        (phrase_query(plan.essential), top_k),
    ).fetchall()
    return len(probe) == top_k and plan.fit(-probe[-1][0])


def computed_scores_match_fts5(
    kb: KnowledgeIndex, raw: sqlite3.Connection, queries: list[str]
) -> int:
    """Assert every chunk's score from the postings kept is FTS5's bm25() to the last bit.

    Returns the generation compared (of ``raw``'s snapshot, which the postings must be of).
    """
    raw.execute("BEGIN")
    try:
        (generation,) = raw.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        for query in queries:
            computed = kb._scores.top(raw, int(generation), match_terms(query), 1_000_000)
            expected = raw.execute(
                "SELECT rowid, bm25(chunks, 5.0, 1.0, 0.0, 0.0, 1.0) FROM chunks WHERE chunks MATCH ?",
                (build_match_query(query),),
            ).fetchall()
            assert computed is not None, query
            assert dict(computed) == dict(expected), query  # identical doubles, every chunk
            assert len(computed) == len(expected) > 0
    finally:
        raw.execute("COMMIT")
    return int(generation)


def test_computed_scores_are_fts5_scores_to_the_last_bit_across_writes(tmp_path: Path) -> None:
    folder, kb, raw = synced_corpus(tmp_path, 200)
    queries = ["memory memory network timeout latency", "zq001x error cache", "disk zq010x zq200x"]
    assert kb._scores.wait()
    kept = kb._scores._postings
    before = computed_scores_match_fts5(kb, raw, queries)

    for n in range(0, 200, 20):
        (folder / f"doc-{n:04d}.md").unlink()
    (folder / "doc-0001.md").write_text("# Runbook\n\nmemory memory zq001x cache.\n")
    kb.sync_directory(folder)
    kb.add_document("extra.md", "# Extra\n\nmemory network zq001x disk.\n")
    kb.add_document("extra.md", "# Extra\n\nnetwork zq010x zq010x disk.\n")  # replaced
    # Applied per write, not read again: the same postings, now of the newest generation.
    assert kb._scores._postings is kept
    assert computed_scores_match_fts5(kb, raw, queries) > before
    kb.delete_document("upload/extra.md")
    computed_scores_match_fts5(kb, raw, queries)
    with pytest.raises(ReadOnlyDocument):  # a refused write leaves the postings as they are
        kb.delete_document("runbooks/doc-0001.md")
    assert kb._scores._postings is kept
    kb.add_document("cache.md", "# 缓存命中率下降\n\n缓存命中率下降时检查 memory 和 network。\n")
    computed_scores_match_fts5(kb, raw, ["缓存命中率 memory", "命中 network zq001x"])
    assert kb._scores._postings is kept


def test_scores_read_term_by_term_before_the_postings_are_fts5_scores_to_the_last_bit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, kb, raw = synced_corpus(tmp_path, 300)
    assert kb._scores.wait()
    kb._scores.drop()  # as at a start with nothing saved, the full read never done
    monkeypatch.setattr(kb._scores, "_reload", lambda conn: None)
    kb._scores.prepare(raw)
    queries = ["memory memory network timeout latency", "zq001x error cache", "disk zq010x zq200x"]
    before = computed_scores_match_fts5(kb, raw, queries)
    cold = kb._scores._partial
    assert cold is not None and cold.generation == before
    assert {"memori", "network", "zq001x", "disk"} <= set(cold.terms)
    assert kb._scores._postings is None
    # Another generation: the lengths are read again, and the terms.
    kb.add_document("extra.md", "# Extra\n\nmemory network zq001x disk.\n")
    kb.delete_document("upload/extra.md")
    kb.add_document("cache.md", "# 缓存命中率下降\n\n缓存命中率下降时检查 memory 和 network。\n")
    long = " ".join(["memory zq001x disk"] * 200)  # 600 tokens: a length of two varint bytes
    kb.add_document("long.md", f"# Long\n\n{long}\n")
    assert computed_scores_match_fts5(kb, raw, [*queries, "缓存命中率 memory"]) > before
    assert kb._scores._partial is not cold
    query = "error zq005x latency memory"
    assert [item["doc_id"] for item in kb.search(query, 10)] == [
        row[0] for row in raw.execute(EXACT, (build_match_query(query), 10))
    ]
    assert kb._scores._postings is None
    kb.close()


@pytest.mark.parametrize("prefetch", [0, 400, 10**9])  # none, some terms, every term
def test_a_full_read_taking_the_terms_read_first_has_every_posting_of_a_plain_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefetch: int
) -> None:
    _, kb, raw = synced_corpus(tmp_path, 150)
    kb.add_document("the.md", "# The note\n\nThe memory of the network is the zq001x.\n")
    kb.close()
    (tmp_path / "knowledge.db-postings.npz").unlink()  # as after a crash: nothing saved
    monkeypatch.setattr(term_scores, "PREFETCH_POSITIONS", prefetch)
    monkeypatch.setattr(term_scores, "LOAD_POSITIONS", 300)  # many statements, runs cut short
    kb = KnowledgeIndex(tmp_path / "knowledge.db")
    found = kb.search("memory zq001x network", 5)  # terms read by a search, maybe meanwhile
    assert kb._scores.wait()
    assert kb._scores.read_from == "index"
    postings = kb._scores._postings
    assert postings is not None
    plain = term_scores._read_all(raw, "chunks", kb._scores._columns, kb._scores._weights)
    assert postings.terms.keys() == plain.terms.keys()
    for term, (ids, freqs, _) in plain.terms.items():
        assert np.array_equal(postings.terms[term][0], ids), term
        assert np.array_equal(postings.terms[term][1], freqs), term
    assert np.array_equal(postings.lengths, plain.lengths)
    assert np.array_equal(postings.alive, plain.alive)
    assert "the" in postings.terms  # the stopwords too, read last
    assert kb._scores._partial is None  # the terms read first are let go
    assert kb.search("memory zq001x network", 5) == found
    kb.close()


def test_an_upload_larger_than_a_sync_batch_limit_is_still_applied(tmp_path: Path) -> None:
    _, kb, raw = synced_corpus(tmp_path, 100)
    assert kb._scores.wait()
    kept = kb._scores._postings
    rng = random.Random(5)
    big = "\n\n".join(corpus_text(rng, 1).replace("# ", "## ", 1) for _ in range(2500))
    summary = kb.add_document("big.md", big)
    assert summary["chunks"] > MAX_INCREMENTAL_CHUNKS
    assert kb._scores._postings is kept  # applied, not dropped: no full read after an upload
    computed_scores_match_fts5(kb, raw, ["memory zq001x network", "error latency zq300x"])


def test_a_write_too_large_to_apply_reads_the_postings_again(tmp_path: Path) -> None:
    folder, kb, raw = synced_corpus(tmp_path, 100)
    assert kb._scores.wait()
    kept = kb._scores._postings
    write_corpus(folder, 700, seed=8)  # every document rewritten: ~3,500 chunks in one batch
    kb.sync_directory(folder)
    assert kb._scores.wait()
    assert kb._scores._postings is not kept
    computed_scores_match_fts5(kb, raw, ["memory zq001x network", "error latency zq300x"])


def test_searches_while_the_postings_are_read_agree_with_fts5(tmp_path: Path) -> None:
    _, kb, raw = synced_corpus(tmp_path, 100)
    query = "error zq005x latency"
    kb._scores.drop()  # as right after a start: nothing kept yet
    first = kb.search(query, 10)  # its own terms read from the index; starts the full read
    assert kb._scores.wait()
    again = kb.search(query, 10)
    kb.close()
    assert again == first
    assert [row[0] for row in raw.execute(EXACT, (build_match_query(query), 10))] == [
        item["doc_id"] for item in first
    ]


def test_postings_are_saved_on_close_and_read_back_only_while_current(tmp_path: Path) -> None:
    folder, kb, raw = synced_corpus(tmp_path, 100)
    db = tmp_path / "knowledge.db"
    queries = ["memory zq001x network", "error latency zq300x"]
    assert kb._scores.wait()
    kb.add_document("extra.md", "# Extra\n\nmemory network zq001x disk.\n")
    kb.close()

    kb = KnowledgeIndex(db)
    assert kb._scores.wait()
    assert kb._scores.read_from == "saved"
    computed_scores_match_fts5(kb, raw, queries)
    kb.close()
    # Writes that did not save them (another process, killed): the saved ones catch up.
    writer = KnowledgeIndex(db)
    assert writer._scores.wait()
    writer.add_document("later.md", "# Later\n\nmemory zq001x network written later.\n")
    writer.delete_document("upload/extra.md")
    writer._scores._at_exit.detach()  # as if killed: nothing saved
    writer._scores._saved = None
    writer.close()
    kb = KnowledgeIndex(db)
    assert kb._scores.wait()
    assert kb._scores.read_from == "saved"
    assert kb._scores.full_reads == 0
    computed_scores_match_fts5(kb, raw, queries)
    kb.close()
    # Another file at the very same generation: its nonce differs, so nothing is taken.
    saved = (tmp_path / "knowledge.db-postings.npz").read_bytes()
    (generation,) = raw.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    raw.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    kb = KnowledgeIndex(db)
    kb.sync_directory(folder)
    kb.close()
    fresh = sqlite3.connect(db)
    fresh.execute("UPDATE meta SET value = ? WHERE key = 'generation'", (generation,))
    fresh.commit()
    (tmp_path / "knowledge.db-postings.npz").write_bytes(saved)
    kb = KnowledgeIndex(db)
    assert kb._scores.wait()
    assert kb._scores.read_from == "index"
    computed_scores_match_fts5(kb, fresh, queries)
    kb.close()


@pytest.mark.parametrize("inline", [500, 0])  # by the search itself, or by the helper thread
def test_another_index_object_on_the_file_catches_up_with_its_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inline: int
) -> None:
    monkeypatch.setattr(term_scores, "MAX_INLINE_CHUNKS", inline)
    folder, writer, raw = synced_corpus(tmp_path, 100)
    reader = KnowledgeIndex(tmp_path / "knowledge.db")  # another process, say
    queries = ["memory zq001x network", "error latency zq300x", "later zq002x"]
    assert writer._scores.wait() and reader._scores.wait()
    kept = reader._scores._postings
    full_reads, catch_ups = reader._scores.full_reads, reader._scores.catch_ups
    writer.add_document("later.md", "# Later\n\nmemory zq002x network, later.\n")
    (folder / "doc-0003.md").unlink()
    (folder / "doc-0004.md").write_text("# Runbook\n\nlater memory zq001x cache.\n")
    writer.sync_directory(folder)
    writer.add_document("later.md", "# Later\n\nlater zq002x disk.\n")  # replaced
    reader.search("memory zq001x network", 5)  # sees a newer generation: catches up
    assert reader._scores.wait()
    assert reader._scores.catch_ups == catch_ups + 1
    assert reader._scores.full_reads == full_reads  # no full read
    assert reader._scores._postings is kept
    computed_scores_match_fts5(reader, raw, queries)
    writer.close()
    reader.close()


@pytest.mark.parametrize("inline", [500, 0])
def test_a_catch_up_reads_the_chunk_ids_exactly_when_chunks_it_knew_were_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inline: int
) -> None:
    monkeypatch.setattr(term_scores, "MAX_INLINE_CHUNKS", inline)
    folder, writer, raw = synced_corpus(tmp_path, 100)
    reader = KnowledgeIndex(tmp_path / "knowledge.db")
    queries = ["memory zq001x network", "later zq002x disk", "error latency zq300x"]
    assert writer._scores.wait() and reader._scores.wait()
    kept = reader._scores._postings

    def caught_up() -> None:
        catch_ups = reader._scores.catch_ups
        reader.search("memory zq001x network", 5)
        assert reader._scores.wait()
        assert reader._scores.catch_ups == catch_ups + 1
        assert reader._scores._postings is kept
        computed_scores_match_fts5(reader, raw, queries)

    # Only new chunks (one of them replaced before the reader saw it): no list of ids read.
    writer.add_document("later.md", "# Later\n\nmemory zq002x network, later.\n")
    writer.add_document("later.md", "# Later\n\nlater zq002x disk.\n")
    writer.add_document("more.md", "# More\n\nmemory zq001x disk.\n")
    caught_up()
    assert reader._scores.id_lists == 0
    # Chunks the reader knew deleted (with new ones in the same catch-up): the list tells which.
    writer.delete_document("upload/later.md")
    caught_up()
    assert reader._scores.id_lists == 1
    (folder / "doc-0003.md").unlink()
    (folder / "doc-0004.md").write_text("# Runbook\n\nlater memory zq001x cache.\n")
    writer.sync_directory(folder)
    writer.add_document("again.md", "# Again\n\nzq002x network.\n")
    caught_up()
    assert reader._scores.id_lists == 2
    writer.add_document("last.md", "# Last\n\nmemory zq300x.\n")
    caught_up()
    assert reader._scores.id_lists == 2
    assert reader._scores.full_reads == 0
    writer.close()
    reader.close()


def test_postings_lacking_too_many_chunks_are_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, writer, raw = synced_corpus(tmp_path, 50)
    reader = KnowledgeIndex(tmp_path / "knowledge.db")
    assert writer._scores.wait() and reader._scores.wait()
    full_reads = reader._scores.full_reads
    monkeypatch.setattr(term_scores, "MAX_CATCH_UP_CHUNKS", 0)
    monkeypatch.setattr(term_scores, "MAX_INLINE_CHUNKS", 0)
    writer.add_document("one.md", "# One\n\nmemory zq001x network zq002x.\n")
    reader.search("memory zq001x", 5)
    assert reader._scores.wait()
    assert reader._scores.read_from == "index"
    assert reader._scores.full_reads == full_reads + 1
    computed_scores_match_fts5(reader, raw, ["memory zq001x", "network zq002x"])
    writer.close()
    reader.close()


def test_an_index_never_closed_saves_its_postings_when_the_process_exits(tmp_path: Path) -> None:
    _, kb, raw = synced_corpus(tmp_path, 50)
    kb.close()
    db = tmp_path / "knowledge.db"
    script = (
        "import sys\n"
        "from webapp.tools.knowledge import KnowledgeIndex\n"
        "kb = KnowledgeIndex(sys.argv[1])\n"
        "assert kb.wait_until_loaded()\n"
        "kb.add_document('late.md', '# Late\\n\\nmemory zq001x after the last save.\\n')\n"
    )
    subprocess.run([sys.executable, "-c", script, str(db)], check=True, cwd=ROOT)

    kb = KnowledgeIndex(db)
    assert kb._scores.wait()
    assert kb._scores.read_from == "saved"  # of the generation the upload made
    computed_scores_match_fts5(kb, raw, ["memory zq001x", "late network"])
    kb.close()


def test_scores_of_a_10k_document_corpus_are_fts5_scores_to_the_last_bit(tmp_path: Path) -> None:
    _, kb, raw = synced_corpus(tmp_path, 10_000)
    assert kb._scores.wait()
    rng = random.Random(11)
    queries = [
        " ".join(
            rng.choice(RARE if rng.random() < 0.3 else COMMON) for _ in range(rng.randint(1, 9))
        )
        for _ in range(12)
    ]
    computed_scores_match_fts5(kb, raw, [*queries, COMMON_TEXT])
    kb.add_document("note.md", "# Note\n\nerror latency zq001x timeout.\n")
    computed_scores_match_fts5(kb, raw, queries)


def test_a_plan_promotes_common_terms_until_their_bound_is_below_the_kth_score() -> None:
    hits = {"rare": 5, "mid": 300, "common": 5000}
    plan = Plan.of(hits, 10_000)

    assert plan.essential == ["rare"]
    assert [term for term, _ in plan.rest] == ["mid", "common"]
    assert plan.fit(bound(10_000, 300) + bound(10_000, 5000) + 0.01)
    assert [term for term, _ in plan.rest] == ["mid", "common"]
    assert plan.fit(bound(10_000, 5000) + 0.01)
    assert plan.essential == ["rare", "mid"]
    assert not plan.fit(0.0)
    assert not plan.useful


def test_a_query_of_common_terms_only_still_prunes_from_its_rarest() -> None:
    plan = Plan.of({"a": 900, "b": 400}, 1000)

    assert (plan.essential, [term for term, _ in plan.rest]) == (["b"], ["a"])


def test_terms_no_chunk_holds_are_left_out_of_the_plan() -> None:
    plan = Plan.of({"absent": 0, "rare": 2, "common": 500}, 1000)

    assert plan.queries() == ('("rare") AND ("common")', '"rare"')


# --- concurrency ------------------------------------------------------------------------------


def test_searches_while_a_sync_rewrites_every_document_stay_consistent(tmp_path: Path) -> None:
    folder = tmp_path / "runbooks"
    body = "\n\n".join(
        f"## Step {n}\n\nChecklist for the {{version}} release: drain the node, verify the "
        "replicas, then restart the service and watch the error rate for ten minutes."
        for n in range(5)
    )

    def write(version: str) -> None:
        folder.mkdir(exist_ok=True)
        for n in range(1100):  # 5,500 chunks: more than one write batch (BATCH_CHUNKS)
            (folder / f"doc-{n:04d}.md").write_text(
                f"# Doc {n}\n\n" + body.format(version=version), encoding="utf-8"
            )

    write("alpha")
    kb = KnowledgeIndex(tmp_path / "knowledge.db")
    kb.sync_directory(folder)
    errors: list[BaseException] = []
    done = threading.Event()
    searches = [0]

    def searcher() -> None:
        while not done.is_set():
            found = kb.search("checklist drain verify replicas restart", 10)
            assert len(found) == 10
            assert len({d["doc_id"] for d in found}) == 10
            versions: dict[str, set[str]] = {}
            for d in found:
                version = "alpha" if " alpha " in d["content"] else "omega"
                versions.setdefault(d["source"], set()).add(version)
            assert all(len(seen) == 1 for seen in versions.values()), versions
            searches[0] += 1

    threads = [guarded(errors, searcher) for _ in range(3)]
    for thread in threads:
        thread.start()
    try:
        write("omega")
        before = searches[0]
        assert kb.sync_directory(folder).updated == 1100
        during = searches[0] - before
    finally:
        done.set()
        for thread in threads:
            thread.join()

    assert errors == []
    assert during > 0
    assert all(" omega " in d["content"] for d in kb.search("checklist", 5))


# --- locks and corruption ---------------------------------------------------------------------


def hold_exclusive_lock(db: Path) -> sqlite3.Connection:
    """A connection that keeps every other connection out of ``db`` until it is closed."""
    blocker = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    blocker.execute("PRAGMA locking_mode = EXCLUSIVE")
    blocker.execute("BEGIN EXCLUSIVE")
    blocker.execute("UPDATE meta SET value = value WHERE key = 'schema_version'")
    return blocker


@pytest.fixture
def index_with_upload(tmp_path: Path) -> Path:
    db = tmp_path / "knowledge.db"
    kb = KnowledgeIndex(db)
    kb.add_document("drill.md", "# Drill\n\nThe quarterly failover drill is on Friday.\n")
    kb.close()
    return db


def test_a_locked_index_file_is_waited_for_and_kept(index_with_upload: Path) -> None:
    blocker = hold_exclusive_lock(index_with_upload)
    released = threading.Event()

    def release() -> None:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            sqlite3.connect(index_with_upload, timeout=0).execute("SELECT 1 FROM meta").fetchall()
        blocker.execute("COMMIT")
        released.set()
        blocker.close()

    timer = threading.Timer(0.5, release)
    timer.start()
    kb = KnowledgeIndex(index_with_upload, busy_timeout=30)
    timer.join()

    assert released.is_set()  # it returned only once the lock was gone
    assert [d["doc_id"] for d in kb.documents()] == ["upload/drill.md"]
    assert kb.search("failover drill")[0]["source"] == "upload/drill.md"


def test_a_lock_outlasting_the_timeout_raises_and_deletes_nothing(
    index_with_upload: Path,
) -> None:
    blocker = hold_exclusive_lock(index_with_upload)
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            KnowledgeIndex(index_with_upload, busy_timeout=0.3)
    finally:
        blocker.execute("COMMIT")
        blocker.close()

    kb = KnowledgeIndex(index_with_upload)
    assert [d["doc_id"] for d in kb.documents()] == ["upload/drill.md"]


def test_an_index_file_with_a_damaged_schema_page_is_rebuilt(
    index_with_upload: Path, tmp_path: Path
) -> None:
    data = bytearray(index_with_upload.read_bytes())
    data[100:4096] = b"\xa5" * (4096 - 100)  # page 1 after the header: the schema table
    index_with_upload.write_bytes(bytes(data))
    with pytest.raises(sqlite3.DatabaseError, match="malformed"):
        sqlite3.connect(index_with_upload).execute("SELECT * FROM meta").fetchall()
    write_corpus(tmp_path / "runbooks", 3)

    kb = KnowledgeIndex(index_with_upload)

    assert kb.stats()["documents"] == 0
    assert kb.sync_directory(tmp_path / "runbooks").added == 3


def test_an_index_of_the_previous_schema_is_migrated_keeping_uploads(tmp_path: Path) -> None:
    db = tmp_path / "knowledge.db"
    old = sqlite3.connect(db, isolation_level=None)
    old.executescript(
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
        INSERT INTO meta VALUES ('schema_version', '2');
        CREATE TABLE documents (
            source TEXT PRIMARY KEY, origin TEXT NOT NULL, title TEXT NOT NULL,
            hash TEXT NOT NULL, bytes INTEGER NOT NULL, chunks INTEGER NOT NULL, uploaded_at TEXT
        );
        CREATE VIRTUAL TABLE chunks USING fts5(
            title, content, doc_id UNINDEXED, source UNINDEXED, cjk,
            tokenize = 'porter unicode61 remove_diacritics 2'
        );
        INSERT INTO documents VALUES
            ('upload/drill.md', 'upload', 'Drill', 'h', 40, 1, '2026-11-30T10:00:00.000Z');
        INSERT INTO chunks (title, content, doc_id, source, cjk) VALUES
            ('Drill', 'The quarterly failover drill is on Friday.', 'upload/drill.md#0',
             'upload/drill.md', '');
        """
    )
    old.close()

    kb = KnowledgeIndex(db)

    assert kb.search("failover drill")[0]["doc_id"] == "upload/drill.md#0"
    assert kb.delete_document("upload/drill.md")["chunks"] == 1
    assert kb.search("failover drill") == []
    kb.close()
    config = sqlite3.connect(db).execute("SELECT v FROM chunks_config WHERE k = 'automerge'")
    assert config.fetchone() == (AUTOMERGE,)  # larger FTS5 merges from now on


# --- incremental sync -------------------------------------------------------------------------


def test_a_resync_rewrites_only_the_changed_documents(tmp_path: Path) -> None:
    folder, kb, observer = synced_corpus(tmp_path, 20)

    def chunk_rows() -> dict[int, str]:
        return dict(observer.execute("SELECT rowid, doc_id FROM chunks").fetchall())

    before, version = chunk_rows(), observer.execute("PRAGMA data_version").fetchone()
    report = kb.sync_directory(folder)

    assert (report.unchanged, report.changed) == (20, False)
    assert observer.execute("PRAGMA data_version").fetchone() == version  # no commit at all
    assert chunk_rows() == before

    (folder / "doc-0005.md").write_text(corpus_text(random.Random(99), 6), encoding="utf-8")
    report = kb.sync_directory(folder)
    after = chunk_rows()

    assert (report.updated, report.unchanged) == (1, 19)
    kept = {row: doc for row, doc in before.items() if not doc.startswith("runbooks/doc-0005")}
    assert {row: doc for row, doc in after.items() if row in kept} == kept
    written = sorted(doc for row, doc in after.items() if row not in before)
    assert written == sorted(doc for doc in after.values() if doc.startswith("runbooks/doc-0005"))
    (chunks,) = [d["chunks"] for d in kb.documents() if d["doc_id"].endswith("0005.md")]
    assert len(written) == chunks
    # The running total the pruning bounds use matches the table.
    assert observer.execute("SELECT value FROM meta WHERE key = 'chunks'").fetchone() == (
        str(len(after)),
    )
