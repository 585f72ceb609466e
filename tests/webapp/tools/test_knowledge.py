from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import pytest

from tests.webapp.tools.kb_stats import stats
from webapp.tools.chunking import MAX_CHUNK_CHARS, chunk_with_title
from webapp.tools.knowledge import KnowledgeIndex, build_match_query


def chunk_document(text: str, filename: str) -> list[tuple[str, str]]:
    return chunk_with_title(text, filename)[1]


POOL_RUNBOOK = """# Database connection pool exhaustion

Applies to every service that talks to the orders and payments databases.

## Symptoms

Requests hang and then fail with `connection pool exhausted (50/50)`. Threads block waiting
for a free connection; p99 latency climbs to the request timeout while CPU stays low.

## Diagnosis

Check the pool metrics: active connections pinned at the maximum and pending threads growing.
Look for slow queries or leaked connections that are never returned to the pool.

```
# this is a shell comment, not a heading
SELECT * FROM pg_stat_activity;
```

## Mitigation

Restart pods one at a time, or raise the maximum pool size.
"""

CACHE_RUNBOOK = """# Redis cache eviction storm

## Symptoms

The cache hit ratio collapses and the database sees a surge of reads. Keys are evicting
faster than they are written because maxmemory was reached.

## Diagnosis

Compare evicted_keys with the write rate and check the memory policy of the instance. Large
values written by a batch job are the usual cause of sudden evictions.
"""

GC_RUNBOOK = """# JVM garbage collection pauses

## Symptoms

Latency spikes every few minutes line up with long stop-the-world pauses in the GC log; heap
usage climbs to the limit before each pause and the service stops answering health checks.
"""


def write_runbooks(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "db-pool.md").write_text(POOL_RUNBOOK, encoding="utf-8")
    (folder / "cache.md").write_text(CACHE_RUNBOOK, encoding="utf-8")
    (folder / "jvm").mkdir(exist_ok=True)
    (folder / "jvm" / "gc.md").write_text(GC_RUNBOOK, encoding="utf-8")
    return folder


@pytest.fixture
def runbooks(tmp_path: Path) -> Path:
    return write_runbooks(tmp_path / "runbooks")


@pytest.fixture
def index(runbooks: Path) -> KnowledgeIndex:
    kb = KnowledgeIndex(":memory:")
    kb.sync_directory(runbooks)
    return kb


# --- chunking -------------------------------------------------------------------------------


def test_chunks_are_titled_with_their_heading_path_and_keep_the_heading_line() -> None:
    chunks = chunk_document(POOL_RUNBOOK, "db-pool.md")

    titles = [title for title, _ in chunks]
    assert titles == [
        "Database connection pool exhaustion > Symptoms",
        "Database connection pool exhaustion > Diagnosis",
    ]
    symptoms = chunks[0][1]
    assert symptoms.startswith("# Database connection pool exhaustion")
    assert "## Symptoms" in symptoms
    assert "Applies to every service" in symptoms


def test_fenced_code_comments_are_not_headings() -> None:
    chunks = chunk_document(POOL_RUNBOOK, "db-pool.md")

    assert not any("shell comment" in title for title, _ in chunks)
    assert "# this is a shell comment" in chunks[1][1]


def test_tiny_sections_merge_into_the_previous_chunk() -> None:
    chunks = chunk_document(POOL_RUNBOOK, "db-pool.md")

    diagnosis = chunks[1][1]
    assert "## Mitigation" in diagnosis
    assert "raise the maximum pool size" in diagnosis


def test_third_level_headings_extend_the_title_path() -> None:
    body = "Long enough body text for a section of its own. " * 4
    text = f"# Runbook\n\n## Mitigation\n\n### Short term\n\n{body}\n\n### Long term\n\n{body}\n"

    titles = [title for title, _ in chunk_document(text, "r.md")]

    assert titles == ["Runbook > Mitigation > Short term", "Runbook > Mitigation > Long term"]


def test_long_sections_split_on_paragraph_boundaries() -> None:
    paragraphs = [f"Paragraph {n}:" + " the pool waits for connections." * 12 for n in range(12)]
    text = "# Big\n\n## Notes\n\n" + "\n\n".join(paragraphs)

    chunks = chunk_document(text, "big.md")

    assert len(chunks) > 2
    assert all(title == "Big > Notes" for title, _ in chunks)
    assert all(len(content) <= MAX_CHUNK_CHARS for _, content in chunks)
    joined = "\n\n".join(content for _, content in chunks)
    for paragraph in paragraphs:
        assert paragraph in joined  # no paragraph was cut in half


