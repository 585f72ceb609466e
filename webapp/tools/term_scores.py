"""FTS5's bm25 computed here, from the index's postings kept in memory: the very same doubles.

FTS5's bm25 (``fts5_aux.c``, see :mod:`.bm25_pruning`) scores a chunk as a sum over the query's
phrases, in their order, starting from 0.0::

    idf(t) * (f_t * (k1 + 1)) / (f_t + k1 * (1 - b + b * D / avgdl))

with ``f_t`` the column-weighted count of ``t`` in the chunk, ``D`` the chunk's tokens (all
columns), ``avgdl`` the index's tokens over its rows and ``idf`` from the rows holding ``t``.
Only ``idf``, ``avgdl`` and the chunks change with a write; ``f_t`` and ``D`` never do. So this
module keeps, for every term of the index, its chunks and ``f_t`` (int32 + float32, 8 bytes a
pair), and every chunk's ``D``; a search reads the index's row and token totals from FTS5's own
averages record (one row, in the search's snapshot) and evaluates the formula with numpy in
the same operations as the C code (each chunk's ``k1 * (1 - b + b * D / avgdl)`` once per
generation, then per term ``idf * ((f * (k1 + 1)) / (f + norm))``; ``*`` and ``+`` commute
exactly), adding the terms' parts in the query's order: the scores are FTS5's to the last
bit (``tests/webapp/tools/test_knowledge_scale.py`` compares every chunk's score with
``bm25()``). Column weights must be whole numbers, so that ``f_t`` - a sum of weights - is
exact in any order and in a float32.

Why this design (issue 12; measured at 10,000 runbooks, ~68,000 chunks, 18,000 terms, 5.3
million (term, chunk) pairs, 7.1 million positions). A 9-term question matches ~40,000 chunks
and FTS5 scores them at ~1.5 us each (position lists, a docsize lookup per row); reading one
term's pairs through ``fts5vocab`` (``instance``, ``term = ?``) costs ~0.7 us a position, about
as much. The previous design (schema 4) remembered each term's score parts, read from FTS5 once
per index generation: warm searches were fast, but every write voided them (``N`` and the
average length are in every part), so the first search of each term after a start or an upload
paid FTS5's cost again (p95 49 / 80 ms). Options weighed:

* (b) refill the remembered parts in a helper thread after each write / at a start: every
  kept term re-read per write (seconds of CPU per upload at 10k documents), and searches
  racing the refill still pay - rejected.
* (a) keep counts, not scores, and compute the formula here - chosen. ``f_t`` and ``D`` are
  maintained per write at the cost of the changed chunks: a write tokenizes its new chunks in
  a private in-memory FTS5 table of the same definition (the same tokenizer, hence the same
  terms as the index, stemming included) and appends their pairs (chunk ids only grow, so a
  term's ids stay ascending); deleted chunks are filtered out of a term's arrays the next time
  it is used (chunk ids are never reused: ``meta.last_chunk``). An upload costs ~0.15-0.3 s
  more a MiB for it, in its write transaction; a sync batch of more than
  ``MAX_INCREMENTAL_CHUNKS`` chunks drops the postings instead, to be read again at its end.
* (c) from the profile: reading all postings at once is cheap where reading them term by term
  is not - one ``group_concat`` per range of terms over ``fts5vocab`` (SQLite's C, ~0.25 us a
  position) parsed by numpy: ~2 s at 10k documents on a quiet core, in a helper thread. And a
  start need not read them at all: they are saved next to the index file
  (``<index>-postings.npz``, ~43 MB) on close, at the process's exit and after a full read,
  and read back (0.04-0.2 s) when of the file's nonce (``meta``; a rebuilt file has a new
  nonce).
* (d) postings older than the index - another process on the file wrote (gunicorn's workers,
  Celery's: each keeps its own), or the saved ones predate writes (a crash) - catch up
  instead of being read again: chunk ids are never reused, so the chunks of FTS5's docsize
  table the postings do not know are new (ids above every known one) and those they know
  but the table lacks were deleted. The new ones are read from the table (ids above the
  highest known) and tokenized as a write does, all in one snapshot: the cost of the chunks
  written. Which chunks were deleted needs the list of chunk ids (~7.5 ms at 68,000 chunks),
  read only when there were some: FTS5's row count (its averages record) is then less than
  the known chunks plus the new ones. A search that finds the postings behind by at most
  ``MAX_INLINE_CHUNKS`` chunks catches them up itself, in its snapshot (one search at a time;
  the others wait for it); more are left to the helper thread. Chosen over saving after
  every write (debounced): that writes 43 MB per write and still leaves the other
  processes' postings behind.

* (e) until the postings are in memory (a start with nothing saved, e.g. after a crash;
  a large sync; postings too far behind), a search reads *its own* terms: each chunk's
  length once per generation (FTS5's docsize, ~30 ms at 68,000 chunks: ids and sizes in one
  ``group_concat``, the varints decoded by numpy), and each term's pairs through
  ``fts5vocab`` (``term = ?``, answered from FTS5's index: ~0.3 us a position), kept for the
  next searches of that generation and scored exactly as the postings are - FTS5's doubles
  again. A term is read by one search at a time (the others wait for it). This replaced
  answering through FTS5's pruned queries meanwhile (p95 60-190 ms for the ~2-3 s of the
  full read; FTS5 scores every match of a common term, ~1.5 us a chunk, for every search,
  where this reads a term once). The full read helps: it first reads the most common terms
  searches may ask (``PREFETCH_POSITIONS``; the stopwords, ``unsearched``, last) term by term
  into what searches use - a common term is what costs a search most to read itself - then
  the rest in ranges, leaving out every term searches have read; it parses at most
  ``LOAD_POSITIONS`` positions a statement (its stretches holding the GIL stall concurrent
  searches) and pauses before each statement while searches run (``MAX_GIVE_WAY_SECONDS``):
  on 2 cores its CPU is the searches' latency.

The full read runs when neither kept nor saved postings can catch up (none of this file's
nonce, or more than ``MAX_CATCH_UP_CHUNKS`` chunks missing) and after a sync that dropped them.
For a query with a word that is not one token :mod:`.knowledge` answers with FTS5's own pruned
queries. Memory: 8 bytes a pair plus 9 a chunk (42.7 MB at 10k documents, ~6 MB more of Python
objects), all terms kept (while they are read, the terms searched as well, until the full
read ends); and the score parts of the terms searched in the current generation
(``MAX_PARTS``, at most 16 MB), so that a warm search only adds them up.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from . import fts5_index as fts5
from .bm25_pruning import K1, idf
from .fts5_index import Floats, Freqs, Ids

logger = logging.getLogger(__name__)

B = 0.75  # FTS5's bm25 constant
#: A sync batch adding more chunks than this drops the postings, to be read again in one
#: pass: tokenizing a second time costs about what FTS5's own insert does. An upload (up to
#: ~10,000 chunks for 2 MiB) is always applied: searches right after it stay fast.
MAX_INCREMENTAL_CHUNKS = 2000
#: Postings older than the index (another process wrote, or saved ones of an older generation)
#: catch up by tokenizing the chunks they lack when there are at most this many; beyond it the
#: full read (~2-3 s at 68,000 chunks) costs about as much as tokenizing (~0.15-0.3 s a MiB).
MAX_CATCH_UP_CHUNKS = 20_000
#: A search finding the postings behind catches them up itself when at most this many chunks
#: are missing (an upload of a few notes: ~3 ms at 68,000 chunks, ~10 ms after deletions);
#: more are left to the helper thread while FTS5's queries answer.
MAX_INLINE_CHUNKS = 500
#: Positions read per statement by the full read: its memory stays small, and so do its
#: stretches holding the GIL (parsing one statement's text), which stall searches meanwhile.
LOAD_POSITIONS = 50_000
#: The full read waits at most this long between two statements for the searches under way
#: to finish: on 2 cores its parsing (holding the GIL) and its CPU would slow them down.
MAX_GIVE_WAY_SECONDS = 0.05
#: Positions of the most common terms the full read reads first, term by term, where
#: searches find them (~0.3 us a position); and terms read between two pauses for searches.
PREFETCH_POSITIONS = 2_000_000
PREFETCH_BATCH = 16
#: Score parts (8 bytes each) remembered at most for the index generation being searched:
#: a warm search then only adds them up.
MAX_PARTS = 2_000_000
#: Query words whose token is remembered at most; beyond it the memory starts afresh.
MAX_WORDS = 50_000

Connect = Callable[[], sqlite3.Connection]
_score = itemgetter(1)


@dataclass
class Write:
    """What one write transaction changed: chunk ids deleted, chunks added with their texts."""

    bulk: bool = False  # one batch of a sync (see TermScores.delta)
    deleted: list[int] = field(default_factory=list)
    added: list[tuple[int, Sequence[str]]] = field(default_factory=list)  # (rowid, texts)


@dataclass
class _Postings:
    """Every term's (chunk, f) pairs and every chunk's length, for one index generation."""

    generation: int
    nonce: str  # the index file's (meta): a rebuilt file is another one
    terms: dict[str, tuple[Ids, Freqs, int]]  # token -> (chunk ids, f, deletions filtered)
    lengths: Floats  # tokens per chunk, by rowid
    alive: npt.NDArray[np.bool_]  # by rowid
    deletions: int = 0  # writes with deletions applied so far

    def apply(self, delta: _Delta) -> None:
        """Bring these postings to ``delta``'s generation (the caller holds the lock)."""
        if len(delta.deleted):
            self.alive[delta.deleted[delta.deleted < len(self.alive)]] = False
            self.deletions += 1
        if len(delta.ids):
            self.grow(int(delta.ids.max()) + 1)
            self.lengths[delta.ids] = delta.lengths
            self.alive[delta.ids] = True
        for token, (ids, freqs) in delta.added.items():
            old = self.terms.get(token)
            if old is None:
                self.terms[token] = (ids, freqs, self.deletions)
            else:  # new chunk ids are larger than every older one: still ascending
                self.terms[token] = (
                    np.concatenate([old[0], ids]),
                    np.concatenate([old[1], freqs]),
                    old[2],
                )
        self.generation = delta.generation

    def pairs(self, token: str) -> tuple[Ids, Freqs]:
        """``token``'s live pairs (the caller holds the lock)."""
        entry = self.terms.get(token)
        if entry is None:
            return np.empty(0, np.int32), np.empty(0, np.float32)
        ids, freqs, filtered = entry
        if filtered < self.deletions:
            keep = self.alive[ids]
            if not keep.all():
                ids, freqs = ids[keep], freqs[keep]
            self.terms[token] = (ids, freqs, self.deletions)
        return ids, freqs

    def grow(self, size: int) -> None:
        """Room for rowids below ``size`` (doubling: appends are amortised O(1))."""
        if size <= len(self.lengths):
            return
        capacity = max(size, 2 * len(self.lengths))
        lengths, alive = np.zeros(capacity), np.zeros(capacity, dtype=np.bool_)
        lengths[: len(self.lengths)], alive[: len(self.alive)] = self.lengths, self.alive
        self.lengths, self.alive = lengths, alive


