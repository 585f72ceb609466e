"""Knowledge base on SQLite FTS5 with bm25 ranking (SPEC section 5, ``lookup_knowledge``).

Documents are chunked by Markdown heading (``#`` to ``###``); each chunk is titled with its
heading path (``Database connection pool exhaustion > Diagnosis``). Text without headings is
split on blank-line paragraphs. Chunks are at most about ``MAX_CHUNK_CHARS`` characters.

The index file is a derived cache, separate from the application database: it is rebuilt when
its schema version is unknown or when SQLite reports it corrupt; uploads live only here, so a
known older schema is migrated in place instead.

How it scales (10,000 runbooks, ~67,000 chunks: ``make bench-knowledge``):

* Writes. ``sync_directory`` compares each file's SHA-256 with the stored one and re-chunks
  only changed files; an unchanged folder writes nothing (not even a transaction). Changed
  documents are chunked outside any lock and written in bounded batches (``BATCH_CHUNKS``
  chunks per ``BEGIN IMMEDIATE`` transaction, ``executemany`` per statement): few commits, and
  an upload waits for one batch at most, not for the whole sync. While a helper thread writes
  one batch (SQLite releases the GIL), the next is chunked. A document is always written whole
  in one batch, so a reader sees either its old or its new chunks, never a mix.
* Lookups by source go through ``chunk_rows`` (chunk rowid -> source, indexed by source).
  FTS5 cannot index an ``UNINDEXED`` column, and ``DELETE FROM chunks WHERE source = ?`` was a
  scan of every chunk per document: the initial sync was quadratic (195 s at 10k documents).
  Chunk rowids are assigned by the writer (``MAX + 1`` inside its transaction).
* Ranking stays FTS5 ``bm25`` with the same column weights and the same order (score, then
  chunk id); only the work changes. A query's common terms match most chunks, and FTS5 scores
  every match: MaxScore pruning (:mod:`.bm25_pruning`) first ranks the chunks holding the
  rarer terms, and when the common terms' score bounds add up to less than that k-th score,
  the chunks holding only common terms are never scored; otherwise every match is. (A pruned
  score sums the same terms in another order, so it may differ in the last bit of a double;
  results carry scores to 3 decimals.) Term counts
  for the bounds are remembered and stay valid bounds across writes (:mod:`.term_counts`). Rows come
  from FTS5's own ``rank`` (``ORDER BY rank LIMIT``): FTS5 then sorts (rowid, score) pairs
  and reads the text of the chunks returned only; ``TIE_MARGIN`` extra rows let ties be
  ordered by chunk id here, and when equal scores run past them the exact
  ``ORDER BY score, doc_id`` query answers instead.
* Searches score from postings kept in memory (:mod:`.term_scores`): every term's chunks and
  column-weighted counts and every chunk's length, maintained by each write at the cost of
  its chunks, with FTS5's bm25 formula evaluated in numpy in FTS5's operation order - the
  same doubles - so no search scores through FTS5 once they are read, after a write neither;
  only the ``top_k`` chunks returned are read from the table. Why (a profile at 10k
  documents): a 9-term question matches ~40,000 chunks, which FTS5 scores at ~1.5 us each
  (position lists, a ``docsize`` lookup, the sorter), and the MaxScore bounds rarely cut
  there (a common term's largest part is within ~8% of its bound, and the k-th score is
  below the sum of a few common terms' parts); numpy costs nanoseconds a pair. The postings
  are saved next to the index file on close (``SAVED_POSTINGS``) for the next start; while
  they are being read (nothing saved) a search reads its own terms' pairs from FTS5's
  vocabulary and scores them the same way. The pruned FTS5 queries above answer only a query
  with a word that is not one token, and a search of a snapshot older than this process's
  last write.
* Concurrency. File-backed indexes are in WAL mode: readers do not block the writer nor each
  other. Searches take a connection from a small pool of read connections (``MAX_IDLE_READERS``
  kept open; more are opened under load) and run in one read transaction (one snapshot per
  search); only writes are serialised, by a lock around the one write connection. A pool rather
  than one connection per thread: request threads come and go and their connections would leak.
  ``":memory:"`` (tests, benchmarks) has no file to share, so there one connection serves both,
  under the write lock.
* Locks are waited for. Every connection has a busy timeout (``busy_timeout``, 30 s by default)
  and opening retries "database is locked/busy" until it runs out, then raises
  ``sqlite3.OperationalError``: a locked file is never deleted. Only SQLite's own corruption
  codes (``SQLITE_CORRUPT`` "malformed", ``SQLITE_NOTADB`` "not a database") make the index
  discard and rebuild its file. There is no ``PRAGMA quick_check`` on every start: it reads the
  whole file (seconds at 10k documents) and SQLite reports damaged pages when they are read.
"""

