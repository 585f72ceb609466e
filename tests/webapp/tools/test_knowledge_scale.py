"""The knowledge index under load: bm25 ranking, concurrent readers, locks, corruption, re-sync.

Real SQLite files and real threads throughout; nothing here measures time (the figures are in
``make bench-knowledge``).
"""

from __future__ import annotations

import random
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.webapp.tools.kb_stats import stats
from webapp.tools.knowledge import AUTOMERGE, KnowledgeIndex, build_match_query

# FTS5's bm25 over every match with the index's column weights, ties in the order written.
EXACT = (
    "SELECT doc_id, bm25(chunks, 5.0, 1.0, 0.0, 0.0, 1.0) AS score FROM chunks "
    "WHERE chunks MATCH ? ORDER BY score, rowid LIMIT ?"
)
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


def assert_ranked_as_fts5(kb: KnowledgeIndex, raw: sqlite3.Connection, queries: list[str]) -> None:
    for query in queries:
        for top_k in (1, 3, 10):
            found = kb.search(query, top_k)
            expected = raw.execute(EXACT, (build_match_query(query), top_k)).fetchall()
            assert [(d["doc_id"], d["score"]) for d in found] == [
                (doc_id, max(round(-score, 3), 0.001)) for doc_id, score in expected
            ], query
            assert len(found) == len(expected) > 0, query


def test_searches_rank_as_fts5_bm25_over_every_match_across_writes(tmp_path: Path) -> None:
    folder, kb, raw = synced_corpus(tmp_path, 300)
    rng = random.Random(3)
    queries = [
        " ".join(
            rng.choice(RARE if rng.random() < 0.3 else COMMON) for _ in range(rng.randint(2, 7))
        )
        for _ in range(40)
    ]
    assert_ranked_as_fts5(kb, raw, [*queries, COMMON_TEXT])
    for n in range(0, 300, 30):
        (folder / f"doc-{n:04d}.md").unlink()
    (folder / "doc-0001.md").write_text("# Runbook\n\nmemory memory zq001x cache.\n")
    kb.sync_directory(folder)
    for n in range(20):
        kb.add_document(f"extra-{n}.md", corpus_text(rng, 6))
    kb.delete_document("upload/extra-3.md")
    kb.add_document("cache.md", "# 缓存命中率下降\n\n缓存命中率下降时检查 memory 和 network。\n")
    assert_ranked_as_fts5(kb, raw, [*queries, "缓存命中率 memory", "命中 network zq001x"])


def test_equal_scores_come_in_the_order_the_chunks_were_written() -> None:
    kb = KnowledgeIndex(":memory:")
    names = [f"note-{n:02d}.md" for n in random.Random(4).sample(range(30), 30)]
    for name in names:
        kb.add_document(name, "# Same\n\nIdentical text about pools and widgets.\n")

    found = kb.search("pools widgets", 10)

    assert [d["doc_id"] for d in found] == [f"upload/{name}#0" for name in names[:10]]
    assert len({d["score"] for d in found}) == 1


def test_another_index_object_on_the_file_sees_its_writes(tmp_path: Path) -> None:
    folder, writer, _ = synced_corpus(tmp_path, 50)
    reader = KnowledgeIndex(tmp_path / "knowledge.db")  # another process, say
    queries = ["zq002x later", COMMON_TEXT, "memory zq001x network"]
    assert all(d["source"] != "upload/later.md" for d in reader.search("zq002x later", 50))

    writer.add_document("later.md", "# Later\n\nmemory zq002x network, later.\n")
    assert reader.search("zq002x later", 1)[0]["source"] == "upload/later.md"
    writer.delete_document("upload/later.md")
    (folder / "doc-0004.md").unlink()
    writer.sync_directory(folder)

    assert all(d["source"] != "upload/later.md" for d in reader.search("zq002x later", 50))
    assert "runbooks/doc-0004.md" not in {d["doc_id"] for d in reader.documents()}
    assert [reader.search(q, 50) for q in queries] == [writer.search(q, 50) for q in queries]
    writer.close()
    reader.close()


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
        for n in range(1100):  # 5,500 chunks
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
    blocker.execute("UPDATE documents SET title = title")
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
            sqlite3.connect(index_with_upload, timeout=0).execute(
                "SELECT 1 FROM documents"
            ).fetchall()
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
        sqlite3.connect(index_with_upload).execute("SELECT * FROM documents").fetchall()
    write_corpus(tmp_path / "runbooks", 3)

    kb = KnowledgeIndex(index_with_upload)

    assert stats(kb)["documents"] == 0
    assert kb.sync_directory(tmp_path / "runbooks").added == 3


def test_an_index_of_another_schema_version_is_rebuilt(tmp_path: Path) -> None:
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

    assert stats(kb)["documents"] == 0 and kb.search("failover drill") == []
    (tmp_path / "runbooks").mkdir()
    (tmp_path / "runbooks" / "drill.md").write_text("# Drill\n\nThe failover drill is on Friday.")
    assert kb.sync_directory(tmp_path / "runbooks").added == 1
    assert kb.search("failover drill")[0]["doc_id"] == "runbooks/drill.md#0"
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

    assert (report.unchanged, report.added, report.updated, report.removed) == (20, 0, 0, 0)
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