def test_a_single_huge_paragraph_is_wrapped_under_the_limit() -> None:
    text = "word " * 2000

    chunks = chunk_document(text, "wall.txt")

    assert len(chunks) > 1
    assert all(len(content) <= MAX_CHUNK_CHARS for _, content in chunks)


def test_plain_text_is_split_into_paragraph_chunks_titled_by_file_name() -> None:
    paragraphs = [
        f"Note {n}. " + "Disk usage on the batch hosts grows nightly. " * 8 for n in range(8)
    ]

    chunks = chunk_document("\n\n".join(paragraphs), "notes.txt")

    assert len(chunks) >= 2
    assert {title for title, _ in chunks} == {"notes.txt"}
    assert all(len(content) <= MAX_CHUNK_CHARS for _, content in chunks)


# --- ranking ----------------------------------------------------------------------------------


def test_the_pool_runbook_ranks_first_for_an_exhausted_pool(index: KnowledgeIndex) -> None:
    results = index.search("connection pool exhausted waiting", top_k=3)

    assert results[0]["source"] == "runbooks/db-pool.md"
    assert results[0]["doc_id"].startswith("runbooks/db-pool.md#")
    assert set(results[0]) == {"doc_id", "title", "source", "score", "content"}
    scores = [result["score"] for result in results]
    assert scores == sorted(scores, reverse=True)
    assert all(isinstance(score, float) and score > 0 for score in scores)
    assert all(score == round(score, 3) for score in scores)


def test_titles_weigh_more_than_content(tmp_path: Path) -> None:
    folder = tmp_path / "kb"
    folder.mkdir()
    filler = "Routine operational notes about deployments and dashboards for the team. " * 3
    (folder / "title.md").write_text(f"# Throttling\n\n{filler}\n", encoding="utf-8")
    # Three mentions in the body outrank one heading when both columns weigh the same.
    (folder / "body.md").write_text(
        f"# Deployments\n\n{filler} Throttling may happen; throttling is expected, "
        "throttling passes.\n",
        encoding="utf-8",
    )
    for n in range(4):  # unrelated documents keep the term rare, so its idf is meaningful
        (folder / f"other-{n}.md").write_text(f"# Other {n}\n\n{filler}\n", encoding="utf-8")
    kb = KnowledgeIndex(":memory:")
    kb.sync_directory(folder)

    results = kb.search("throttling")

    assert [r["source"] for r in results] == ["kb/title.md", "kb/body.md"]


def test_stemming_matches_word_forms(index: KnowledgeIndex) -> None:
    assert index.search("exhaustion")[0]["source"] == "runbooks/db-pool.md"
    assert index.search("evictions")[0]["source"] == "runbooks/cache.md"
    assert index.search("evicting")[0]["source"] == "runbooks/cache.md"
    assert index.search("pausing")[0]["source"] == "runbooks/jvm/gc.md"


def test_top_k_limits_results_and_is_clamped(index: KnowledgeIndex) -> None:
    assert len(index.search("symptoms", top_k=1)) == 1
    assert len(index.search("symptoms", top_k=0)) == 1
    assert len(index.search("symptoms", top_k=10)) == 3  # one Symptoms section per runbook
    assert len(index.search("symptoms", top_k=1000)) == 3
    assert len(index.search("symptoms", top_k="2")) == 2  # type: ignore[arg-type]


def test_doc_ids_are_stable_across_restarts(tmp_path: Path, runbooks: Path) -> None:
    db = tmp_path / "cache" / "knowledge.db"
    first = KnowledgeIndex(db)
    first.sync_directory(runbooks)
    before = first.search("connection pool exhausted", top_k=5)
    first.close()

    second = KnowledgeIndex(db)
    report = second.sync_directory(runbooks)

    assert report.unchanged == 3 and report.added == report.updated == report.removed == 0
    assert second.search("connection pool exhausted", top_k=5) == before


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '"unterminated phrase',
        "*",
        "pool*",
        "NEAR(pool connection",
        "NEAR(pool, 2)",
        "AND OR NOT",
        "pool AND",
        "-pool",
        "title:pool",
        "content : exhausted",
        "'; DROP TABLE chunks; --",
        "'; DROP TABLE x; --",
        "^pool",
        "(((",
        "{title content}: pool",
        "pool + connection",
        "😀🔥",
        "数据库连接池",
        "connexión agotada",
        "\x00\x01\x02",
        "a" * 10000,
        "pool " * 5000,
        "",
        "   ",
    ],
)
def test_hostile_queries_never_raise(index: KnowledgeIndex, query: str) -> None:
    results = index.search(query)

    assert isinstance(results, list)
    assert stats(index)["chunks"] > 0  # nothing was dropped