from __future__ import annotations

import hashlib
import logging
import queue
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypedDict

from .bm25_pruning import Plan, phrase_query
from .chunking import MAX_CHUNK_CHARS, chunk_document, chunk_with_title, split_paragraphs
from .documents import (
    MAX_DOCUMENT_BYTES,
    SUFFIXES,
    DocumentNotFound,
    ReadOnlyDocument,
    clean_name,
    validate_text,
)
from .term_counts import TermCounts
from .term_scores import TermScores, Write

__all__ = [
    "MAX_CHUNK_CHARS",
    "MAX_DOCUMENT_BYTES",
    "DocumentNotFound",
    "KnowledgeIndex",
    "ReadOnlyDocument",
    "chunk_document",
    "split_paragraphs",
]

logger = logging.getLogger(__name__)

SCHEMA_VERSION = "5"  # bump when the tables or the chunking change (see _migrate)
DIRECTORY, UPLOAD = "directory", "upload"  # a document's origin: the folder, or an upload
BUSY_TIMEOUT_SECONDS = 30.0  # how long a locked index file is waited for before giving up
BUSY_RETRY_SECONDS = 0.05  # pause between attempts to open a locked file
#: Chunks written per transaction by a sync: one batch of ~5,000 chunks (~650 documents of
#: the benchmark corpus) commits in well under a second, so an upload waits that long at most;
#: larger batches gain little (the FTS5 inserts, not the commits, dominate).
BATCH_CHUNKS = 5000
#: FTS5 merges this many index segments of one level at a time (its default: 4). Fewer,
#: larger merges: a 10k-document sync spends ~40% less time in the inserts, and searches read
#: no more pages (measured with ``make bench-knowledge``); scores do not depend on it.
AUTOMERGE = 16
#: Page cache of the write connection (KiB): FTS5's merges re-read the segments just written.
WRITE_CACHE_KIB = 65536
#: Extra rows a search fetches so that ties at the cut can be ordered by chunk id in Python.
TIE_MARGIN = 8
#: First passes a search tries over its rarer terms before it scores every match (bm25_pruning).
MAX_PROBES = 3
#: Bytes of the index file a read connection maps into memory: pages are then read in place,
#: not copied into each connection's page cache - which SQLite empties whenever another
#: connection writes, so that every search after an upload would re-read its pages.
READ_MMAP_BYTES = 1 << 30
#: Read connections kept open for reuse; a burst beyond this opens (and then closes) more.
MAX_IDLE_READERS = 8
#: Next to the index file: its postings (term_scores.py), saved for the next start.
SAVED_POSTINGS = "-postings.npz"
MAX_TOP_K = 50
MAX_QUERY_TOKENS = 32
TITLE_WEIGHT, CONTENT_WEIGHT, CJK_WEIGHT = 5.0, 1.0, 1.0

_WORD = re.compile(r"[^\W_]+")  # the same token characters as FTS5's unicode61 tokenizer
_STOPWORD_TEXT = (
    "a an and are as at be been but by can do does for from has have how i if in into is it its "
    "me my of on or our so than that the their then there these this to was we were what when "
    "where which who why will with you your"
)
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
# Chinese text has no spaces, so unicode61 would make a whole sentence one token. Every chunk
# also gets a hidden ``cjk`` column holding the overlapping character bigrams of its CJK runs
# ("缓存命中率" -> "缓存 存命 命中 中率"), the classic CJK indexing of Lucene's CJKAnalyzer;
# a query's CJK runs become the same bigrams. Bigrams with a function character (的, 了, 吗 ...)
# are dropped from queries: they match everything. The English columns keep porter stemming,
# which a trigram tokenizer would lose (and trigrams cannot match two-character words).
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_CJK_FUNCTION_CHARS = frozenset("的了吗呢吧么是在和与及或也都就")

