"""Text the renderer writes around validated content: sentences, shortening, citation chips,
and signal names as words."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

#: At most this many citation chips follow one sentence.
MAX_CHIPS = 3

_SENTENCE_END = re.compile(r"[.!?](?=\s)|[。！？]")
_CLAUSE_END = re.compile(r"[;:,](?=\s)|[；：，、]")
_TOKEN = re.compile(r"\d+(?:[.:]\d+)*|[A-Za-z][A-Za-z0-9-]{2,}|[\u3400-\u4dbf\u4e00-\u9fff]")
_CLOCK = re.compile(r"(?<!\d)(\d{1,2}):(\d{2})")
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[_.:][A-Za-z0-9]+)+")
_UNITS = {
    "ms": "ms",
    "seconds": "s",
    "sec": "s",
    "bytes": "bytes",
    "percent": "%",
    "pct": "%",
    "ratio": "ratio",
}
_COUNTER = ("total", "count")
_PER = {"s": "second", "sec": "second", "seconds": "second", "min": "minute", "m": "minute"}


def sentences(text: str) -> list[str]:
    """``text`` split into sentences; a full stop inside a quotation ends none."""
    flat = " ".join(str(text or "").split())
    found, start = [], 0
    for match in _SENTENCE_END.finditer(flat):
        before = flat[: match.start()]
        if before.count('"') % 2 == 0 and before.count("“") <= before.count("”"):
            found.append(flat[start : match.end()].strip())
            start = match.end()
    found.append(flat[start:].strip())
    return [s for s in found if s]


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (all of it when it has one sentence)."""
    return next(iter(sentences(text)), "")


def rest_after_first(text: str) -> str:
    """``text`` without its first sentence."""
    flat = " ".join(str(text or "").split())
    return flat[len(first_sentence(flat)) :].strip()


def shorten(text: str, width: int = 240) -> str:
    """``text`` on one line; when longer than ``width``, cut at a sentence, clause or word end."""
    flat = " ".join(str(text).split())
    if len(flat) <= width:
        return flat
    head = flat[: width - 1]
    for pattern in (_SENTENCE_END, _CLAUSE_END):
        ends = [m.end() for m in pattern.finditer(head) if m.end() >= width // 2]
        if ends:
            return head[: ends[-1]].rstrip(",;:，；：、 ") + " …"
    space = head.rfind(" ")
    return (head[:space] if space >= width // 2 else head).rstrip() + " …"


def _tokens(text: str) -> dict[str, int]:
    """Tokens of ``text``; numbers and clock times weigh three times a word."""
    lowered = str(text).lower()
    found = {f"{int(h):02d}:{m}": 3 for h, m in _CLOCK.findall(lowered)}
    for token in _TOKEN.findall(lowered):
        found[token] = 3 if token[0].isdigit() else 1
    return found


def cited_chips(
    statement: str,
    ids: Sequence[str],
    evidence: Mapping[str, Mapping[str, Any]],
    *,
    services: Mapping[str, str | None] | None = None,
) -> list[str]:
    """At most :data:`MAX_CHIPS` of ``ids``: those sharing most with the text."""
    known = [i for i in dict.fromkeys(ids) if i in evidence]
    if len(known) <= MAX_CHIPS:
        return known
    wanted = _tokens(statement)

    def rank(ident: str) -> tuple[int, int, int]:
        have = _tokens(str(evidence[ident].get("evidence_excerpt") or ""))
        shared = sum(weight for token, weight in wanted.items() if token in have)
        reference = evidence[ident].get("role") == "reference"
        return (int(reference), -shared, known.index(ident))

    ranked = sorted(known, key=rank)
    of = services or {}
    named = sorted({s for i in known if (s := of.get(i)) and s in statement}, key=statement.index)
    chosen = [next(i for i in ranked if of.get(i) == service) for service in named]
    chosen = list(dict.fromkeys(chosen))[:MAX_CHIPS]
    chosen += [i for i in ranked if i not in chosen][: MAX_CHIPS - len(chosen)]
    return [i for i in known if i in chosen]


def signal_words(name: str) -> str:
    """``error_rate`` -> "error rate", ``latency_p99_ms`` -> "latency p99 (ms)"."""
    parts = [p for p in re.split(r"[_.:]+", str(name)) if p]
    if len(parts) < 2:
        return str(name)
    if len(parts) > 2 and parts[-2].lower() == "per":
        return " ".join([*parts[:-1], _PER.get(parts[-1].lower(), parts[-1])])
    unit = _UNITS.get(parts[-1].lower())
    if unit or parts[-1].lower() in _COUNTER:
        parts = parts[:-1]
    words = " ".join(parts)
    return f"{words} ({unit})" if unit else words


def is_identifier(text: str) -> bool:
    """True for a bare identifier such as a metric name (``db_pool_pending_requests``)."""
    return _IDENTIFIER.fullmatch(str(text).strip()) is not None
