"""Knowledge base on SQLite FTS5: runbooks and uploaded notes, ranked by FTS5's ``bm25()``.

Documents are chunked by Markdown heading (:mod:`.chunking`), one FTS5 row per chunk; a search
is its quoted terms joined with OR, ranked by bm25 with a title counting five times its body.
The index file is a derived cache: a corrupt file or one of another schema version (SQLite's
``user_version``) is rebuilt from the folder (uploads are lost then). File indexes run in WAL
mode, each search on its own read connection; a sync writes every changed document in one
transaction; a locked file is waited for (SQLite's busy timeout). A document (an upload
or a file of the folder) is a UTF-8 .md or .txt file of at most ``MAX_DOCUMENT_BYTES``.
"""

from __future__ import annotations

import hashlib
import logging
import re
import sqlite3
import threading
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .chunking import chunk_with_title

__all__ = ["DocumentNotFound", "KnowledgeIndex", "ReadOnlyDocument"]

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 5  # bump when the tables or the chunking change: the index is rebuilt
DIRECTORY, UPLOAD = "directory", "upload"  # a document's origin: the folder, or an upload
BUSY_TIMEOUT_SECONDS = 30.0  # how long a locked index file is waited for before giving up
AUTOMERGE = 16  # FTS5 segments merged at a time (default 4): faster large syncs
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
# CJK runs are indexed as overlapping character bigrams in a hidden ``cjk`` column
# ("缓存命中率" -> "缓存 存命 命中 中率"); query bigrams with a function character are dropped.
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_CJK_FUNCTION_CHARS = frozenset("的了吗呢吧么是在和与及或也都就")

# chunk_rows maps a chunk's rowid to its document (FTS5 cannot index an UNINDEXED column).
_SCHEMA = f"""
DROP TABLE IF EXISTS documents; DROP TABLE IF EXISTS chunks; DROP TABLE IF EXISTS chunk_rows;
CREATE TABLE documents (
    source TEXT PRIMARY KEY, origin TEXT NOT NULL, title TEXT NOT NULL,
    hash TEXT NOT NULL, bytes INTEGER NOT NULL, chunks INTEGER NOT NULL, uploaded_at TEXT
);
CREATE VIRTUAL TABLE chunks USING fts5(
    title, content, doc_id UNINDEXED, source UNINDEXED, cjk,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TABLE chunk_rows (chunk INTEGER PRIMARY KEY, source TEXT NOT NULL);
CREATE INDEX chunk_rows_source ON chunk_rows (source);
CREATE INDEX documents_origin ON documents (origin);
INSERT INTO chunks (chunks, rank) VALUES ('automerge', {AUTOMERGE});
PRAGMA user_version = {SCHEMA_VERSION};
"""
# bm25 weighted per column (title, content, doc_id, source, cjk); lower is better; ties keep
# the order the chunks were written in. The best chunks, then whether each is an upload's.
_SEARCH = (
    "SELECT m.doc_id, m.title, m.source, m.content, m.score, d.source IS NOT NULL, d.uploaded_at "
    "FROM (SELECT doc_id, title, source, content, rowid AS r, "
    f"bm25(chunks, {TITLE_WEIGHT}, {CONTENT_WEIGHT}, 0.0, 0.0, {CJK_WEIGHT}) AS score "
    "FROM chunks WHERE chunks MATCH ? ORDER BY score, rowid LIMIT ?) AS m "
    "LEFT JOIN documents AS d ON d.source = m.source AND d.origin = 'upload' "
    "ORDER BY m.score, m.r"
)
_CORRUPT = frozenset({11, 26})  # SQLITE_CORRUPT, SQLITE_NOTADB: the file is discarded
#: A document as listed: ``doc_id`` (which prefixes its chunk ids, ``<doc_id>#<n>``), title,
#: source, chunks, bytes, origin and upload time.
_INFO_COLUMNS = "source AS doc_id, title, source, chunks, bytes, origin, uploaded_at"