#: The chunks table's columns (FTS5 arguments) and their bm25 weights; the texts of a chunk.
_FTS5 = (
    "title, content, doc_id UNINDEXED, source UNINDEXED, cjk, "
    "tokenize = 'porter unicode61 remove_diacritics 2'"
)
_WEIGHTS = {
    "title": TITLE_WEIGHT,
    "content": CONTENT_WEIGHT,
    "doc_id": 0.0,
    "source": 0.0,
    "cjk": CJK_WEIGHT,
}
_TEXTS = ("title", "content", "cjk")
_RANK = f"bm25({TITLE_WEIGHT}, {CONTENT_WEIGHT}, 0.0, 0.0, {CJK_WEIGHT})"
_CHUNK_ROWS = """
CREATE TABLE chunk_rows (chunk INTEGER PRIMARY KEY, source TEXT NOT NULL);
CREATE INDEX chunk_rows_source ON chunk_rows (source);
CREATE INDEX IF NOT EXISTS documents_origin ON documents (origin);
"""
_MERGES = f"INSERT INTO chunks (chunks, rank) VALUES ('automerge', {AUTOMERGE});"
_SCHEMA = f"""
DROP TABLE IF EXISTS documents; DROP TABLE IF EXISTS chunks; DROP TABLE IF EXISTS chunk_rows;
CREATE TABLE documents (
    source TEXT PRIMARY KEY, origin TEXT NOT NULL, title TEXT NOT NULL,
    hash TEXT NOT NULL, bytes INTEGER NOT NULL, chunks INTEGER NOT NULL, uploaded_at TEXT
);
CREATE VIRTUAL TABLE chunks USING fts5({_FTS5});
{_CHUNK_ROWS}
{_MERGES}
"""
#: Schema versions migrated in place (uploads survive); any other version is rebuilt.
_MIGRATIONS = {
    "2": f"{_CHUNK_ROWS} INSERT INTO chunk_rows (chunk, source) SELECT rowid, source FROM chunks;"
    f"{_MERGES}",
    "3": _MERGES,
    "4": "",  # version 5 adds meta's nonce (see _migrate)
}
_SCORE = f"bm25(chunks, {TITLE_WEIGHT}, {CONTENT_WEIGHT}, 0.0, 0.0, {CJK_WEIGHT})"
_PROBE = "SELECT rank FROM chunks WHERE chunks MATCH ? AND rank MATCH ? ORDER BY rank LIMIT ?"
_MATCH = "chunks MATCH ?"
_MATCH_EXCEPT = f"{_MATCH} AND rowid NOT IN (SELECT rowid FROM chunks WHERE chunks MATCH ?)"
# FTS5 sorts (rowid, rank) pairs and reads only the chunks returned; the exact form carries
# every match through SQLite's sorter but orders ties by chunk id itself.
_TOP = (
    "SELECT doc_id, title, source, content, rank FROM chunks WHERE {} AND rank MATCH ? "
    "ORDER BY rank LIMIT ?"
)
_TOP_EXACT = (
    f"SELECT doc_id, title, source, content, {_SCORE} AS score FROM chunks WHERE {{}} "
    "ORDER BY score, doc_id LIMIT ?"
)
_BY_ROWID = "SELECT rowid, doc_id, title, source, content FROM chunks WHERE rowid IN ({})"
_GENERATION = "SELECT value FROM meta WHERE key = 'generation'"
_NEXT_GENERATION = "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'"
_LAST_CHUNK = (
    "SELECT MAX(COALESCE((SELECT MAX(chunk) FROM chunk_rows), 0), "
    "COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'last_chunk'), 0))"
)
_CORRUPT = frozenset({11, 26})  # SQLITE_CORRUPT ("malformed"), SQLITE_NOTADB
_BUSY = frozenset({5, 6})  # SQLITE_BUSY, SQLITE_LOCKED ("database is locked")


class DocumentSummary(TypedDict):
    """One indexed document: ``doc_id`` prefixes its chunk ids (``<doc_id>#<n>``)."""

    doc_id: str
    title: str
    source: str
    chunks: int
    bytes: int


