"""Knowledge base on SQLite FTS5 with bm25 ranking (SPEC section 5, ``lookup_knowledge``).

Documents are chunked by Markdown heading (``#`` to ``###``); each chunk is titled with its
heading path (``Database connection pool exhaustion > Diagnosis``). Text without headings is
split on blank-line paragraphs. Chunks are at most about ``MAX_CHUNK_CHARS`` characters.

The index file is a derived cache, separate from the application database: it is rebuilt when
its schema version changes or when it cannot be opened, and ``sync_directory`` re-chunks only
the files whose content hash changed.

Thread safety: one connection opened with ``check_same_thread=False`` and guarded by a
``threading.RLock``; every statement runs under the lock. This works for ``":memory:"`` too
(a connection per thread would give each thread its own empty database), and a search takes
well under a millisecond, so serialising is cheaper than it sounds. File-backed indexes use WAL
and a busy timeout so several processes may share one file.
"""

from __future__ import annotations

import hashlib
import logging
import re
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypedDict

from .chunking import MAX_CHUNK_CHARS, chunk_document, chunk_with_title, split_paragraphs
from .documents import (
    MAX_DOCUMENT_BYTES,
    SUFFIXES,
    DocumentNotFound,
    ReadOnlyDocument,
    clean_name,
    validate_text,
)

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

SCHEMA_VERSION = "2"  # bump when the tables or the chunking change: the index is then rebuilt
DIRECTORY, UPLOAD = "directory", "upload"  # a document's origin: the folder, or an upload
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

_SCHEMA = f"""
CREATE TABLE documents (
    source TEXT PRIMARY KEY, origin TEXT NOT NULL, title TEXT NOT NULL,
    hash TEXT NOT NULL, bytes INTEGER NOT NULL, chunks INTEGER NOT NULL, uploaded_at TEXT
);
CREATE VIRTUAL TABLE chunks USING fts5(
    title, content, doc_id UNINDEXED, source UNINDEXED, cjk,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', '{SCHEMA_VERSION}');
"""
_SEARCH = f"""
SELECT doc_id, title, source, content,
       bm25(chunks, {TITLE_WEIGHT}, {CONTENT_WEIGHT}, 0.0, 0.0, {CJK_WEIGHT}) AS rank
FROM chunks WHERE chunks MATCH ? ORDER BY rank, doc_id LIMIT ?
"""


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
    if not isinstance(query, str):
        return ""
    tokens: list[str] = []
    for gram in cjk_bigrams(query[:4000]):
        if not set(gram) & _CJK_FUNCTION_CHARS and gram not in tokens:
            tokens.append(gram)
    for raw in _WORD.findall(_CJK_RUN.sub(" ", query[:4000].lower())):
        if len(raw) > 64 or (len(raw) == 1 and raw.isascii() and not raw.isdigit()):
            continue
        if raw not in _STOPWORDS and raw not in tokens:
            tokens.append(raw)
    # Tokens hold only letters and digits, so quoting them neutralises AND/OR/NOT/NEAR too.
    return " OR ".join(f'"{token}"' for token in tokens[:MAX_QUERY_TOKENS])


