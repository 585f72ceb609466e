"""Top-k pruning for FTS5's bm25: skip scoring chunks that cannot reach the top k (MaxScore).

FTS5 ranks an ``a OR b OR ...`` query by scoring every chunk that matches any term; a common
term (``error``, ``latency``) matches a large share of the index, so at 10,000 runbooks a
search scored ~45,000 chunks. FTS5's bm25 (``fts5_aux.c``) is a sum over the query's terms::

    score(chunk) = sum_t idf(t) * f_t * (k1 + 1) / (f_t + k1 * (1 - b + b * len / avg_len))
    idf(t) = log((N - n_t + 0.5) / (n_t + 0.5)), or 1e-6 when that is not positive

(``N`` chunks, ``n_t`` of them containing ``t``, ``f_t`` the column-weighted count of ``t`` in
the chunk), so a term adds less than ``idf(t) * (k1 + 1)`` to any chunk's score. MaxScore
(Turtle and Flood, 1995) splits the terms into *essential* ones (rare) and the *rest*
(common): when the rest's bounds add up to less than the k-th best score, a chunk holding only
common terms cannot enter the top k, and only chunks holding an essential term need scoring.

The scores themselves stay FTS5's: the chunks holding an essential and a common term are
ranked by ``(E) AND (R)`` (bm25 over every query term); those holding essential terms only
by ``E`` minus the former, where bm25 over ``E`` is their full score (an absent term adds 0).
This module only plans; :mod:`.knowledge` runs the queries.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

K1 = 1.2  # FTS5's bm25 constant (b = 0.75 does not enter the bound)
#: A term in more than this share of the chunks is "common": scoring all its chunks is what
#: makes a search slow, so it is left out of the first pass when the bound allows. Rarer terms
#: match few chunks, and scoring those exhaustively costs little.
COMMON_SHARE = 0.01
#: Relative and absolute slack on the comparison of the bound with an FTS5 score: the bound
#: is computed here in Python, the scores in C, with sums in another order.
SLACK = 1e-9


def idf(rows: int, hits: int) -> float:
    """FTS5's inverse document frequency of a term found in ``hits`` of ``rows`` chunks."""
    value = math.log((rows - hits + 0.5) / (hits + 0.5)) if rows > 0 else 0.0
    return value if value > 0 else 1e-6


def bound(rows: int, hits: int) -> float:
    """The most a term can add to any chunk's bm25 score."""
    return idf(rows, hits) * (K1 + 1)


def phrase_query(terms: list[str]) -> str:
    """``"a" OR "b"`` for word tokens (letters and digits only, so quoting is safe)."""
    return " OR ".join(f'"{term}"' for term in terms)


@dataclass
class Plan:
    """The essential terms (rarest first) and the rest with their bounds (rarest first)."""

    essential: list[str]
    rest: list[tuple[str, float]]

    @classmethod
    def of(cls, hits: dict[str, int], rows: int, exact: Iterable[str] | None = None) -> Plan:
        """Split a query's terms by how many chunks hold each: ``hits``, lower bounds.

        A term no chunk holds (a count of 0 among the ``exact`` ones, all when None) is left
        out of both parts: it matches nothing and adds 0 to every score, and as an essential
        term it would only make the first pass come up short.
        """
        counted = set(hits if exact is None else exact)
        kept = [term for term in hits if hits[term] > 0 or term not in counted]
        ordered = sorted(kept, key=lambda term: (hits[term], term))
        common = {term for term in ordered if hits[term] > COMMON_SHARE * rows}
        plan = cls(
            [term for term in ordered if term not in common],
            [(term, bound(rows, hits[term])) for term in ordered if term in common],
        )
        if not plan.essential and plan.rest:
            plan.promote()  # all common: the rarest still prunes the others
        return plan

    @property
    def useful(self) -> bool:
        """Both parts non-empty: there is something to skip and something to score."""
        return bool(self.essential and self.rest)

    def promote(self) -> None:
        """Move the rarest common term into the essential ones."""
        self.essential.append(self.rest.pop(0)[0])

    def fit(self, kth_score: float) -> bool:
        """Promote terms until the rest cannot reach ``kth_score``; False if none is left.

        ``kth_score`` is the k-th best score over the essential terms alone, a lower bound of
        the final k-th best score (a score only grows with more terms), so it stays valid
        while terms are promoted.
        """
        while self.rest:
            rest = sum(limit for _, limit in self.rest)
            if rest * (1 + SLACK) + SLACK < kth_score:
                return True
            self.promote()
        return False

    def queries(self) -> tuple[str, str]:
        """``(E) AND (R)`` and ``E``: between them, every chunk holding an essential term."""
        essential = phrase_query(self.essential)
        rest = phrase_query([term for term, _ in self.rest])
        return f"({essential}) AND ({rest})", essential