@dataclass(frozen=True)
class SyncReport:
    """What ``sync_directory`` did, in files."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: int = 0  # unreadable, binary, not UTF-8 or too large; logged

    @property
    def changed(self) -> bool:
        """True when the index was modified."""
        return bool(self.added or self.updated or self.removed)

    def as_dict(self) -> dict[str, int]:
        """The counts as a plain dict."""
        return asdict(self)


def cjk_bigrams(text: str) -> list[str]:
    """Overlapping character bigrams of the CJK runs in ``text`` (a lone character: itself)."""
    grams: list[str] = []
    for run in _CJK_RUN.findall(text):
        grams += [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
    return grams


def build_match_query(query: object) -> str:
    """Turn free text into a safe FTS5 query: quoted word tokens joined with OR ('' if none)."""
    # Tokens hold only letters and digits, so quoting them neutralises AND/OR/NOT/NEAR too.
    return phrase_query(match_terms(query))


def match_terms(query: object) -> list[str]:
    """The search terms of free text: CJK bigrams, then words, without stopwords or repeats."""
    if not isinstance(query, str):
        return []
    tokens: list[str] = []
    for gram in cjk_bigrams(query[:4000]):
        if not set(gram) & _CJK_FUNCTION_CHARS and gram not in tokens:
            tokens.append(gram)
    for raw in _WORD.findall(_CJK_RUN.sub(" ", query[:4000].lower())):
        if len(raw) > 64 or (len(raw) == 1 and raw.isascii() and not raw.isdigit()):
            continue
        if raw not in _STOPWORDS and raw not in tokens:
            tokens.append(raw)
    return tokens[:MAX_QUERY_TOKENS]


class KnowledgeIndex:
    """Runbooks and uploaded notes, chunked by heading and ranked with bm25."""

    def __init__(self, db_path: str | Path, busy_timeout: float = BUSY_TIMEOUT_SECONDS) -> None:
        self._path = str(db_path)
        self._memory = self._path == ":memory:"
        self._busy_timeout = busy_timeout
        self._lock = threading.RLock()  # the write connection (and, in memory, every read)
        self._idle: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._closed = False
        self._counts = TermCounts()  # chunks per query term, for the pruning bounds
        self._writer = self._open_writer()
        # Every term's chunks and counts, to score with FTS5's bm25 in numpy (term_scores.py).
        self._scores = TermScores(
            "chunks",
            _FTS5,
            _WEIGHTS,
            _TEXTS,
            None if self._memory else self._loader,
            None if self._memory else Path(self._path + SAVED_POSTINGS),
            sorted(_STOPWORDS),
        )
        self._scores.refresh()
        self._changes = Write()  # what the write transaction under way changed

    # --- connections ----------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(
            self._path,
            timeout=self._busy_timeout,
            check_same_thread=False,
            isolation_level=None,
        )

    def _loader(self) -> sqlite3.Connection:
        """A connection for reading every posting (term_scores.py: a temp vocabulary table)."""
        conn = self._connect()
        conn.execute(f"PRAGMA mmap_size = {READ_MMAP_BYTES}")
        return conn

    def _open_writer(self) -> sqlite3.Connection:
        """The write connection with the schema ready; waits out locks, rebuilds corrupt files."""
        if not self._memory:
            Path(self._path).parent.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + self._busy_timeout
        while True:
            try:
                return self._open_once()
            except sqlite3.DatabaseError as exc:
                if _is_busy(exc) and time.monotonic() < deadline:
                    time.sleep(BUSY_RETRY_SECONDS)
                    continue
                if self._memory or not _is_corrupt(exc):
                    raise
                # A derived cache: a corrupt file is discarded and rebuilt from its sources.
                logger.warning("knowledge index %s is corrupt (%s); rebuilding it", self._path, exc)
                for suffix in ("", "-wal", "-shm", "-journal", SAVED_POSTINGS):
                    Path(self._path + suffix).unlink(missing_ok=True)

    def _open_once(self) -> sqlite3.Connection:
        conn = self._connect()
        try:
            if not self._memory:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")  # WAL: durable at checkpoints
            conn.execute(f"PRAGMA cache_size = -{WRITE_CACHE_KIB}")
            if not _schema_current(conn):
                conn.execute("BEGIN IMMEDIATE")
                try:
                    _migrate(conn)
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
        except BaseException:
            conn.close()
            raise
        return conn

    def close(self) -> None:
        """Close the write connection and the idle read connections."""
        self._scores.close()
        with self._lock:
            self._closed = True
            self._writer.close()
            while True:
                try:
                    self._idle.get_nowait().close()
                except queue.Empty:
                    break

    @contextmanager
    def _write(self, bulk: bool = False) -> Iterator[sqlite3.Connection]:
        """The write connection in a transaction; ``bulk``: one batch of a sync."""
        with self._lock:
            self._writer.execute("BEGIN IMMEDIATE")
            self._changes = Write(bulk=bulk)
            applied = False
            try:
                yield self._writer
                self._writer.execute(_NEXT_GENERATION)
                (generation,) = self._writer.execute(_GENERATION).fetchone()
                # Applied before the commit: a search of the old snapshot meanwhile finds the
                # postings newer than it and uses FTS5's queries, never the new postings.
                delta = self._scores.delta(self._writer, int(generation), self._changes)
                applied = True
                self._scores.apply(delta)
                self._writer.execute("COMMIT")
            except BaseException:
                if applied:  # the commit failed: the postings are of a write that never was
                    self._scores.drop()
                if self._writer.in_transaction:
                    self._writer.execute("ROLLBACK")
                raise

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A connection inside a read transaction: every statement sees one snapshot."""
        if self._memory:
            with self._lock:
                yield self._writer
            return
        try:
            conn = self._idle.get_nowait()
        except queue.Empty:
            conn = self._connect()
            self._scores.prepare(conn)  # (temporary tables: before it is made query-only)
            conn.execute("PRAGMA query_only = ON")
            conn.execute(f"PRAGMA mmap_size = {READ_MMAP_BYTES}")
        try:
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                conn.execute("COMMIT")
        except BaseException:
            conn.close()
            raise
        if self._closed or self._idle.qsize() >= MAX_IDLE_READERS:
            conn.close()
        else:
            self._idle.put(conn)

    # --- writes ---------------------------------------------------------------------------

    def _store(self, conn: sqlite3.Connection, docs: list[_Prepared]) -> None:
        """Replace the chunks and row of every document; the caller holds a write transaction."""
        _delete_chunks(conn, [doc.source for doc in docs], self._changes)
        # Chunk ids are never reused (term_scores.py filters deleted ones out lazily).
        (last,) = conn.execute(_LAST_CHUNK).fetchone()
        chunks: list[tuple[int, str, str, str, str, str]] = []
        owners: list[tuple[int, str]] = []
        for doc in docs:
            for row in doc.rows:
                last += 1
                chunks.append((last, *row))
                owners.append((last, doc.source))
                self._changes.added.append((last, (row[2], row[3], row[4])))
        conn.executemany(
            "INSERT INTO chunks (rowid, doc_id, source, title, content, cjk) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            chunks,
        )
        conn.executemany("INSERT INTO chunk_rows (chunk, source) VALUES (?, ?)", owners)
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('last_chunk', ?)", (last,))
        _add_to_meta(conn, "chunks", len(owners))
        conn.executemany(
            "INSERT OR REPLACE INTO documents (source, origin, title, hash, bytes, chunks, "
            "uploaded_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    doc.source,
                    doc.origin,
                    doc.summary["title"],
                    doc.digest,
                    doc.summary["bytes"],
                    doc.summary["chunks"],
                    _now() if doc.origin == UPLOAD else None,
                )
                for doc in docs
            ],
        )

    def _store_batched(self, docs: Iterable[_Prepared]) -> None:
        """Write ``docs`` in transactions of about ``BATCH_CHUNKS`` chunks each.

        A pipeline of two: while one batch is written on a helper thread (SQLite releases the
        GIL while it works), the next is chunked here; at most one batch waits in memory.
        """
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="knowledge-sync") as pool:
            pending: Future[None] | None = None
            for batch in _batches(docs):
                if pending is not None:
                    pending.result()
                pending = pool.submit(self._write_batch, batch)
            if pending is not None:
                pending.result()

    def _write_batch(self, docs: list[_Prepared]) -> None:
        with self._write(bulk=True) as conn:
            self._store(conn, docs)

    def sync_directory(self, path: Path) -> SyncReport:
        """Index every .md/.txt under ``path``; only changed files are re-chunked and written.

        Source ids are ``<folder name>/<relative path>`` (``runbooks/db/pool.md``). The folder
        owns every non-upload document: a file no longer in it is removed, uploads are kept.
        Hidden files and folders are ignored. Raises NotADirectoryError for a missing folder.
        """
        root = Path(path)
        if not root.is_dir():
            raise NotADirectoryError(f"knowledge folder not found: {root}")
        prefix = root.resolve().name or "knowledge"
        found: dict[str, tuple[str, str, str, int]] = {}  # source -> (hash, text, name, bytes)
        unreadable: set[str] = set()  # present but unreadable now (mid-write): keep, not remove
        skipped = 0
        for file in sorted(root.rglob("*")):
            rel = file.relative_to(root)
            if file.suffix.lower() not in SUFFIXES or any(p.startswith(".") for p in rel.parts):
                continue
            try:
                if not file.is_file():
                    continue
                data = file.read_bytes()
                text = validate_text(data)
            except (OSError, ValueError) as exc:
                logger.warning("knowledge: skipping %s: %s", file, exc)
                unreadable.add(f"{prefix}/{rel.as_posix()}")
                skipped += 1
                continue
            body = text.encode("utf-8")
            found[f"{prefix}/{rel.as_posix()}"] = (_digest(body), text, file.name, len(body))
        with self._read() as conn:
            existing: dict[str, str] = dict(
                conn.execute("SELECT source, hash FROM documents WHERE origin = ?", (DIRECTORY,))
            )
        changed = {s: v for s, v in found.items() if existing.get(s) != v[0]}
        gone = sorted(set(existing) - set(found) - unreadable)
        # Chunked lazily, batch by batch, outside the write lock: searches are not held up.
        self._store_batched(
            _prepare(s, DIRECTORY, name, text, (digest, size))
            for s, (digest, text, name, size) in changed.items()
        )
        if gone:
            with self._write() as conn:
                _delete_chunks(conn, gone, self._changes)
                conn.executemany(
                    "DELETE FROM documents WHERE source = ?", [(source,) for source in gone]
                )
        if changed or gone:
            self._scores.refresh()  # when a batch too large to apply dropped the postings
        added = sum(source not in existing for source in changed)
        report = SyncReport(
            added=added,
            updated=len(changed) - added,
            removed=len(gone),
            unchanged=len(found) - len(changed),
            skipped=skipped,
        )
        logger.info("knowledge: synced %s: %s", root, report.as_dict())
        return report

    def add_document(self, name: str, text: str | bytes, source: str = "upload") -> DocumentSummary:
        """Index an uploaded .md/.txt as ``<source>/<file name>``, replacing one of that name.

        Raises ValueError (message fit for the user) for a bad name, extension or content.
        """
        filename = clean_name(name)
        body = validate_text(text)
        label = source.strip().strip("/") or "upload"
        # The expensive part (chunking) runs before the write lock: a big upload holds the
        # index only for its inserts, and searches (read connections) never wait for it.
        doc = _prepare(f"{label}/{filename}", UPLOAD, filename, body)
        with self._write() as conn:
            self._store(conn, [doc])
        return doc.summary

    def delete_document(self, doc_id: str) -> DocumentSummary:
        """Remove an uploaded document and its chunks; return what was removed.

        Raises DocumentNotFound for an unknown id and ReadOnlyDocument for a document of the
        knowledge folder (the folder owns those: change the folder instead).
        """
        with self._write() as conn:
            row = conn.execute(
                "SELECT source, title, chunks, bytes, origin FROM documents WHERE source = ?",
                (doc_id,),
            ).fetchone()
            if row is None:
                raise DocumentNotFound(f"no knowledge document {doc_id!r}")
            source, title, chunks, size, origin = row
            if origin != UPLOAD:
                raise ReadOnlyDocument(
                    f"{doc_id} is a bundled runbook from the knowledge folder and is read-only; "
                    "only uploaded documents can be deleted"
                )
            _delete_chunks(conn, [source], self._changes)
            conn.execute("DELETE FROM documents WHERE source = ?", (source,))
        return DocumentSummary(doc_id=source, title=title, source=source, chunks=chunks, bytes=size)

    # --- reads ----------------------------------------------------------------------------

    def search(self, query: str, top_k: int = 3) -> list[dict[str, Any]]:
        """The ``top_k`` best chunks for free text, best first; [] when nothing matches.

        Each result is ``{"doc_id", "title", "source", "score", "content"}``; ``score`` is
        ``-bm25`` rounded to 3 decimals (higher is better); equal scores are ordered by chunk
        id. A chunk of an uploaded document also carries ``origin``: ``{"kind": "upload",
        "file_name", "uploaded_at"}``, so wherever it is cited the answer can say it came from
        an upload, not from the runbooks. Never raises on user text.
        """
        terms = match_terms(query)
        if not terms:
            return []
        try:
            limit = min(max(int(top_k), 1), MAX_TOP_K)
        except (TypeError, ValueError):
            limit = 3
        match = phrase_query(terms)
        try:
            with self._read() as conn:
                rows = self._summed(conn, terms, limit)
                if rows is None:
                    rows = self._pruned(conn, terms, limit)
                if rows is None:
                    rows = _top(conn, limit, match)
                uploads = _uploads(conn, {row[2] for row in rows})
        except sqlite3.Error as exc:
            log = logger.error if _is_corrupt(exc) else logger.warning
            log("knowledge search failed for %r: %s", match, exc)
            return []
        found = []
        for doc_id, title, source, content, rank in rows:
            item: dict[str, Any] = {
                "doc_id": doc_id,
                "title": title,
                "source": source,
                "score": max(round(-rank, 3), 0.001),
                "content": content,
            }
            if source in uploads:
                item["origin"] = uploads[source]
            found.append(item)
        return found

    def _summed(self, conn: sqlite3.Connection, terms: list[str], limit: int) -> list[Any] | None:
        """The top ``limit`` rows scored from the postings kept (:mod:`.term_scores`).

        None when they cannot answer (a word that is not one token, a snapshot older than this
        process's last write) and when equal scores run past ``TIE_MARGIN`` (the exact query
        orders them).
        """
        row = conn.execute(_GENERATION).fetchone()
        if row is None:
            return None
        best = self._scores.top(conn, int(row[0]), terms, limit + TIE_MARGIN)
        if best is None or (len(best) == limit + TIE_MARGIN and best[limit - 1][1] == best[-1][1]):
            return None
        if not best:
            return []
        score = dict(best)
        found = [
            (doc_id, title, source, content, score[rowid])
            for rowid, doc_id, title, source, content in conn.execute(
                _BY_ROWID.format(",".join("?" * len(score))), list(score)
            )
        ]
        return sorted(found, key=lambda item: (item[4], item[0]))[:limit]

    def _pruned(self, conn: sqlite3.Connection, terms: list[str], limit: int) -> list[Any] | None:
        """The top ``limit`` rows scoring only chunks with a rarer term; None when no pruning.

        A probe ranks the chunks holding an essential term by those terms alone; its k-th
        score bounds the final k-th score from below, and the common terms are left out when
        their bounds add up to less (:mod:`.bm25_pruning`).
        """
        if len(terms) < 2:
            return None
        counts = self._counts.counts(conn, terms)
        plan = Plan.of(counts.hits, counts.rows, counts.exact)
        for _ in range(MAX_PROBES):
            if not plan.useful:
                return None
            probe = conn.execute(_PROBE, (phrase_query(plan.essential), _RANK, limit)).fetchall()
            if len(probe) < limit:
                plan.promote()  # too few chunks to bound the k-th score: widen the first pass
                continue
            if not plan.fit(-probe[-1][0]):
                return None
            # Chunks with essential and common terms, scored over all terms; then chunks with
            # essential terms only, whose score over those is their full score (a common term
            # absent adds 0) - bm25 over the essential terms alone spares FTS5 from counting
            # the common terms' chunks a second time.
            both, alone = plan.queries()
            found = _top(conn, limit, both) + _top(conn, limit, alone, both)
            return sorted(found, key=lambda row: (row[4], row[0]))[:limit]
        return None

    def wait_until_loaded(self, timeout: float | None = None) -> bool:
        """Wait for the postings being read (after a start or a large sync); True when kept.

        Searches never need this: until then each reads its own terms from the index.
        """
        return self._scores.wait(timeout)

    def stats(self) -> dict[str, int]:
        """Counts of documents (all, from the folder, uploaded) and of chunks."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT COUNT(*), TOTAL(origin = 'directory'), TOTAL(origin = 'upload'), "
                "TOTAL(chunks) FROM documents"
            ).fetchone()
        keys = ("documents", "directory_documents", "uploaded_documents", "chunks")
        return {key: int(value) for key, value in zip(keys, row, strict=True)}

    def list_documents(self) -> list[DocumentSummary]:
        """Every indexed document, ordered by id."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT source, title, chunks, bytes FROM documents ORDER BY source"
            ).fetchall()
        return [
            DocumentSummary(doc_id=source, title=title, source=source, chunks=n, bytes=size)
            for source, title, n, size in rows
        ]

    def documents(self) -> list[DocumentInfo]:
        """Every indexed document with its origin and upload time, uploads first, newest first."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT source, title, chunks, bytes, origin, uploaded_at FROM documents "
                "ORDER BY origin = 'upload' DESC, uploaded_at DESC, source"
            ).fetchall()
        return [
            DocumentInfo(
                doc_id=source,
                title=title,
                source=source,
                chunks=n,
                bytes=size,
                origin=origin,
                uploaded_at=uploaded_at,
            )
            for source, title, n, size, origin, uploaded_at in rows
        ]


class DocumentInfo(DocumentSummary):
    """A document as listed: its summary, where it came from and when it was uploaded."""

    origin: str
    uploaded_at: str | None


#: Columns added after schema version 1, added in place (uploads live only in the index, so
#: a rebuild would lose them).
_LATER_COLUMNS = {"uploaded_at": "TEXT"}


def _schema_current(conn: sqlite3.Connection) -> bool:
    """True when the file holds this schema version (a read: no write lock is taken)."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return False
        raise
    return row is not None and row[0] == SCHEMA_VERSION