@dataclass(frozen=True)
class _Delta:
    """A write's effect on the postings (or several writes': a catch-up), from ``base``."""

    base: int  # the generation the postings must be of
    generation: int
    deleted: Ids
    added: dict[str, tuple[Ids, Freqs]]
    ids: Ids  # the chunks added
    lengths: Floats  # and their lengths


class TermScores:
    """bm25 of an FTS5 table's chunks from postings kept in memory; thread-safe.

    ``definition`` is the table's ``fts5(...)`` argument text, ``weights`` its bm25 weight per
    column (every column, in order), ``texts`` the columns a :class:`Write` carries texts for.
    ``connect`` opens a connection of the index file for the full read in a helper thread;
    None (an in-memory index) reads inline, with the searching connection. ``saved`` is the
    file the postings are saved to on close and after a full read, and read back from at the
    next start when they are still of the index's generation. ``unsearched``: words no
    search has (stopwords), which a full read leaves for last.
    """

    def __init__(
        self,
        table: str,
        definition: str,
        weights: dict[str, float],
        texts: Sequence[str],
        connect: Connect | None,
        saved: Path | None = None,
        unsearched: Sequence[str] = (),
    ) -> None:
        if not all(float(weight).is_integer() for weight in weights.values()):
            raise ValueError("column weights must be whole numbers (see the module docstring)")
        self._table = table
        self._weights = np.array(list(weights.values()), dtype=np.float64)
        self._columns = list(weights)
        self._column = fts5.column_index(self._columns)
        self._connect = connect
        self._saved = saved
        self._unsearched = list(unsearched)  # words no query has (read last by a full read)
        self._lock = threading.Lock()
        self._catching = threading.Lock()  # a search catching the postings up
        self._postings: _Postings | None = None
        # Until the postings are in memory: the terms searched so far, read from the index.
        self._partial: _Postings | None = None
        self._cold_lock = threading.Lock()
        self._reading: dict[str, threading.Event] = {}  # terms a search is reading into it
        self._searches, self._searches_lock = 0, threading.Lock()  # searches under way
        self._loading: threading.Thread | None = None
        # Where the helper thread last found them: saved, index, or kept (caught up).
        self.read_from: str | None = None
        self.full_reads = 0  # every posting read from the index
        self.catch_ups = 0  # postings brought up to date with others' writes
        self.id_lists = 0  # catch-ups that read the list of chunk ids (others deleted chunks)
        self._texts = list(texts)
        # Two: a search's new words never wait for a big upload's chunks to be tokenized.
        self._query_terms = _Tokenizer(definition, texts)
        self._write_terms = _Tokenizer(definition, texts)
        # An index the application never closes still saves its postings when it exits.
        self._at_exit = weakref.finalize(self, _save_at_exit, weakref.ref(self))
        # Score parts per term, for one generation (a write changes every part).
        self._parts_of, self._parts, self._kept_parts = -1, dict[str, Floats](), 0
        self._norms: tuple[int, float, Floats] | None = None  # (generation, avgdl, by rowid)
        self._words: dict[str, str | None] = {}  # query word -> its one token (None: not one)

    # --- searches -------------------------------------------------------------------------

    def top(
        self, conn: sqlite3.Connection, generation: int, words: list[str], count: int
    ) -> list[tuple[int, float]] | None:
        """The ``count`` best (rowid, rank) of ``"w1" OR "w2" ...``, best (lowest) first.

        ``conn`` is in a read transaction of ``generation``. None when the postings are not
        of that generation (a newer one starts reading them) or a word is not one token.
        """
        with self._searches_lock:
            self._searches += 1
        try:
            return self._top(conn, generation, words, count)
        finally:
            with self._searches_lock:
                self._searches -= 1

    def _top(
        self, conn: sqlite3.Connection, generation: int, words: list[str], count: int
    ) -> list[tuple[int, float]] | None:
        tokens = self._tokens(words)
        behind = self._postings
        if self._connect is not None and behind is not None and behind.generation < generation:
            with self._catching:  # one at a time: the others then find the postings current
                if behind is self._postings and behind.nonce == fts5.identity(conn)[1]:
                    self._catch_up(conn, behind, MAX_INLINE_CHUNKS)
        with self._lock:
            postings = self._postings
            current = postings is not None and postings.generation == generation
            if not current:
                if postings is None or postings.generation < generation:
                    self._reload(conn)
                if self._connect is None or (
                    postings is not None and postings.generation > generation
                ):
                    return None  # (a search of a snapshot older than this process's write)
            if None in tokens:
                return None
            named = [token for token in tokens if token is not None]
            if current:
                assert postings is not None
                pairs = [postings.pairs(token) for token in named]
                lengths = postings.lengths
            if self._parts_of != generation:
                self._parts_of, self._parts, self._kept_parts = generation, {}, 0
            known = [self._parts.get(token) for token in named]
        if not current:
            cold = self._cold(conn, generation, named)
            if cold is None:
                return None
            pairs, lengths = cold
        rows, total = fts5.averages(conn, self._table)
        if rows == 0:
            return []
        average = float(total) / float(rows)
        norms = self._norms
        if norms is None or norms[0] != generation or norms[1] != average:
            # k1 * (1 - b + b * D / avgdl) of every chunk: the same doubles gathered per term.
            norms = self._norms = (generation, average, K1 * (1 - B + B * lengths / average))
        size = max((int(ids[-1]) + 1 for ids, _ in pairs if len(ids)), default=0)
        scores = np.zeros(size)
        fresh: dict[str, Floats] = {}
        # The query's order, as fts5_aux.c adds the phrases.
        for token, (ids, freqs), part in zip(named, pairs, known, strict=True):
            if part is None:
                # idf * ((f * (k1 + 1)) / (f + norm)), in place: * and + commute exactly.
                part = freqs.astype(np.float64)
                norm = np.take(norms[2], ids)
                norm += part
                part *= K1 + 1.0
                part /= norm
                part *= idf(rows, len(ids))
                fresh[token] = part
            np.add.at(scores, ids, part)  # each id once per term: one addition per chunk
        if fresh:
            self._keep_parts(generation, fresh)
        matched = np.flatnonzero(scores)  # a part is never 0: idf >= 1e-6 and f > 0
        if len(matched) > count:
            matched = matched[np.argpartition(-scores[matched], count - 1)[:count]]
        found = zip(matched.tolist(), (-scores[matched]).tolist(), strict=True)
        return sorted(found, key=_score)

    def _cold(
        self, conn: sqlite3.Connection, generation: int, tokens: list[str]
    ) -> tuple[list[tuple[Ids, Freqs]], Floats] | None:
        """``tokens``' pairs and every chunk's length in ``conn``'s snapshot, from the index.

        While the postings are not in memory (being read, or catching up in the helper
        thread): the lengths are read once per generation, each term's pairs once, through
        FTS5's vocabulary (``term = ?``: from its index, ~0.3 us a position), and kept until
        the postings are in memory. None for a snapshot older than what is kept.
        """
        identity = fts5.identity(conn)
        cold = self._partial
        if cold is None or (cold.generation, cold.nonce) != identity:
            with self._cold_lock:  # the lengths once (~30 ms at 68,000 chunks): the others wait
                cold = self._partial
                if cold is None or (cold.generation, cold.nonce) != identity:
                    if cold is not None and cold.generation > generation:
                        return None
                    cold = self._read_lengths(conn, identity)
        found: dict[str, tuple[Ids, Freqs, int]] = {}
        others: dict[str, threading.Event] = {}
        for token in dict.fromkeys(tokens):
            with self._lock:
                entry = cold.terms.get(token)
                if entry is None and token in self._reading:
                    # Another search is reading it: waited for (below), not read twice.
                    others[token] = self._reading[token]
                    continue
                if entry is None:
                    event = self._reading[token] = threading.Event()
            if entry is None:
                try:  # outside the locks: SQLite releases the GIL while it reads
                    entry = fts5.term_pairs(conn, self._table, token, self._column, self._weights)
                    with self._lock:
                        cold.terms.setdefault(token, entry)
                finally:
                    with self._lock:
                        del self._reading[token]
                    event.set()
            found[token] = entry
        for token, waited in others.items():
            waited.wait()
            with self._lock:
                entry = cold.terms.get(token)
            if entry is None:  # its reader failed or read another generation: read it here
                entry = fts5.term_pairs(conn, self._table, token, self._column, self._weights)
            found[token] = entry
        return [found[token][:2] for token in tokens], cold.lengths

    def _prefetch(self, conn: sqlite3.Connection, generation: int) -> None:
        """Read the most common searchable terms first, as a search does (:meth:`_cold`).

        They cost searches the most to read themselves, and most questions have some; the
        words never searched (``unsearched``: the stopwords) are left to the full read.
        """
        self.prepare(conn)
        unsearched = set(self._tokens(self._unsearched))
        counts = conn.execute(
            f"SELECT term, doc, cnt FROM temp.{self._table}_row ORDER BY doc DESC"
        ).fetchall()
        budget, batch = PREFETCH_POSITIONS, list[str]()
        for term, _, positions in counts:
            if budget <= 0:
                break
            if term in unsearched:
                continue
            batch.append(term)
            budget -= positions
            if len(batch) == PREFETCH_BATCH or budget <= 0:
                self._give_way()
                if self._cold(conn, generation, batch) is None:
                    return  # searches moved on to a newer generation
                batch = []

    def _give_way(self) -> None:
        """Let the searches under way finish first (the full read pauses between statements)."""
        deadline = time.monotonic() + MAX_GIVE_WAY_SECONDS
        while self._searches and time.monotonic() < deadline:
            time.sleep(0.001)

    def _read_lengths(self, conn: sqlite3.Connection, identity: tuple[int, str]) -> _Postings:
        """Every chunk's length in ``conn``'s snapshot and no term yet, for :meth:`_cold`."""
        ids, sizes = fts5.lengths(conn, self._table, len(self._columns))
        cold = _Postings(*identity, {}, np.zeros(0), np.zeros(0, dtype=np.bool_))
        cold.grow(int(ids.max()) + 1 if len(ids) else 1)
        cold.lengths[ids] = sizes
        cold.alive[ids] = True
        self._partial = cold
        return cold

    def _searched(self, generation: int, nonce: str) -> dict[str, tuple[Ids, Freqs, int]]:
        """The terms searches have read of this snapshot (a dict that grows meanwhile)."""
        with self._lock:
            cold = self._partial
        if cold is None or (cold.generation, cold.nonce) != (generation, nonce):
            return {}
        return cold.terms

    def _keep_parts(self, generation: int, fresh: dict[str, Floats]) -> None:
        """Remember terms' score parts for later searches of ``generation`` (bounded)."""
        with self._lock:
            if self._parts_of != generation:
                return
            for token, part in fresh.items():
                if token not in self._parts and self._kept_parts + len(part) <= MAX_PARTS:
                    self._parts[token] = part
                    self._kept_parts += len(part)

    def _tokens(self, words: list[str]) -> list[str | None]:
        """Each word's FTS5 token (``errors`` -> ``error``); None for a word that is not one."""
        unknown = [word for word in dict.fromkeys(words) if word not in self._words]
        if unknown:
            found = self._query_terms.select(
                [(n, ("", word, "")) for n, word in enumerate(unknown)],
                "SELECT term, doc FROM scratch_terms",
            )
            tokens: dict[int, list[str]] = {}
            for token, row in found:
                tokens.setdefault(row, []).append(token)
            if len(self._words) + len(unknown) > MAX_WORDS:
                self._words = {}
            for n, word in enumerate(unknown):
                one = tokens.get(n, [])
                self._words[word] = one[0] if len(one) == 1 else None
        return [self._words.get(word) for word in words]

    # --- writes ---------------------------------------------------------------------------

    def delta(self, conn: sqlite3.Connection, generation: int, write: Write) -> _Delta | None:
        """``write``'s effect, read inside its transaction (``conn``), that made ``generation``.

        None when nothing is kept, or for a sync batch of more than ``MAX_INCREMENTAL_CHUNKS``
        chunks (a sync writing several batches: reading everything again afterwards is cheaper
        than tokenizing them a second time while the write lock is held).
        """
        if (write.bulk and len(write.added) > MAX_INCREMENTAL_CHUNKS) or self._postings is None:
            return None
        return self._delta(conn, generation - 1, generation, write.deleted, write.added)

    def _delta(
        self,
        conn: sqlite3.Connection,
        base: int,
        generation: int,
        deleted: Sequence[int],
        added: list[tuple[int, Sequence[str]]],
    ) -> _Delta:
        """From ``base`` to ``generation`` (``conn``'s snapshot): ``added`` tokenized here."""
        weight = " ".join(
            f"WHEN '{name}' THEN {float(value)!r}"
            for name, value in zip(self._columns, self._weights.tolist(), strict=True)
        )
        # f per (term, chunk): a sum of whole numbers, exact in any order.
        found = self._write_terms.select(
            added,
            f"SELECT term, doc, total(CASE col {weight} END) FROM scratch_terms "
            "GROUP BY term, doc ORDER BY term, doc",
        )
        terms: dict[str, tuple[Ids, Freqs]] = {}
        for token, group in groupby(found, key=itemgetter(0)):
            pairs = np.array([(doc, f) for _, doc, f in group], dtype=np.float64)
            terms[token] = (pairs[:, 0].astype(np.int32), pairs[:, 1].astype(np.float32))
        ids = [rowid for rowid, _ in added]
        sizes = dict(fts5.docsizes(conn, self._table, ids))
        return _Delta(
            base,
            generation,
            np.array(deleted, dtype=np.int32),
            terms,
            np.array(ids, dtype=np.int32),
            np.array([sizes.get(rowid, 0.0) for rowid in ids], dtype=np.float64),
        )

    def apply(self, delta: _Delta | None) -> None:
        """Bring the postings to ``delta``'s generation; None drops them (read again later)."""
        with self._lock:
            postings = self._postings
            if delta is None or postings is None or postings.generation != delta.base:
                self._postings = None
                return
            postings.apply(delta)

    def drop(self) -> None:
        """Forget the postings (a write that failed after ``apply``)."""
        with self._lock:
            self._postings = None

    # --- the full read --------------------------------------------------------------------

    def prepare(self, conn: sqlite3.Connection) -> None:
        """Make a new read connection ready (before it is made query-only): the vocabularies."""
        for kind in ("row", "instance"):
            conn.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{self._table}_{kind} "
                f"USING fts5vocab(main, {self._table}, {kind})"
            )

    def refresh(self) -> None:
        """Start reading every posting in a helper thread when none are kept or under way."""
        if self._connect is None:
            return  # an in-memory index reads inline, at its next search
        with self._lock:
            if self._postings is None:
                self._reload(None)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a full read under way; True when the postings are then kept."""
        loading = self._loading
        if loading is not None:
            loading.join(timeout)
        return self._postings is not None

    def save(self) -> None:
        """Save the postings kept for the next start (on close, and at the process's exit)."""
        if self._saved is None:
            return
        with self._lock:
            flat = None if self._postings is None else _flatten(self._postings)
        if flat is not None:
            _save(self._saved, flat)

    def close(self) -> None:
        """Wait for a full read under way, save the postings for the next start, and stop."""
        self._at_exit.detach()
        self.wait()
        self.save()
        self._query_terms.close()
        self._write_terms.close()

    def _reload(self, conn: sqlite3.Connection | None) -> None:
        """Read the postings again (the caller holds the lock): inline without ``connect``."""
        if self._connect is None:
            if conn is not None:
                self._postings = _read_all(conn, self._table, self._columns, self._weights)
                self.read_from = "index"
            return
        if self._loading is not None and self._loading.is_alive():
            return
        self._loading = threading.Thread(target=self._load, name="knowledge-postings", daemon=True)
        self._loading.start()

    def _load(self) -> None:
        assert self._connect is not None
        try:
            conn = self._connect()
            try:
                conn.execute("BEGIN")
                generation, nonce = fts5.identity(conn)
                with self._lock:
                    kept, self.read_from = self._postings, "kept"
                if (
                    kept is None
                    or kept.nonce != nonce
                    or not self._catch_up(conn, kept, MAX_CATCH_UP_CHUNKS)
                ):
                    self.read_from, kept = "saved", self._from_saved(conn, generation, nonce)
                postings = kept
                if postings is None:
                    self.read_from = "index"
                    self._prefetch(conn, generation)
                    postings = _read_all(
                        conn,
                        self._table,
                        self._columns,
                        self._weights,
                        self._searched,
                        self._give_way,
                    )
                    self.full_reads += 1
                    if self._saved is not None:
                        _save(self._saved, _flatten(postings))
                conn.execute("COMMIT")
            finally:
                conn.close()
        except (sqlite3.Error, OSError, ValueError) as exc:
            logger.warning("knowledge: reading the postings failed: %s", exc)
            return
        with self._lock:
            if self._postings is None or self._postings.generation < postings.generation:
                self._postings = postings
            self._partial = None

    def _from_saved(
        self, conn: sqlite3.Connection, generation: int, nonce: str
    ) -> _Postings | None:
        """The saved postings of this file brought to ``conn``'s snapshot, if they can be."""
        saved = None if self._saved is None else _restore(self._saved, nonce)
        if (
            saved is None
            or saved.generation > generation
            or not self._catch_up(conn, saved, MAX_CATCH_UP_CHUNKS)
        ):
            return None
        return saved

    def _catch_up(self, conn: sqlite3.Connection, postings: _Postings, limit: int) -> bool:
        """Bring ``postings`` (of this file, maybe kept) to ``conn``'s snapshot if they can be.

        Chunk ids are never reused: the chunks the snapshot has and the postings lack are new
        (and have larger ids than any the postings know), those they have and it lacks were
        deleted - which the list of chunk ids tells, read only when FTS5's row count says some
        were. Postings newer than the snapshot (this process's write) are left as they are.
        False when they lack more than ``limit`` chunks.
        """
        generation, _ = fts5.identity(conn)
        with self._lock:
            base, alive = postings.generation, postings.alive.copy()
        if base >= generation:
            return True
        known = np.flatnonzero(alive)
        last = int(known[-1]) if len(known) else 0
        # New chunks have ids above every one known (dead or alive: ids are never reused).
        rows = conn.execute(
            f"SELECT rowid, {', '.join(self._texts)} FROM {self._table} WHERE rowid > ? "
            "ORDER BY rowid LIMIT ?",
            (last, limit + 1),
        ).fetchall()
        if len(rows) > limit:
            return False
        added: list[tuple[int, Sequence[str]]] = [(row[0], row[1:]) for row in rows]
        # FTS5's row count is the known chunks still there plus the new ones: when it is all
        # of them, none was deleted, and the list of chunk ids need not be read.
        gone: list[int] = []
        if fts5.averages(conn, self._table)[0] != len(known) + len(added):
            deleted = self._deleted(conn, alive, [rowid for rowid, _ in added])
            if deleted is None:
                return False  # the table disagrees with the postings: read everything again
            gone = deleted
        delta = self._delta(conn, base, generation, gone, added)
        with self._lock:
            if postings.generation != base:
                return True  # this process wrote meanwhile: caught up at the next search
            postings.apply(delta)
            self.catch_ups += 1
        return True

    def _deleted(
        self, conn: sqlite3.Connection, alive: npt.NDArray[np.bool_], added: list[int]
    ) -> list[int] | None:
        """The ``alive`` chunks deleted in ``conn``'s snapshot (from its list of chunk ids).

        None when the list's new chunks are not exactly ``added``.
        """
        self.id_lists += 1
        (listed,) = conn.execute(f"SELECT group_concat(id) FROM {self._table}_docsize").fetchone()
        ids = np.fromstring(listed or "", dtype=np.int64, sep=",") if listed else np.empty(0, int)
        size = max(len(alive), int(ids.max(initial=0)) + 1)
        present, known = np.zeros(size, dtype=np.bool_), np.zeros(size, dtype=np.bool_)
        present[ids], known[: len(alive)] = True, alive
        if np.flatnonzero(present & ~known).tolist() != added:
            return None
        return np.flatnonzero(known & ~present).tolist()  # type: ignore[no-any-return]


class _Tokenizer:
    """A private in-memory FTS5 table of the index's definition: the index's own terms."""

    def __init__(self, definition: str, texts: Sequence[str]) -> None:
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        # Contentless: only its terms are read, and 'delete-all' empties it at once.
        self._conn.execute(f"CREATE VIRTUAL TABLE scratch USING fts5({definition}, content = '')")
        self._conn.execute("CREATE VIRTUAL TABLE scratch_terms USING fts5vocab(scratch, instance)")
        names, marks = ", ".join(texts), ", ".join("?" * (len(texts) + 1))
        self._insert = f"INSERT INTO scratch (rowid, {names}) VALUES ({marks})"
        self._lock = threading.Lock()

    def select(self, rows: list[tuple[int, Sequence[str]]], select: str) -> list[Any]:
        """``select`` over the terms (``scratch_terms``) of ``rows`` (rowid, texts)."""
        with self._lock:
            self._conn.executemany(self._insert, [(rowid, *texts) for rowid, texts in rows])
            found = self._conn.execute(select).fetchall()
            self._conn.execute("INSERT INTO scratch (scratch) VALUES ('delete-all')")
        return found

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _save_at_exit(ref: weakref.ref[TermScores]) -> None:
    scores = ref()
    if scores is not None:
        scores.save()


def _read_all(
    conn: sqlite3.Connection,
    table: str,
    columns: list[str],
    weights: Floats,
    read: Callable[[int, str], dict[str, tuple[Ids, Freqs, int]]] | None = None,
    pause: Callable[[], None] | None = None,
) -> _Postings:
    """Every term's pairs and every chunk's length, in one snapshot of ``conn``.

    ``read(generation, nonce)``: terms already read in a snapshot of that generation (by
    searches, meanwhile too), taken from there instead of read again; ``pause`` is called
    before each statement.
    """
    for kind in ("row", "instance"):
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{table}_{kind} "
            f"USING fts5vocab(main, {table}, {kind})"
        )
    column = fts5.column_index(columns)
    began = not conn.in_transaction
    if began:
        conn.execute("BEGIN")
    try:
        generation, nonce = fts5.identity(conn)
        counts = conn.execute(f"SELECT term, cnt FROM temp.{table}_row").fetchall()
        known = {} if read is None else read(generation, nonce)
        terms: dict[str, tuple[Ids, Freqs, int]] = {}
        for batch in fts5.term_ranges(counts, known, LOAD_POSITIONS):
            if pause is not None:
                pause()
            codes = conn.execute(
                f"SELECT group_concat(doc << {fts5.COLUMN_BITS} | {column}) "
                f"FROM temp.{table}_instance WHERE term >= ? AND term <= ?",
                (batch[0][0], batch[-1][0]),
            ).fetchone()[0]
            terms.update(fts5.pairs(batch, codes or "", weights))
        ids, sizes = fts5.lengths(conn, table, len(columns))
        terms.update((term, known[term]) for term, _ in counts if term not in terms)
    finally:
        if began:
            conn.execute("COMMIT")
    postings = _Postings(generation, nonce, terms, np.zeros(0), np.zeros(0, dtype=np.bool_))
    postings.grow(int(ids.max()) + 1 if len(ids) else 1)
    postings.lengths[ids] = sizes
    postings.alive[ids] = True
    return postings