@dataclass(frozen=True)
class SyncReport:
    """What ``sync_directory`` did, in files."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: int = 0  # unreadable, binary, not UTF-8 or too large; logged


def cjk_bigrams(text: str) -> list[str]:
    """Overlapping character bigrams of the CJK runs in ``text`` (a lone character: itself)."""
    grams: list[str] = []
    for run in _CJK_RUN.findall(text):
        grams += [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
    return grams


def build_match_query(query: object) -> str:
    """Turn free text into a safe FTS5 query: quoted word tokens joined with OR ('' if none)."""
    # Tokens hold only letters and digits, so quoting them neutralises AND/OR/NOT/NEAR too.
    return " OR ".join(f'"{term}"' for term in match_terms(query))


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
        self._writer = self._open_writer()

    # --- connections ----------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self._path,
            timeout=self._busy_timeout,
            check_same_thread=False,
            isolation_level=None,
        )
        conn.row_factory = sqlite3.Row
        return conn

    def _open_writer(self) -> sqlite3.Connection:
        """The write connection with the schema ready; rebuilds a corrupt file."""
        if not self._memory:
            Path(self._path).parent.mkdir(parents=True, exist_ok=True)
        try:
            return self._open_once()
        except sqlite3.DatabaseError as exc:
            if self._memory or _error_code(exc) not in _CORRUPT:
                raise
            # A derived cache: a corrupt file is discarded and rebuilt from its sources.
            logger.warning("knowledge index %s is corrupt (%s); rebuilding it", self._path, exc)
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(self._path + suffix).unlink(missing_ok=True)
            return self._open_once()

    def _open_once(self) -> sqlite3.Connection:
        conn = self._connect()
        try:
            if not self._memory:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")  # WAL: durable at checkpoints
            if _schema_version(conn) != SCHEMA_VERSION:
                with _transaction(conn):
                    # another process may have made the tables while this one waited
                    if _schema_version(conn) != SCHEMA_VERSION:
                        for statement in _SCHEMA.split(";"):
                            conn.execute(statement)
        except BaseException:
            conn.close()
            raise
        return conn

    def close(self) -> None:
        """Close the write connection."""
        with self._lock:
            self._writer.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """The write connection inside a write transaction, committed when the block ends."""
        with self._lock, _transaction(self._writer):
            yield self._writer

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A new read-only connection inside a read transaction: every statement sees one
        snapshot (in memory: the write connection)."""
        if self._memory:
            with self._lock:
                yield self._writer
            return
        conn = self._connect()
        try:
            conn.execute("PRAGMA query_only = ON")
            conn.execute("BEGIN")
            yield conn
            conn.execute("COMMIT")
        finally:
            conn.close()

    # --- writes ---------------------------------------------------------------------------

    def _store(self, conn: sqlite3.Connection, docs: list[_Prepared]) -> None:
        """Replace the chunks and row of every document; the caller holds a write transaction."""
        _delete_chunks(conn, [doc.source for doc in docs])
        (last,) = conn.execute("SELECT COALESCE(MAX(chunk), 0) FROM chunk_rows").fetchone()
        chunks: list[tuple[int, str, str, str, str, str]] = []
        owners: list[tuple[int, str]] = []
        for doc in docs:
            for row in doc.rows:
                last += 1
                chunks.append((last, *row))
                owners.append((last, doc.source))
        conn.executemany(
            "INSERT INTO chunks (rowid, doc_id, source, title, content, cjk) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            chunks,
        )
        conn.executemany("INSERT INTO chunk_rows (chunk, source) VALUES (?, ?)", owners)
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

    def sync_directory(self, path: Path) -> SyncReport:
        """Index every .md/.txt under ``path``; only changed files are re-chunked and written.

        Source ids are ``<folder name>/<relative path>``. A file no longer in the folder is
        removed (uploads are kept); hidden files are ignored. NotADirectoryError for a missing
        folder.
        """
        root = Path(path)
        if not root.is_dir():
            raise NotADirectoryError(f"knowledge folder not found: {root}")
        prefix = root.resolve().name or "knowledge"
        found: dict[str, tuple[str, str, str]] = {}  # source -> (hash, text, file name)
        unreadable: set[str] = set()  # present but unreadable now (mid-write): keep, not remove
        for file in sorted(root.rglob("*")):
            rel = file.relative_to(root)
            if file.suffix.lower() not in SUFFIXES or any(p.startswith(".") for p in rel.parts):
                continue
            try:
                if not file.is_file():
                    continue
                text = validate_text(file.read_bytes())
            except (OSError, ValueError) as exc:
                logger.warning("knowledge: skipping %s: %s", file, exc)
                unreadable.add(f"{prefix}/{rel.as_posix()}")
                continue
            found[f"{prefix}/{rel.as_posix()}"] = (_digest(text.encode()), text, file.name)
        with self._read() as conn:
            existing: dict[str, str] = dict(
                conn.execute("SELECT source, hash FROM documents WHERE origin = ?", (DIRECTORY,))
            )
        changed = {s: v for s, v in found.items() if existing.get(s) != v[0]}
        gone = sorted(set(existing) - set(found) - unreadable)
        prepared = [_prepare(s, DIRECTORY, name, text) for s, (_, text, name) in changed.items()]
        if prepared or gone:
            with self._write() as conn:
                self._store(conn, prepared)
                _delete_chunks(conn, gone)
                conn.executemany(
                    "DELETE FROM documents WHERE source = ?", [(source,) for source in gone]
                )
        added = sum(source not in existing for source in changed)
        report = SyncReport(
            added=added,
            updated=len(changed) - added,
            removed=len(gone),
            unchanged=len(found) - len(changed),
            skipped=len(unreadable),
        )
        logger.info("knowledge: synced %s: %s", root, asdict(report))
        return report

    def add_document(self, name: str, text: str | bytes) -> dict[str, Any]:
        """Index an uploaded .md/.txt as ``upload/<file name>``, replacing one of that name;
        return its ``doc_id``, title, source, chunks and bytes.

        Raises ValueError (message fit for the user) for a bad name, extension or content.
        """
        filename = clean_name(name)
        body = validate_text(text)
        doc = _prepare(f"upload/{filename}", UPLOAD, filename, body)
        with self._write() as conn:
            self._store(conn, [doc])
        return doc.summary

    def delete_document(self, doc_id: str) -> dict[str, Any]:
        """Remove an uploaded document and its chunks; return what was removed.

        Raises DocumentNotFound for an unknown id and ReadOnlyDocument for a document of the
        knowledge folder (the folder owns those: change the folder instead).
        """
        with self._write() as conn:
            row = conn.execute(
                f"SELECT {_INFO_COLUMNS} FROM documents WHERE source = ?", (doc_id,)
            ).fetchone()
            if row is None:
                raise DocumentNotFound(f"no knowledge document {doc_id!r}")
            if row["origin"] != UPLOAD:
                raise ReadOnlyDocument(
                    f"{doc_id} is a bundled runbook from the knowledge folder and is read-only; "
                    "only uploaded documents can be deleted"
                )
            _delete_chunks(conn, [doc_id])
            conn.execute("DELETE FROM documents WHERE source = ?", (doc_id,))
        return dict(row)

    # --- reads ----------------------------------------------------------------------------

    def search(self, query: str, top_k: int = 3) -> list[dict[str, Any]]:
        """The ``top_k`` best chunks for free text, best first; [] when nothing matches.

        Each result is ``{"doc_id", "title", "source", "score", "content"}``; ``score`` is
        ``-bm25`` (higher is better). A chunk of an upload also carries ``origin``: ``{"kind":
        "upload", "file_name", "uploaded_at"}``. Never raises on user text.
        """
        match = build_match_query(query)
        if not match:
            return []
        try:
            limit = min(max(int(top_k), 1), MAX_TOP_K)
        except (TypeError, ValueError):
            limit = 3
        try:
            with self._read() as conn:
                rows = conn.execute(_SEARCH, (match, limit)).fetchall()
        except sqlite3.Error as exc:
            log = logger.error if _error_code(exc) in _CORRUPT else logger.warning
            log("knowledge search failed for %r: %s", match, exc)
            return []
        found = []
        for doc_id, title, source, content, score, upload, uploaded_at in rows:
            item: dict[str, Any] = {
                "doc_id": doc_id,
                "title": title,
                "source": source,
                "score": max(round(-score, 3), 0.001),
                "content": content,
            }
            if upload:
                name = source.rsplit("/", 1)[-1]
                item["origin"] = {"kind": "upload", "file_name": name, "uploaded_at": uploaded_at}
            found.append(item)
        return found

    def documents(self) -> list[dict[str, Any]]:
        """Every indexed document with its origin and upload time, uploads first, newest first."""
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {_INFO_COLUMNS} FROM documents "
                "ORDER BY origin = 'upload' DESC, uploaded_at DESC, source"
            ).fetchall()
        return [dict(row) for row in rows]


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """A write transaction, committed when the block ends, rolled back when it raises."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _schema_version(conn: sqlite3.Connection) -> int:
    """The file's schema version (0: a new file)."""
    version: int = conn.execute("PRAGMA user_version").fetchone()[0]
    return version