def _migrate(conn: sqlite3.Connection) -> None:
    """Bring the schema to ``SCHEMA_VERSION``; the caller holds a write transaction.

    A known older version is migrated in place, keeping the uploads; anything else (a new
    file, an unknown version) gets fresh tables, to be filled by the next sync.
    """
    conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    version = None if row is None else row[0]
    if version == SCHEMA_VERSION:
        return  # another process migrated it while this one waited for the lock
    script = _MIGRATIONS.get(version or "", _SCHEMA)
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)
    present = {row[1] for row in conn.execute("PRAGMA table_info(documents)")}
    for name, kind in _LATER_COLUMNS.items():
        if name not in present:
            conn.execute(f"ALTER TABLE documents ADD COLUMN {name} {kind}")
    conn.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", (SCHEMA_VERSION,)
    )
    # Running totals for the term counts (term_counts.py); see _NEXT_GENERATION, _add_to_meta.
    (chunks,) = conn.execute("SELECT COUNT(*) FROM chunk_rows").fetchone()
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('chunks', ?)", (chunks,))
    for key in ("generation", "deleted"):
        conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, '0')", (key,))
    # This file's identity: postings saved for another file (rebuilt, replaced) are not its.
    conn.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES ('nonce', ?)", (secrets.token_hex(16),)
    )