def test_hostile_queries_still_find_their_words(index: KnowledgeIndex) -> None:
    for query in ['"pool', "pool*", "NEAR(pool", "-pool", "title:pool", "pool'; DROP TABLE x; --"]:
        assert index.search(query)[0]["source"] == "runbooks/db-pool.md", query


def test_garbage_and_stopword_queries_return_nothing(index: KnowledgeIndex) -> None:
    for query in ["", "   ", "*", '"', "!!! ??? ---", "what is the", "😀"]:
        assert index.search(query) == [], query
    assert index.search(None) == []  # type: ignore[arg-type]


def test_match_query_quotes_tokens_and_joins_with_or() -> None:
    assert build_match_query('pool NEAR(x "exhausted" AND -waiting*') == (
        '"pool" OR "near" OR "exhausted" OR "waiting"'
    )
    assert build_match_query("Café, naïve") == '"café" OR "naïve"'


def test_diacritics_are_folded(tmp_path: Path) -> None:
    kb = KnowledgeIndex(":memory:")
    kb.add_document("cafe.md", "# Café outage\n\nThe café payment terminal lost its uplink.\n")

    assert kb.search("cafe")[0]["doc_id"] == "upload/cafe.md#0"


# --- sync -------------------------------------------------------------------------------------


def test_sync_adds_then_skips_unchanged_files(runbooks: Path) -> None:
    kb = KnowledgeIndex(":memory:")

    first = kb.sync_directory(runbooks)
    second = kb.sync_directory(runbooks)

    assert (first.added, first.updated, first.removed, first.unchanged) == (3, 0, 0, 0)
    assert (second.added, second.updated, second.removed, second.unchanged) == (0, 0, 0, 3)
    assert stats(kb)["documents"] == 3
    assert [d["doc_id"] for d in kb.documents()] == [
        "runbooks/cache.md",
        "runbooks/db-pool.md",
        "runbooks/jvm/gc.md",
    ]


def test_sync_updates_changed_files_and_removes_deleted_ones(runbooks: Path) -> None:
    kb = KnowledgeIndex(":memory:")
    kb.sync_directory(runbooks)
    (runbooks / "cache.md").write_text(
        "# Redis failover\n\n## Symptoms\n\nSentinel promoted a replica and clients kept "
        "writing to the old primary, which now rejects writes as read-only.\n",
        encoding="utf-8",
    )
    (runbooks / "jvm" / "gc.md").unlink()
    (runbooks / "disk.txt").write_text("Disk full on the log volume of batch hosts.\n")

    report = kb.sync_directory(runbooks)

    assert asdict(report) == {
        "added": 1,
        "updated": 1,
        "removed": 1,
        "unchanged": 1,
        "skipped": 0,
    }
    assert index_sources(kb, "evictions") == []
    assert index_sources(kb, "sentinel replica") == ["runbooks/cache.md"]
    assert index_sources(kb, "garbage collection pauses") == []
    assert index_sources(kb, "disk full") == ["runbooks/disk.txt"]


