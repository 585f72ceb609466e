"""Which log lines are one event: their constant words, grouped by longest common subsequence.

A line's *constant words* are its words (split on whitespace and ``|``) less the ones that look
like values: a word holding a digit (numbers, ids, hex counters, addresses, ``host:port``,
``sshd[812]:``), a path (holds ``/``), a bracketed or quoted atom (``[tribe]``, ``"users"``), and
the value of a ``key=value`` word (``user=root`` counts as ``user=``). Where values sit and how
many tokens they take play no part, so "N bytes sent" and "N bytes (1.16 KB) sent" keep the same
words, a client address or pid as the first token is no branch, hex counters are values
whatever their letters, and masked values never raise a similarity score.

``group`` then joins word sequences first-fit, in order: a sequence joins the first event whose
first sequence shares a longest common subsequence of at least ``MIN_COMMON`` words and
``SIMILARITY`` of the longer one (the merge rule of Spell, Du and Li 2016, on constant words).
That absorbs words that vary without digits (user names, module names, an optional
``referer:``), while short distinct messages ("started" / "stopped") stay apart.

Why not drain3: on the regression set in ``tests/webapp/analysis/logs`` (real logs of 11
systems, every line labelled with its event; figures from ``make bench-analysis`` and a sweep of
the settings below) plain drain3 scores 0.57 mean grouping accuracy, drain3 on our masks
0.49-0.55 (similarity 0.4-0.7, depth 3-4) and drain3 fed these constant words 0.57-0.69: it
only compares lines of the same token count, so every event whose length varies splits. This
scores 0.95 with one setting. ``SIMILARITY`` (0.6-0.8 tried) and ``MIN_COMMON`` (3-4) were
chosen on that set, and so were the value rules above; the public LogHub benchmark was not used,
so it stays a held-out measure.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import count
from operator import itemgetter

#: Share of the longer word sequence that the longest common subsequence must cover.
SIMILARITY = 0.8
#: Fewest common words for two different sequences to be one event.
MIN_COMMON = 3

Words = tuple[str, ...]

_SPLIT = re.compile(r"[\s|]+")
_DIGIT = re.compile(r"\d")
_ATOM = re.compile(r"[\[\"'(<{].*[\]\"')>}][:,;.]?")


def constant_words(message: str) -> Words:
    """The words of ``message`` that are not values (see the module docstring)."""
    words = []
    for token in _SPLIT.split(message):
        key, equals, value = token.partition("=")
        if equals and key and value:
            token = key + equals
        if token and not is_value(token):
            words.append(token)
    return tuple(words)


def is_value(word: str) -> bool:
    """True when ``word`` looks like a value: a digit, a path, a bracketed or quoted atom."""
    return (
        _DIGIT.search(word) is not None
        or "/" in word
        or (len(word) > 2 and _ATOM.fullmatch(word) is not None)
    )


def group(sequences: Sequence[Words]) -> list[int]:
    """The event number of each word sequence, numbered in order of first appearance."""
    # Each event's first sequence, filed by length: only lengths within SIMILARITY of a
    # sequence's own can share enough of it.
    firsts: dict[int, list[tuple[int, Words, Counter[str]]]] = defaultdict(list)
    event_of: dict[Words, int] = {}
    numbers = count()
    for words in dict.fromkeys(sequences):
        found = _first_similar(words, firsts)
        if found is None:
            found = next(numbers)
            firsts[len(words)].append((found, words, Counter(words)))
        event_of[words] = found
    return [event_of[words] for words in sequences]


def _first_similar(
    words: Words, firsts: dict[int, list[tuple[int, Words, Counter[str]]]]
) -> int | None:
    """The lowest-numbered event whose first sequence ``words`` is similar to, if any."""
    if len(words) < MIN_COMMON:
        return None
    lengths = range(math.ceil(len(words) * SIMILARITY), math.floor(len(words) / SIMILARITY) + 1)
    candidates = sorted((c for n in lengths for c in firsts.get(n, ())), key=itemgetter(0))
    counts = Counter(words)
    for event, first, first_counts in candidates:
        need = max(MIN_COMMON, SIMILARITY * max(len(words), len(first)))
        # The words both hold (with repeats) bound the common subsequence: a cheap test first.
        if (counts & first_counts).total() >= need and _common_length(words, first) >= need:
            return event
    return None


def _common_length(a: Words, b: Words) -> int:
    """Length of the longest common subsequence of ``a`` and ``b``."""
    previous = [0] * (len(b) + 1)
    for word in a:
        current = [0]
        for j, other in enumerate(b):
            current.append(previous[j] + 1 if word == other else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]