def _delete_chunks(conn: sqlite3.Connection, sources: list[str], changes: Write) -> None:
    """Delete the chunks of ``sources``, noted in ``changes`` and in the totals of ``meta``."""
    params = [(source,) for source in sources]
    for source in params:
        changes.deleted += [
            chunk
            for (chunk,) in conn.execute("SELECT chunk FROM chunk_rows WHERE source = ?", source)
        ]
    conn.executemany(
        "DELETE FROM chunks WHERE rowid IN (SELECT chunk FROM chunk_rows WHERE source = ?)",
        params,
    )
    removed = conn.executemany("DELETE FROM chunk_rows WHERE source = ?", params).rowcount
    if removed > 0:
        _add_to_meta(conn, "deleted", removed)
        _add_to_meta(conn, "chunks", -removed)


def _add_to_meta(conn: sqlite3.Connection, key: str, amount: int) -> None:
    """Add to one of the running totals of ``meta`` (``chunks``, ``deleted``)."""
    conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key = ?", (amount, key))


def _top(conn: sqlite3.Connection, limit: int, match: str, *exclude: str) -> list[Any]:
    """The ``limit`` best chunks for ``match`` (minus those of ``exclude``), ties by chunk id.

    FTS5's ``ORDER BY rank`` orders equal scores its own way, so ``TIE_MARGIN`` more rows are
    fetched and sorted here; should the tie run past them, the exact form answers instead.
    """
    where = _MATCH_EXCEPT if exclude else _MATCH
    rows = conn.execute(_TOP.format(where), (match, *exclude, _RANK, limit + TIE_MARGIN)).fetchall()
    if len(rows) == limit + TIE_MARGIN and rows[limit - 1][4] == rows[-1][4]:
        rows = conn.execute(_TOP_EXACT.format(where), (match, *exclude, limit)).fetchall()
    return sorted(rows, key=lambda row: (row[4], row[0]))[:limit]