def _delete_chunks(conn: sqlite3.Connection, sources: list[str]) -> None:
    """Delete the chunks of ``sources``; the caller holds a write transaction."""
    params = [(source,) for source in sources]
    conn.executemany(
        "DELETE FROM chunks WHERE rowid IN (SELECT chunk FROM chunk_rows WHERE source = ?)",
        params,
    )
    conn.executemany("DELETE FROM chunk_rows WHERE source = ?", params)


def _error_code(exc: sqlite3.Error) -> int:
    """SQLite's primary result code of ``exc`` (-1 when it carries none)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else -1


@dataclass(frozen=True)
class _Prepared:
    """A document chunked and summarised, ready to be written."""

    source: str
    origin: str
    digest: str
    rows: list[tuple[str, str, str, str, str]]  # (doc_id, source, title, content, cjk) per chunk
    summary: dict[str, Any]  # doc_id, title, source, chunks, bytes


def _prepare(source: str, origin: str, filename: str, text: str) -> _Prepared:
    """``text`` chunked and summarised."""
    title, chunks = chunk_with_title(text, filename)
    data = text.encode("utf-8")
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
    summary = {
        "doc_id": source,
        "title": title,
        "source": source,
        "chunks": len(chunks),
        "bytes": len(data),
    }
    return _Prepared(source, origin, _digest(data), rows, summary)


def _now() -> str:
    """UTC now as ``2026-11-30T10:00:00.123Z``."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


