"""Each search term's bm25 contribution to every chunk holding it, remembered per index generation.

FTS5's bm25 is a sum over the query's terms (:mod:`.bm25_pruning`), and a term's part of it
for a chunk - ``idf(t) * f_t * (k1 + 1) / (f_t + k1 * (1 - b + b * len / avg_len))`` - is
what the single-term query ``"t"`` ranks that chunk with: the same idf, column weights and
lengths. So once each term's ``(chunk, score)`` pairs have been read from FTS5, a search adds
them up (numpy: one array addition per term) and reads from the table only the ``top_k``
chunks it returns: no chunk is scored by FTS5 again. The terms are added in the query's
order, starting from 0, as FTS5's bm25 adds them (a term a chunk lacks adds exactly 0.0), so
the sums are FTS5's scores to the last bit and ties are ordered as before.

The pairs are valid for one snapshot: any write changes ``N``, the average length or the
chunks, so they are kept for one ``generation`` (``meta``) and dropped when a newer one is
seen. ``MAX_POSTINGS`` bounds the memory (16 bytes a pair); the least recently used terms go
first. Reading a term's pairs costs about what scoring its chunks in one FTS5 query does, so
:mod:`.knowledge` reads them only once a generation has already answered a search (an index
being written to keeps its pruned FTS5 queries).
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from operator import itemgetter

import numpy as np
import numpy.typing as npt

from .bm25_pruning import phrase_query

#: (chunk, score) pairs kept at most, over all terms (16 bytes each: 48 MB).
MAX_POSTINGS = 3_000_000

_PAIRS = "SELECT rowid, rank FROM chunks WHERE chunks MATCH ? AND rank MATCH ?"

#: One term's chunk rowids (ascending) and its part of their scores (bm25: negative).
Pairs = tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]
_score = itemgetter(1)


class TermScores:
    """A thread-safe memory of per-term (chunk, score) pairs for one index file."""

    def __init__(self, rank: str) -> None:
        self._rank = rank  # the bm25(...) expression with the index's column weights
        self._lock = threading.Lock()
        self._generation = -1
        self._seen = -1  # the generation of the last search, whatever it used
        self._terms: OrderedDict[str, Pairs] = OrderedDict()
        self._postings = 0

    def ready(self, generation: int) -> bool:
        """True when ``generation`` has answered a search before (pairs are worth reading)."""
        with self._lock:
            seen, self._seen = self._seen, max(self._seen, generation)
        return seen == generation

    def top(
        self, conn: sqlite3.Connection, generation: int, terms: list[str], count: int
    ) -> list[tuple[int, float]] | None:
        """The ``count`` best (rowid, score) of the OR of ``terms``, best (lowest) first.

        Reads the pairs of terms not yet known in ``conn``'s snapshot, which must be of
        ``generation``; None when that snapshot is older than the pairs held.
        """
        found = self._known(generation, terms)
        if found is None:
            return None
        for term in terms:
            if term not in found:
                rows = conn.execute(_PAIRS, (phrase_query([term]), self._rank)).fetchall()
                pairs = np.array(rows, dtype=np.float64).reshape(-1, 2)
                found[term] = (pairs[:, 0].astype(np.int64), pairs[:, 1].copy())
        self._remember(generation, found)
        size = max((int(ids[-1]) + 1 for ids, _ in found.values() if len(ids)), default=0)
        # In the query's order, as fts5_aux.c's bm25 adds them: the very same doubles (a
        # chunk's rowid appears once per term, so each ``+=`` adds one part to one chunk).
        scores = np.zeros(size, dtype=np.float64)
        for term in terms:
            ids, values = found[term]
            scores[ids] += values
        matched = np.flatnonzero(scores)  # a part is never 0: idf >= 1e-6 and f > 0
        if len(matched) > count:
            matched = matched[np.argpartition(scores[matched], count - 1)[:count]]
        return sorted(zip(matched.tolist(), scores[matched].tolist(), strict=True), key=_score)

    def _known(self, generation: int, terms: list[str]) -> dict[str, Pairs] | None:
        with self._lock:
            if generation < self._generation:
                return None
            if generation > self._generation:
                self._generation, self._terms, self._postings = generation, OrderedDict(), 0
            found = {}
            for term in terms:
                pairs = self._terms.get(term)
                if pairs is not None:
                    self._terms.move_to_end(term)
                    found[term] = pairs
            return found

    def _remember(self, generation: int, found: dict[str, Pairs]) -> None:
        with self._lock:
            if generation != self._generation:
                return
            for term, pairs in found.items():
                if term not in self._terms:
                    self._terms[term] = pairs
                    self._postings += len(pairs[0])
            while self._postings > MAX_POSTINGS and len(self._terms) > 1:
                _, (ids, _values) = self._terms.popitem(last=False)
                self._postings -= len(ids)