class KnowledgeIndex:
    """Runbooks and uploaded notes, chunked by heading and ranked with bm25."""

    def __init__(self, db_path: str | Path) -> None:
        self._path = str(db_path)
        self._lock = threading.RLock()
        try:
            self._conn = self._open()
        except sqlite3.DatabaseError as exc:
            if self._path == ":memory:":
                raise
            # A derived cache: a damaged file is discarded and rebuilt from its sources.
            logger.warning("knowledge index %s unusable (%s); recreating it", self._path, exc)
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(self._path + suffix).unlink(missing_ok=True)
            self._conn = self._open()

    def _open(self) -> sqlite3.Connection:
        if self._path != ":memory:":
            Path(self._path).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            self._path, timeout=30, check_same_thread=False, isolation_level=None
        )
        try:
            if self._path != ":memory:":
                conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row is None or row[0] != SCHEMA_VERSION:
                conn.executescript(
                    "BEGIN; DROP TABLE IF EXISTS documents; DROP TABLE IF EXISTS chunks;"
                    f"{_SCHEMA} COMMIT;"
                )
            _add_missing_columns(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def _store(self, conn: sqlite3.Connection, doc: _Prepared) -> DocumentSummary:
        """Replace every chunk of ``doc.source``; the caller holds a write transaction."""
        conn.execute("DELETE FROM chunks WHERE source = ?", (doc.source,))
        conn.executemany(
            "INSERT INTO chunks (doc_id, source, title, content, cjk) VALUES (?, ?, ?, ?, ?)",
            doc.rows,
        )
        summary = doc.summary
        conn.execute(
            "INSERT OR REPLACE INTO documents (source, origin, title, hash, bytes, chunks, "
            "uploaded_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                doc.source,
                doc.origin,
                summary["title"],
                doc.digest,
                summary["bytes"],
                summary["chunks"],
                _now() if doc.origin == UPLOAD else None,
            ),
        )
        return summary

    def sync_directory(self, path: Path) -> SyncReport:
        """Index every .md/.txt under ``path``; only changed files are re-chunked.

        Source ids are ``<folder name>/<relative path>`` (``runbooks/db/pool.md``). The folder
        owns every non-upload document: a file no longer in it is removed, uploads are kept.
        Hidden files and folders are ignored. Raises NotADirectoryError for a missing folder.
        """
        root = Path(path)
        if not root.is_dir():
            raise NotADirectoryError(f"knowledge folder not found: {root}")
        prefix = root.resolve().name or "knowledge"
        found: dict[str, tuple[str, str, str]] = {}  # source -> (hash, text, file name)
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
            found[f"{prefix}/{rel.as_posix()}"] = (_digest(text.encode("utf-8")), text, file.name)
        counts = {"added": 0, "updated": 0, "removed": 0, "unchanged": 0}
        with self._lock:
            existing = dict(
                self._conn.execute("SELECT source, hash FROM documents WHERE origin = 'directory'")
            )
        changed = {s: v for s, v in found.items() if existing.get(s) != v[0]}
        counts["unchanged"] = len(found) - len(changed)
        # Chunked before the write lock is taken: searches meanwhile are not held up.
        prepared = [_prepare(s, DIRECTORY, name, text) for s, (_, text, name) in changed.items()]
        with self._write() as conn:
            for doc in prepared:
                self._store(conn, doc)
                counts["added" if doc.source not in existing else "updated"] += 1
            for source in set(existing) - set(found) - unreadable:
                conn.execute("DELETE FROM chunks WHERE source = ?", (source,))
                conn.execute("DELETE FROM documents WHERE source = ?", (source,))
                counts["removed"] += 1
        report = SyncReport(skipped=skipped, **counts)
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
        # index only for its inserts, so chats searching meanwhile wait milliseconds at most.
        doc = _prepare(f"{label}/{filename}", UPLOAD, filename, body)
        with self._write() as conn:
            return self._store(conn, doc)

    def search(self, query: str, top_k: int = 3) -> list[dict[str, Any]]:
        """The ``top_k`` best chunks for free text, best first; [] when nothing matches.

        Each result is ``{"doc_id", "title", "source", "score", "content"}``; ``score`` is
        ``-bm25`` rounded to 3 decimals (higher is better). A chunk of an uploaded document also
        carries ``origin``: ``{"kind": "upload", "file_name", "uploaded_at"}``, so wherever it is
        cited the answer can say it came from an upload, not from the runbooks. Never raises on
        user text.
        """
        match = build_match_query(query)
        if not match:
            return []
        try:
            limit = min(max(int(top_k), 1), MAX_TOP_K)
        except (TypeError, ValueError):
            limit = 3
        try:
            with self._lock:
                rows = self._conn.execute(_SEARCH, (match, limit)).fetchall()
                uploads = self._uploads({row[2] for row in rows})
        except sqlite3.Error as exc:
            logger.warning("knowledge search failed for %r: %s", match, exc)
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

    def _uploads(self, sources: set[str]) -> dict[str, dict[str, Any]]:
        """The origin of each uploaded document among ``sources`` (caller holds the lock)."""
        if not sources:
            return {}
        marks = ",".join("?" * len(sources))
        rows = self._conn.execute(
            "SELECT source, uploaded_at FROM documents "
            f"WHERE origin = 'upload' AND source IN ({marks})",
            sorted(sources),
        ).fetchall()
        return {
            source: {"kind": "upload", "file_name": source.rsplit("/", 1)[-1], "uploaded_at": at}
            for source, at in rows
        }

    def stats(self) -> dict[str, int]:
        """Counts of documents (all, from the folder, uploaded) and of chunks."""
        with self._lock:
            row = self._conn.execute(
                "SELECT COUNT(*), TOTAL(origin = 'directory'), TOTAL(origin = 'upload'), "
                "TOTAL(chunks) FROM documents"
            ).fetchone()
        keys = ("documents", "directory_documents", "uploaded_documents", "chunks")
        return {key: int(value) for key, value in zip(keys, row, strict=True)}

    def list_documents(self) -> list[DocumentSummary]:
        """Every indexed document, ordered by id."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT source, title, chunks, bytes FROM documents ORDER BY source"
            ).fetchall()
        return [
            DocumentSummary(doc_id=source, title=title, source=source, chunks=n, bytes=size)
            for source, title, n, size in rows
        ]

    def documents(self) -> list[DocumentInfo]:
        """Every indexed document with its origin and upload time, uploads first, newest first."""
        with self._lock:
            rows = self._conn.execute(
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
            conn.execute("DELETE FROM chunks WHERE source = ?", (source,))
            conn.execute("DELETE FROM documents WHERE source = ?", (source,))
        return DocumentSummary(doc_id=source, title=title, source=source, chunks=chunks, bytes=size)


class DocumentInfo(DocumentSummary):
    """A document as listed: its summary, where it came from and when it was uploaded."""

    origin: str
    uploaded_at: str | None


#: Columns added after schema version 1, added in place (uploads live only in the index, so
#: a rebuild would lose them).
_LATER_COLUMNS = {"uploaded_at": "TEXT"}


def _add_missing_columns(conn: sqlite3.Connection) -> None:
    present = {row[1] for row in conn.execute("PRAGMA table_info(documents)")}
    for name, kind in _LATER_COLUMNS.items():
        if name not in present:
            conn.execute(f"ALTER TABLE documents ADD COLUMN {name} {kind}")


@dataclass(frozen=True)
class _Prepared:
    """A document chunked and summarised, ready to be written."""

    source: str
    origin: str
    digest: str
    rows: list[tuple[str, str, str, str, str]]  # (doc_id, source, title, content, cjk) per chunk
    summary: DocumentSummary


def _prepare(source: str, origin: str, filename: str, text: str) -> _Prepared:
    title, chunks = chunk_with_title(text, filename)
    data = text.encode("utf-8")
    rows = [
        (f"{source}#{n}", source, name, body, " ".join(cjk_bigrams(f"{name}\n{body}")))
        for n, (name, body) in enumerate(chunks)
    ]
    summary = DocumentSummary(
        doc_id=source, title=title, source=source, chunks=len(chunks), bytes=len(data)
    )
    return _Prepared(source, origin, _digest(data), rows, summary)


def _now() -> str:
    """UTC now as ``2026-11-30T10:00:00.123Z``."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
