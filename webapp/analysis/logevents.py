"""Which log lines are one event: their constant words, grouped by longest common subsequence.

A line's *constant words* are its words (split on whitespace and ``|``) less the ones that look
like values: a word holding a digit (numbers, ids, hex counters, addresses, ``host:port``,
``sshd[812]:``), a path (holds ``/``), a bracketed or quoted atom (``[tribe]``, ``"users"``), and
the value of a ``key=value`` word (``user=root`` counts as ``user=``). Three stretches wider than
a word are values too: a quoted ``key="..."`` value (``err="back-off 5m0s restarting failed
container"`` counts as ``err=``), a parenthesised stretch holding a digit (``(elapsed 0.001
seconds)``, ``(1.16 KB)``, a remote server's reply), and a bracket's padding (``[    1.703194]``,
a kernel timestamp, is one value whatever its width). Where values sit and how many tokens they
take play no part, so "N bytes sent" and "N bytes (1.16 KB) sent" keep the same words, a client
address or pid as the first token is no branch, hex counters are values whatever their letters,
and masked values never raise a similarity score.

``group`` then joins word sequences first-fit, in order: a sequence joins the first event whose
first sequence shares a longest common subsequence of ``SIMILARITY`` of the longer one (the
merge rule of Spell, Du and Li 2016, on constant words). That absorbs words that vary without
digits in longer messages (user names, module names, an optional ``referer:``), while messages
of five words or fewer that differ in one ("device X entered/left promiscuous mode", the GET
and POST lines of one access log) stay apart. Last, such short events whose first sequences are
alike but for one position that takes ``SLOT_VALUES`` or more distinct words are one event, that
position a value ("Loaded extension: X" for fourteen extensions): the column-cardinality rule of
frequency-based parsers. Two or three words there (enabled/disabled, Starting/Ending) are as
often different statements as values of one, and stay apart.

What was chosen on what: the value rules, ``SIMILARITY`` and ``SLOT_VALUES`` were chosen on the
regression set in ``tests/webapp/analysis/logs`` (about 2,800 real lines of 24 systems from
public repositories, every line labelled with its event; its README says how), with ``make
bench-analysis`` and sweeps of ``SIMILARITY`` 0.75-0.9 (0.81-0.83 is one plateau: 0.8 also joins
five-word messages that differ in a word, 0.835 splits six-word ones) and of ``SLOT_VALUES`` 3-8
or none (5-7 score alike), so its 0.90 mean grouping accuracy is in-sample. A floor on common
words (2-4 tried) changes nothing at this ``SIMILARITY``: sequences of five words or fewer
already join only when equal. Rules that lost on that set and are not used: punctuation-only
tokens as values; dotted, underscored or camelCase identifiers as values (loggers then no longer
tell events apart); keeping the letters of words holding digits (``vethdb09d2a`` then splits an
event); a first word that must match; a two-position slot rule; identifier-like words weighed
less. The public LogHub benchmark was not used for any choice, so it stays a held-out measure.

Why not drain3: plain drain3 scores 0.68 on that set, and on its 11 Filebeat systems drain3 on
our masks scored 0.49-0.55 (similarity 0.4-0.7, depth 3-4) and drain3 fed these constant words
0.57-0.69: it only compares lines of the same token count, so every event whose length varies
splits.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence
from operator import itemgetter

#: Share of the longer word sequence that the longest common subsequence must cover: one word
#: in six may differ, two in twelve.
SIMILARITY = 0.82
#: Distinct words one position must take, among events alike everywhere else, to be a value.
SLOT_VALUES = 6

Words = tuple[str, ...]

_SPLIT = re.compile(r"[\s|]+")
_DIGIT = re.compile(r"\d")
_SPACE = re.compile(r"\s")
_ATOM = re.compile(r"[\[\"'(<{].*[\]\"')>}][:,;.]?")
_PADDED = re.compile(r"([\[(]) +")
_QUOTED_VALUE = re.compile(r"""=(?:"(?:[^"\\]|\\.)*"|'[^']*')""")
_PARENTHESISED = re.compile(r"\((?:[^()]|\([^()]*\))*\)")


def constant_words(message: str) -> Words:
    """The words of ``message`` that are not values (see the module docstring)."""
    message = _PADDED.sub(r"\1", message)
    message = _QUOTED_VALUE.sub("=", message)
    message = _PARENTHESISED.sub(_parenthesised_value, message)
    words = []
    for token in _SPLIT.split(message):
        key, equals, value = token.partition("=")
        if equals and key and value:
            token = key + equals
        if token and not is_value(token):
            words.append(token)
    return tuple(words)


def _parenthesised_value(match: re.Match[str]) -> str:
    """A parenthesised stretch of words holding a digit, as no word at all."""
    text = match.group()
    return " " if _DIGIT.search(text) and _SPACE.search(text) else text


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
    firsts: dict[int, list[tuple[int, Words, frozenset[str]]]] = defaultdict(list)
    event_of: dict[Words, int] = {}
    started: list[Words] = []
    for words in dict.fromkeys(sequences):
        found = _first_similar(words, firsts)
        if found is None:
            found = len(started)
            started.append(words)
            firsts[len(words)].append((found, words, frozenset(words)))
        event_of[words] = found
    joined = _join_slots(started)
    renumbered: dict[int, int] = {}
    return [renumbered.setdefault(joined[event_of[words]], len(renumbered)) for words in sequences]


def _join_slots(firsts: list[Words]) -> list[int]:
    """For each event (its first sequence, by number) the event it is one with: events whose
    first sequences are alike but for one position that takes ``SLOT_VALUES`` distinct words
    among them are one event, and that position a value."""
    root = list(range(len(firsts)))

    def find(event: int) -> int:
        while root[event] != event:
            root[event] = root[root[event]]
            event = root[event]
        return event

    slots: dict[tuple[int, Words], list[int]] = defaultdict(list)
    for event, words in enumerate(firsts):
        # A one-word message has nothing else to be alike in ("started", "stopped"), and from
        # six words up SIMILARITY has already joined sequences that differ in one position.
        if len(words) > 1 and len(words) - 1 < SIMILARITY * len(words):
            for i in range(len(words)):
                slots[i, words[:i] + words[i + 1 :]].append(event)
    for events in slots.values():
        if len(events) >= SLOT_VALUES:
            for event in events[1:]:
                root[find(event)] = find(events[0])
    return [find(event) for event in range(len(firsts))]


def _first_similar(
    words: Words, firsts: dict[int, list[tuple[int, Words, frozenset[str]]]]
) -> int | None:
    """The lowest-numbered event whose first sequence ``words`` is similar to, if any."""
    lengths = range(math.ceil(len(words) * SIMILARITY), math.floor(len(words) / SIMILARITY) + 1)
    candidates = sorted((c for n in lengths for c in firsts.get(n, ())), key=itemgetter(0))
    for event, first, vocabulary in candidates:
        need = SIMILARITY * max(len(words), len(first))
        # Only the words the first sequence also holds can be common: a cheap bound first.
        if (
            sum(map(vocabulary.__contains__, words)) >= need
            and _common_length(words, first) >= need
        ):
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