#: The postings as saved: term names ('\n'-separated UTF-8), each term's first pair, the pairs,
#: the chunk lengths and which chunks are alive, and the (generation, nonce) they are of.
_Flat = dict[str, npt.NDArray[np.generic]]


def _flatten(postings: _Postings) -> _Flat:
    """The postings as a few flat arrays (deleted chunks left out); the caller holds the lock."""
    tokens = list(postings.terms)
    pairs = [postings.pairs(token) for token in tokens]
    return {
        "generation": np.array([postings.generation]),
        "nonce": np.array(postings.nonce),
        "terms": np.frombuffer("\n".join(tokens).encode("utf-8"), dtype=np.uint8),
        "bounds": np.cumsum([0] + [len(ids) for ids, _ in pairs]),
        "ids": np.concatenate([ids for ids, _ in pairs] or [np.empty(0, np.int32)]),
        "freqs": np.concatenate([freqs for _, freqs in pairs] or [np.empty(0, np.float32)]),
        "lengths": postings.lengths.copy(),
        "alive": postings.alive.copy(),
    }


def _save(path: Path, flat: _Flat) -> None:
    """Write ``flat`` to ``path`` whole or not at all (a temporary file renamed over it)."""
    if not path.parent.is_dir():
        return  # the index's folder is gone (a temporary one at exit): nothing to save for
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("wb") as out:
            np.savez(out, **cast(dict[str, Any], flat))  # (np.savez's stub types **kwds)
        os.replace(temporary, path)
    except OSError as exc:
        logger.warning("knowledge: could not save the postings to %s: %s", path, exc)
        temporary.unlink(missing_ok=True)


def _restore(path: Path, nonce: str) -> _Postings | None:
    """The postings saved in ``path`` if they are of this index (any generation), else None."""
    try:
        with np.load(path, allow_pickle=False) as saved:
            if str(saved["nonce"]) != nonce:
                return None
            generation = int(saved["generation"][0])
            text = saved["terms"].tobytes().decode("utf-8")
            bounds, ids, freqs = saved["bounds"], saved["ids"], saved["freqs"]
            lengths, alive = saved["lengths"], saved["alive"]
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError) as exc:
        logger.warning("knowledge: ignoring the saved postings %s: %s", path, exc)
        return None
    tokens = text.split("\n") if text else []
    if len(bounds) != len(tokens) + 1 or bounds[-1] != len(ids) or not nonce:
        return None
    terms = {
        token: (ids[bounds[n] : bounds[n + 1]], freqs[bounds[n] : bounds[n + 1]], 0)
        for n, token in enumerate(tokens)
    }
    return _Postings(generation, nonce, terms, lengths, alive)
