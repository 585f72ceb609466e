"""How many chunks hold each search term: counted once, then reused as a bound across writes.

The pruning bounds (:mod:`.bm25_pruning`) need, per query term, the number of chunks holding
it; counting a common term reads its whole posting list, which costs more than the pruned
search itself. Counts are therefore remembered. After a write they are no longer exact, but
they remain usable: a write only adds chunks or deletes them, and ``meta`` keeps a running
total of deleted chunks, so ``count - deleted since`` is a lower bound of the true count (a
lower count gives a larger idf, hence a safe, looser score bound). A term is counted again
when its stale count was 0 or the deletions since reach ``RECOUNT_SHARE`` of it. The number of
chunks, which idf needs exactly, is a running total in ``meta`` too (a ``COUNT(*)`` would read
the whole table after every write).
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass

from .bm25_pruning import phrase_query

#: Recount a term once chunks deleted since its count reach this share of it (looser bounds
#: prune less; a recount of a common term costs a few milliseconds).
RECOUNT_SHARE = 0.1
#: Terms remembered at most; beyond it the memory starts afresh.
MAX_TERMS = 50_000


@dataclass(frozen=True)
class Counts:
    """Lower bounds of the chunks holding each term (exact for ``exact``), and all chunks."""

    hits: dict[str, int]
    exact: frozenset[str]
    rows: int


class TermCounts:
    """A thread-safe memory of term counts for one index file."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._terms: dict[str, tuple[int, str, int]] = {}  # term -> (count, generation, deleted)

    def counts(self, conn: sqlite3.Connection, terms: list[str]) -> Counts:
        """The counts of ``terms`` in ``conn``'s snapshot (the caller's read transaction)."""
        state = dict(
            conn.execute(
                "SELECT key, value FROM meta WHERE key IN ('generation', 'deleted', 'chunks')"
            )
        )
        generation, deleted = state.get("generation"), state.get("deleted")
        with self._lock:
            known = {term: self._terms[term] for term in terms if term in self._terms}
        hits: dict[str, int] = {}
        exact: set[str] = set()
        fresh: dict[str, tuple[int, str, int]] = {}
        for term in terms:
            entry = known.get(term)
            if entry is not None and generation is not None and deleted is not None:
                count, counted_at, deleted_then = entry
                if counted_at == generation:
                    hits[term] = count
                    exact.add(term)
                    continue
                since = int(deleted) - deleted_then
                if count > 0 and since < RECOUNT_SHARE * count:
                    hits[term] = max(count - since, 0)
                    continue
            (count,) = conn.execute(
                "SELECT COUNT(*) FROM chunks WHERE chunks MATCH ?", (phrase_query([term]),)
            ).fetchone()
            hits[term] = count
            exact.add(term)
            if generation is not None and deleted is not None:
                fresh[term] = (count, generation, int(deleted))
        if "chunks" in state:
            rows = int(state["chunks"])
        else:
            (rows,) = conn.execute("SELECT COUNT(*) FROM chunk_rows").fetchone()
        with self._lock:
            if len(self._terms) + len(fresh) > MAX_TERMS:
                self._terms = {}
            self._terms.update(fresh)
        return Counts(hits, frozenset(exact), rows)