SUFFIXES = frozenset({".md", ".txt"})
MAX_DOCUMENT_BYTES = 2 * 1024 * 1024
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


class DocumentNotFound(LookupError):
    """No document has that id."""


class ReadOnlyDocument(PermissionError):
    """The document belongs to the knowledge folder: only uploads can be deleted."""


_BINARY = "the file is binary, not text: upload a UTF-8 .md or .txt file"


def validate_text(text: str | bytes) -> str:
    """The text, newlines normalised; ValueError when empty, binary, not UTF-8 or too large."""
    try:
        body = text.decode("utf-8-sig") if isinstance(text, bytes) else text
        size = len(body.encode("utf-8"))
    except UnicodeError as exc:
        binary = isinstance(text, bytes) and b"\x00" in text
        raise ValueError(_BINARY if binary else "the file is not valid UTF-8 text") from exc
    if size > MAX_DOCUMENT_BYTES:
        raise ValueError(f"the document is too large ({size} bytes; limit {MAX_DOCUMENT_BYTES})")
    if "\x00" in body or len(_CONTROL.findall(body)) > max(8, len(body) // 100):
        raise ValueError(_BINARY)
    body = body.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if not body.strip():
        raise ValueError("the document is empty")
    return body


MAX_NAME_CHARS = 255


def clean_name(name: str) -> str:
    """The file name part of ``name``; ValueError for a hidden, odd or overlong name.

    Control and format characters (NUL, newlines, bidirectional overrides that make
    ``evil\u202egpj.md`` read as another name) and unpaired surrogates are refused outright.
    """
    if any(unicodedata.category(char) in ("Cc", "Cf", "Cs") for char in str(name)):
        raise ValueError("the file name contains control or format characters")
    filename = str(name).replace("\\", "/").rsplit("/", 1)[-1].strip()
    if not filename or filename.startswith("."):
        raise ValueError("the document needs a file name ending in .md or .txt")
    if len(filename) > MAX_NAME_CHARS:
        raise ValueError(f"the file name is longer than {MAX_NAME_CHARS} characters")
    suffix = Path(filename).suffix.lower()
    if suffix not in SUFFIXES:
        shown = f"'{suffix}'" if suffix else "none"
        raise ValueError(f"unsupported file type ({shown}): upload a .md or .txt file")
    return filename