def _uploads(conn: sqlite3.Connection, sources: set[str]) -> dict[str, dict[str, Any]]:
    """The origin of each uploaded document among ``sources``."""
    if not sources:
        return {}
    marks = ",".join("?" * len(sources))
    rows = conn.execute(
        f"SELECT source, uploaded_at FROM documents WHERE origin = ? AND source IN ({marks})",
        [UPLOAD, *sorted(sources)],
    ).fetchall()
    return {
        source: {"kind": "upload", "file_name": source.rsplit("/", 1)[-1], "uploaded_at": at}
        for source, at in rows
    }


def _error_code(exc: sqlite3.Error) -> int:
    """SQLite's primary result code of ``exc`` (-1 when it carries none)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else -1


def _is_corrupt(exc: sqlite3.Error) -> bool:
    """SQLite itself says the file is damaged or not a database: never for a locked file."""
    return _error_code(exc) in _CORRUPT


def _is_busy(exc: sqlite3.Error) -> bool:
    """Another connection holds a lock the operation needs: to be waited for."""
    return _error_code(exc) in _BUSY


@dataclass(frozen=True)
class _Prepared:
    """A document chunked and summarised, ready to be written."""

    source: str
    origin: str
    digest: str
    rows: list[tuple[str, str, str, str, str]]  # (doc_id, source, title, content, cjk) per chunk
    summary: DocumentSummary


def _prepare(
    source: str, origin: str, filename: str, text: str, known: tuple[str, int] | None = None
) -> _Prepared:
    """``text`` chunked; ``known``: its SHA-256 and UTF-8 size when the caller has them."""
    title, chunks = chunk_with_title(text, filename)
    if known is None:
        data = text.encode("utf-8")
        known = (_digest(data), len(data))
    digest, size = known
    cjk = not text.isascii()  # an ASCII document (most runbooks) has no CJK run to look for
    rows = [
        (
            f"{source}#{n}",
            source,
            name,
            body,
            " ".join(cjk_bigrams(f"{name}\n{body}")) if cjk else "",
        )
        for n, (name, body) in enumerate(chunks)
    ]
    summary = DocumentSummary(
        doc_id=source, title=title, source=source, chunks=len(chunks), bytes=size
    )
    return _Prepared(source, origin, digest, rows, summary)


def _batches(docs: Iterable[_Prepared]) -> Iterator[list[_Prepared]]:
    """``docs`` in lists of about ``BATCH_CHUNKS`` chunks (a document is never split)."""
    batch: list[_Prepared] = []
    size = 0
    for doc in docs:
        batch.append(doc)
        size += len(doc.rows)
        if size >= BATCH_CHUNKS:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _now() -> str:
    """UTC now as ``2026-11-30T10:00:00.123Z``."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
