"""Which log lines are one event: their constant words, grouped by longest common subsequence.

A line's *constant words* are its words (split on whitespace and ``|``) less those that look
like values: a word holding a digit, a path (holds ``/``), a bracketed or quoted atom, the value
of a ``key=value`` word (``user=root`` counts as ``user=``), a quoted ``key="..."`` value, a
parenthesised stretch holding a digit, and a bracket's padding (``[    1.703194]``).

``group`` joins word sequences first-fit, in order: a sequence joins the first event whose first
sequence shares a longest common subsequence of ``SIMILARITY`` of the longer one (Spell's merge
rule). Short events whose first sequences are alike but for one position that takes
``SLOT_VALUES`` or more distinct words are then one event, that position a value.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence

from rapidfuzz.distance import LCSseq

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
    event_of: dict[Words, int] = {}
    started: list[Words] = []  # each event's first sequence
    for words in dict.fromkeys(sequences):
        similar = (n for n, first in enumerate(started) if _similar(words, first))
        event_of[words] = next(similar, len(started))
        if event_of[words] == len(started):
            started.append(words)
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


def _similar(words: Words, first: Words) -> bool:
    """Whether the longest common subsequence covers ``SIMILARITY`` of the longer sequence."""
    return LCSseq.similarity(words, first) >= SIMILARITY * max(len(words), len(first))