def test_sync_ignores_other_files_and_skips_unreadable_ones(runbooks: Path) -> None:
    (runbooks / "diagram.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (runbooks / ".hidden.md").write_text("# Hidden\n\nsecret draft\n")
    (runbooks / "broken.md").write_bytes(b"# Broken\n\n\xff\xfe not utf-8 \x00")
    kb = KnowledgeIndex(":memory:")

    report = kb.sync_directory(runbooks)

    assert (report.added, report.skipped) == (3, 1)
    assert index_sources(kb, "secret draft") == []


def test_sync_keeps_uploads_and_rejects_a_missing_folder(runbooks: Path, tmp_path: Path) -> None:
    kb = KnowledgeIndex(":memory:")
    kb.add_document("notes.md", "# Notes\n\nThe quarterly failover drill is on Friday.\n")
    (runbooks / "cache.md").unlink()

    kb.sync_directory(runbooks)

    assert index_sources(kb, "failover drill") == ["upload/notes.md"]
    with pytest.raises(NotADirectoryError):
        kb.sync_directory(tmp_path / "missing")


def test_a_damaged_index_file_is_rebuilt(tmp_path: Path, runbooks: Path) -> None:
    db = tmp_path / "knowledge.db"
    db.write_bytes(b"this is not a sqlite database" * 100)

    kb = KnowledgeIndex(db)

    assert kb.sync_directory(runbooks).added == 3


# --- uploads ----------------------------------------------------------------------------------


def test_upload_is_indexed_and_summarised() -> None:
    kb = KnowledgeIndex(":memory:")
    text = "# Kafka consumer lag\n\nConsumers fall behind when a partition rebalances.\n"

    summary = kb.add_document("kafka.md", text)

    assert summary == {
        "doc_id": "upload/kafka.md",
        "title": "Kafka consumer lag",
        "source": "upload/kafka.md",
        "chunks": 1,
        "bytes": len(text.encode("utf-8")),
    }
    assert kb.search("consumer lag rebalance")[0]["doc_id"] == "upload/kafka.md#0"
    (listed,) = kb.documents()
    assert listed["origin"] == "upload" and listed["uploaded_at"]
    assert {**summary, "origin": "upload", "uploaded_at": listed["uploaded_at"]} == listed


def test_uploading_the_same_name_replaces_the_document() -> None:
    kb = KnowledgeIndex(":memory:")
    kb.add_document("notes.txt", "The old text mentions zookeeper.")

    summary = kb.add_document("dir/notes.txt", b"The new text mentions kraft mode.")

    assert summary["doc_id"] == "upload/notes.txt"
    assert summary["title"] == "notes.txt"
    assert kb.search("zookeeper") == []
    assert kb.search("kraft")[0]["doc_id"] == "upload/notes.txt#0"
    assert stats(kb) == {
        "documents": 1,
        "directory_documents": 0,
        "uploaded_documents": 1,
        "chunks": 1,
    }


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("notes.pdf", "text", "unsupported file type ('.pdf')"),
        ("README", "text", "unsupported file type (none)"),
        ("", "text", "file name"),
        ("notes.md", "", "empty"),
        ("notes.md", " \n\t\n", "empty"),
        ("notes.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
        ("notes.md", b"caf\xe9 latin-1", "not valid UTF-8"),
        ("notes.md", "bad \ud800 surrogate", "not valid UTF-8"),
        ("notes.txt", "\x01\x02\x03\x04\x05\x06\x07\x08\x0e\x0f" * 3, "binary"),
    ],
)
def test_bad_uploads_are_rejected_with_a_clear_message(
    name: str, text: str | bytes, message: str
) -> None:
    kb = KnowledgeIndex(":memory:")

    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        kb.add_document(name, text)

    assert stats(kb)["documents"] == 0


# --- threads ----------------------------------------------------------------------------------


def test_threads_can_search_sync_and_upload_concurrently(tmp_path: Path, runbooks: Path) -> None:
    kb = KnowledgeIndex(tmp_path / "knowledge.db")
    kb.sync_directory(runbooks)
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def searcher() -> None:
        start.wait()
        for _ in range(200):
            results = kb.search("connection pool exhausted")
            assert results and results[0]["source"] == "runbooks/db-pool.md"

    def syncer(n: int) -> None:
        start.wait()
        for i in range(20):
            (runbooks / f"extra-{n}.md").write_text(f"# Extra {n}\n\nrevision {i} of a note\n")
            kb.sync_directory(runbooks)
            kb.add_document(f"up-{n}.md", f"# Upload {n}\n\nrevision {i}\n")

    def guard(target: Callable[..., None], *args: object) -> threading.Thread:
        def run() -> None:
            try:
                target(*args)
            except BaseException as exc:  # surfaced by the assertion below
                errors.append(exc)

        return threading.Thread(target=run)

    threads = [guard(searcher) for _ in range(5)] + [guard(syncer, n) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert errors == []
    assert stats(kb)["documents"] == 3 + 3 + 3


# --- helpers ----------------------------------------------------------------------------------


def index_sources(kb: KnowledgeIndex, query: str) -> list[str]:
    return sorted({result["source"] for result in kb.search(query, top_k=10)})
