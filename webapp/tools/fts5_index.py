"""Reading an FTS5 table's own index with plain SQL: each term's (chunk, weighted count)
pairs from ``fts5vocab``'s instance table, each chunk's length from the ``docsize`` shadow table
(varints decoded by numpy), and the row count and token total from the ``averages`` record.

What :mod:`webapp.tools.term_scores` keeps in memory is built from these reads; the records'
layout is FTS5's (its ``fts5_index.c`` and ``fts5_storage.c``): one varint per column in a
docsize row, the row count then one total per column in the averages record.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

Ids = npt.NDArray[np.int32]
Freqs = npt.NDArray[np.float32]
Floats = npt.NDArray[np.float64]
COLUMN_BITS = 3  # a position's column index, packed under its chunk id by the full read


def term_pairs(
    conn: sqlite3.Connection, table: str, token: str, column: str, weights: Floats
) -> tuple[Ids, Freqs, int]:
    """``token``'s pairs in ``conn``'s snapshot (its vocabulary table is made by
    :meth:`~webapp.tools.term_scores.TermScores.prepare`)."""
    (codes,) = conn.execute(
        f"SELECT group_concat(doc << {COLUMN_BITS} | {column}) FROM temp.{table}_instance "
        "WHERE term = ?",
        (token,),
    ).fetchone()
    count = codes.count(",") + 1 if codes else 0
    return pairs([(token, count)], codes or "", weights)[token]


def lengths(
    conn: sqlite3.Connection, table: str, columns: int
) -> tuple[npt.NDArray[np.int64], Floats]:
    """Every chunk's rowid and tokens (all columns), from FTS5's docsize, decoded by numpy."""
    listed, sizes = conn.execute(
        f"SELECT group_concat(id), group_concat(hex(sz), '') FROM {table}_docsize"
    ).fetchone()
    ids = np.fromstring(listed, dtype=np.int64, sep=",") if listed else np.empty(0, np.int64)
    data = np.frombuffer(bytes.fromhex(sizes or ""), dtype=np.uint8)
    # A varint's bytes hold 7 bits each, most significant first; the last is below 0x80.
    ends = np.flatnonzero(data < 0x80)
    if len(ends) != columns * len(ids) or (len(data) and data[-1] >= 0x80):
        rows = docsizes(conn, table, None)  # not one varint a column: decoded one by one
        return np.array([rowid for rowid, _ in rows], dtype=np.int64), np.array(
            [size for _, size in rows], dtype=np.float64
        )
    starts = np.concatenate([[0], ends[:-1] + 1]).astype(np.int64)
    owner = np.repeat(ends, ends - starts + 1)
    shifted = (data & 0x7F).astype(np.int64) << (7 * (owner - np.arange(len(data))))
    values = np.add.reduceat(shifted, starts) if len(data) else np.zeros(0, np.int64)
    return ids, values.reshape(len(ids), columns).sum(axis=1).astype(np.float64)


def identity(conn: sqlite3.Connection) -> tuple[int, str]:
    """The generation and the nonce of ``conn``'s snapshot of the index."""
    meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('generation', 'nonce')"))
    return int(meta.get("generation", -1)), str(meta.get("nonce", ""))


def term_ranges(
    counts: list[tuple[str, int]], known: dict[str, Any], positions: int
) -> Iterator[list[tuple[str, int]]]:
    """``counts`` (term, positions) in runs of about ``positions`` positions.

    A run ends before a term of ``known`` (looked up as the runs are made: it may grow
    meanwhile), which is left out: a run's terms are all the index has from its first to
    its last.
    """
    batch: list[tuple[str, int]] = []
    size = 0
    for term, count in counts:
        if term in known:
            if batch:
                yield batch
            batch, size = [], 0
            continue
        batch.append((term, count))
        size += count
        if size >= positions:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def pairs(
    batch: list[tuple[str, int]], codes: str, weights: Floats
) -> dict[str, tuple[Ids, Freqs, int]]:
    """The pairs of ``batch``'s terms from their positions (``chunk << 3 | column``, in order)."""
    packed = np.fromstring(codes, dtype=np.int64, sep=",") if codes else np.empty(0, np.int64)
    counts = np.array([count for _, count in batch], dtype=np.int64)
    if len(packed) != counts.sum():
        raise ValueError("fts5vocab's positions disagree with its term counts")
    chunks = packed >> COLUMN_BITS
    term = np.repeat(np.arange(len(batch)), counts)
    starts = np.ones(len(packed), dtype=np.bool_)
    starts[1:] = (chunks[1:] != chunks[:-1]) | (term[1:] != term[:-1])
    first = np.flatnonzero(starts)
    ids, owner = chunks[first], term[first]
    if np.any((ids[1:] <= ids[:-1]) & (owner[1:] == owner[:-1])):
        raise ValueError("fts5vocab's positions are not in chunk order")
    freqs = (
        np.add.reduceat(weights[packed & ((1 << COLUMN_BITS) - 1)], first)
        if len(first)
        else np.zeros(0)
    )
    bounds = np.searchsorted(owner, np.arange(len(batch) + 1))
    ids32, freqs32 = ids.astype(np.int32), freqs.astype(np.float32)
    return {
        name: (ids32[bounds[n] : bounds[n + 1]], freqs32[bounds[n] : bounds[n + 1]], 0)
        for n, (name, _) in enumerate(batch)
    }


def column_index(columns: list[str]) -> str:
    """SQL mapping fts5vocab's ``col`` (a column name) to the column's index."""
    cases = " ".join(f"WHEN '{name}' THEN {n}" for n, name in enumerate(columns))
    return f"(CASE col {cases} END)"


def varints(data: bytes) -> Iterator[int]:
    """The varints of ``data`` in order (FTS5's docsize and averages records; < 2**56)."""
    value = 0
    for byte in data:
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            yield value
            value = 0


def docsizes(
    conn: sqlite3.Connection, table: str, ids: list[int] | None
) -> list[tuple[int, float]]:
    """(rowid, tokens in all columns) of ``ids`` (all chunks when None), from FTS5's docsize."""
    query = f"SELECT id, sz FROM {table}_docsize"
    if ids is None:
        rows = conn.execute(query).fetchall()
    else:
        rows = conn.execute(f"{query} WHERE id IN ({','.join('?' * len(ids))})", ids).fetchall()
    return [(rowid, float(sum(varints(size)))) for rowid, size in rows]


def averages(conn: sqlite3.Connection, table: str) -> tuple[int, int]:
    """FTS5's row count and token total (all columns), from its averages record."""
    row = conn.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    if row is None or not row[0]:
        return 0, 0
    rows, *totals = varints(row[0])
    return rows, sum(totals)
