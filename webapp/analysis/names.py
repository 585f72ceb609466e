"""Which of the backend's services a question names: exact, alias, partial, misspelt, unknown.

``resolve_services(text, services, aliases)`` reads the question in this order:

1. **exact** - a service's full name as a whole word, case-insensitive;
2. **alias** - a name the backend declares for it (non-ASCII aliases match as substrings);
3. **fuzzy** - a service-shaped token (``biling-service``) whose *stem* (the name without
   generic parts such as ``service``) is within ``FUZZY_THRESHOLD`` of a service's stem;
4. **partial** - a distinctive part of a service's name used as a word ("billing is slow"),
   also when misspelt by a letter or two (``PART_THRESHOLD``, ``MIN_TYPO_WORD``).

A misspelt name resolves only when one service is clearly closest (``CLEAR_MARGIN``). A
misspelt compound name (``core-boking``) is then read whole against every service's full name
(``WHOLE_NAME_EDITS``), so its parts cannot name two services; a name written against Chinese
text ("reportd报错了") is read as one word. A service-shaped token that resolves to nothing is
**unknown** and comes back with the closest names as suggestions.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA

#: Stem similarity (0-100) for a misspelt service-shaped token to resolve: "biling" vs
#: "billing" is 92, "ledgre" vs "ledger" 83; "search" vs "user" is 60.
FUZZY_THRESHOLD = 80.0
#: A single word must be this close to a distinctive name part (and at least
#: ``MIN_FUZZY_WORD`` letters long) to count: ordinary words sit well below it.
PART_THRESHOLD = 88.0
MIN_FUZZY_WORD = 5
#: A word at least this long that is one typo (a dropped, doubled, swapped or changed letter:
#: optimal-string-alignment distance 1) from a distinctive name part counts too: "loyalytd"
#: for "loyaltyd" scores only 87.5 on the ratio, since a swap costs two edits there.
MIN_TYPO_WORD = 6
#: A misspelt name resolves only when it is clearly closest: the runner-up must score at
#: least this much lower, else the caller offers both as suggestions instead of guessing.
CLEAR_MARGIN = 5.0
#: Suggestions offered for an unknown service.
SUGGESTIONS = 3

#: Parts of service names that identify no service on their own.
GENERIC_PARTS = frozenset(
    {
        *("service", "services", "svc", "api", "app", "server", "worker", "main", "primary"),
        *("the", "v1", "v2", "prod", "backend", "frontend", "srv"),
    }
)
#: Endings that make a hyphenated token look like a service name even when it is not one.
SERVICE_SUFFIXES = frozenset({"service", "svc", "api", "server", "worker", "db", "gateway"})

#: A misspelt compound name (``core-boking``) names the one service whose full name is at most
#: this many edits away (optimal string alignment: a dropped, doubled, swapped or changed
#: letter is one edit), and at most one edit per ``LETTERS_PER_EDIT`` letters of that name.
WHOLE_NAME_EDITS = 2
LETTERS_PER_EDIT = 5
_COMPOUND = re.compile(r"(?<![\w-])[a-z][a-z0-9]*(?:[-_.][a-z0-9]+)+(?![\w-])", re.I)
_TOKEN = re.compile(r"[a-z][a-z0-9]*(?:[-_.][a-z0-9]+)+|[a-z][a-z0-9]+", re.I)
_PARTS = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class NameMatch:
    """A service the question names, how it was recognised, and the text that named it."""

    service: str
    how: str  # exact | alias | fuzzy | partial
    text: str
    score: float = 100.0


@dataclass(frozen=True)
class UnknownName:
    """A service-shaped name that is not one of the backend's, with the closest real ones."""

    text: str
    suggestions: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Resolution:
    """Every service the question names (in the order named) and every unknown name."""

    matches: list[NameMatch]
    unknown: list[UnknownName]

    @property
    def services(self) -> list[str]:
        """The services named, first mention first, without repeats."""
        return list(dict.fromkeys(m.service for m in self.matches))


def _resolve_words(
    text: str, services: Sequence[str], aliases: Mapping[str, Sequence[str]], known: set[str]
) -> tuple[list[NameMatch], list[UnknownName]]:
    """Steps 1-4 of the module docstring, token by token."""
    lowered = text.lower()
    found: list[tuple[int, NameMatch]] = []
    for service in services:
        if (at := _word_at(lowered, service.lower())) >= 0:
            found.append((at, NameMatch(service, "exact", service)))
    for service, names in aliases.items():
        if service not in services or any(m.service == service for _, m in found):
            continue
        for name in sorted(names, key=len, reverse=True):
            spelt = name.lower()
            at = _word_at(lowered, spelt) if name.isascii() else lowered.find(spelt)
            if at >= 0:
                found.append((at, NameMatch(service, "alias", name)))
                break
    unknown: list[UnknownName] = []
    masked = text  # the text without its unknown names, for the partial matching below
    taken = {m.service for _, m in found}
    for token in _TOKEN.finditer(text):
        word = token.group(0)
        if not _service_shaped(word) or word.lower() in known:
            continue
        best = _closest_stem(word, [s for s in services if s not in taken])
        if best is not None:
            found.append((token.start(), NameMatch(best[0], "fuzzy", word, best[1])))
            taken.add(best[0])
        else:
            unknown.append(UnknownName(word, suggest(word, services)))
            masked = masked[: token.start()] + " " * len(word) + masked[token.end() :]
    if not found:
        found = _partial(masked, services)
    found.sort(key=lambda item: item[0])
    return [m for _, m in found], unknown


def resolve_services(
    text: str, services: Sequence[str], aliases: Mapping[str, Sequence[str]] | None = None
) -> Resolution:
    """The services ``text`` names among ``services`` (see the module docstring)."""
    text = _apart(text)
    aliases = {
        service: [_apart(name) for name in names] for service, names in (aliases or {}).items()
    }
    known = {s.lower() for s in services}
    known |= {a.lower() for names in aliases.values() for a in names}
    matches, unknown = _resolve_words(text, services, aliases, known)
    for token in _COMPOUND.finditer(text):
        word = token.group(0)
        if word.lower() in known or any(m.text == word for m in matches if m.how != "partial"):
            continue
        closest = _closest_whole(word, services)
        reported = any(u.text == word for u in unknown)  # unknown by steps 1-4 already
        if not closest or (reported and len(closest) > 1):
            continue
        unknown = [u for u in unknown if u.text != word]
        parts = set(_PARTS.findall(word.lower()))
        from_parts = [m for m in matches if m.how == "partial" and m.text.lower() in parts]
        at = matches.index(from_parts[0]) if from_parts else len(matches)
        matches = [m for m in matches if m not in from_parts]
        if len(closest) > 1:
            unknown.append(UnknownName(word, closest))
        elif all(m.service != closest[0] for m in matches):
            score = float(fuzz.ratio(word.lower(), closest[0].lower()))
            matches.insert(at, NameMatch(closest[0], "fuzzy", word, score))
    return Resolution(matches, unknown)


_CJK = "\u3000-\u303f\u3400-\u9fff\uff00-\uffef"
_SCRIPT_EDGE = re.compile(rf"(?<=[A-Za-z0-9])(?=[{_CJK}])|(?<=[{_CJK}])(?=[A-Za-z0-9])")


def _apart(text: str) -> str:
    """``text`` with a space wherever Chinese meets a Latin letter or digit."""
    return _SCRIPT_EDGE.sub(" ", text)


def _closest_whole(word: str, services: Sequence[str]) -> list[str]:
    """The services whose full name is nearest ``word`` within the edit bound (ties: all)."""
    spelt = re.sub(r"[_.]", "-", word.lower())
    distances: dict[str, int] = {}
    for service in services:
        name = re.sub(r"[_.]", "-", service.lower())
        bound = min(WHOLE_NAME_EDITS, max(1, len(name) // LETTERS_PER_EDIT))
        distance = OSA.distance(spelt, name, score_cutoff=bound)
        if distance <= bound:
            distances[service] = distance
    best = min(distances.values(), default=0)
    return [s for s, d in distances.items() if d == best]


def suggest(name: str, services: Sequence[str], limit: int = SUGGESTIONS) -> list[str]:
    """The ``limit`` services closest to ``name`` (normalised Levenshtein ratio), best first."""
    ranked = process.extract(name.lower(), list(services), scorer=fuzz.ratio, limit=limit)
    return [choice for choice, _score, _index in ranked]


def stem(name: str) -> str:
    """``billing-service`` -> ``billing``: the name without its generic parts."""
    parts = [p for p in _PARTS.findall(name.lower()) if p not in GENERIC_PARTS]
    return "-".join(parts) or name.lower()


def _word_at(text: str, name: str) -> int:
    match = re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text)
    return match.start() if match else -1


def _service_shaped(word: str) -> bool:
    parts = _PARTS.findall(word.lower())
    return len(parts) > 1 and parts[-1] in SERVICE_SUFFIXES


def _closest_stem(word: str, services: Sequence[str]) -> tuple[str, float] | None:
    stems = {stem(s): s for s in services}
    ranked = process.extract(stem(word), list(stems), scorer=fuzz.ratio, limit=2)
    if not ranked or ranked[0][1] < FUZZY_THRESHOLD:
        return None
    best, score = ranked[0][0], float(ranked[0][1])
    if len(ranked) > 1 and score < 100 and score - ranked[1][1] < CLEAR_MARGIN:
        return None  # two names are about as close: suggest them, do not pick one
    return stems[best], score


def _partial(text: str, services: Sequence[str]) -> list[tuple[int, NameMatch]]:
    """Services whose distinctive name part the question uses as a word (maybe misspelt)."""
    words = [(m.start(), m.group(0)) for m in _PARTS.finditer(text.lower())]
    found: list[tuple[int, NameMatch]] = []
    for service in services:
        parts = [
            p for p in _PARTS.findall(service.lower()) if p not in GENERIC_PARTS and len(p) > 2
        ]
        hit = _part_hit(words, parts)
        if hit is not None:
            found.append((hit[0], NameMatch(service, "partial", hit[1], hit[2])))
    return found


def _part_hit(words: list[tuple[int, str]], parts: list[str]) -> tuple[int, str, float] | None:
    for at, word in words:
        for part in parts:
            if word in (part, part + "s", part + "es") or word.rstrip("s") == part:
                return at, word, 100.0
    for at, word in words:
        if len(word) < MIN_FUZZY_WORD:
            continue
        for part in parts:
            score = fuzz.ratio(word, part)
            if len(part) >= MIN_FUZZY_WORD and score >= PART_THRESHOLD:
                return at, word, float(score)
            if len(word) >= MIN_TYPO_WORD and OSA.distance(word, part) <= 1:
                return at, word, float(score)
    return None


# -- services described in words --------------------------------------------------------------

#: A question word at least this long matches a description word by fuzzy ratio (``saving`` and
#: ``saves`` share a stem; ``couriers`` and ``courier`` differ by a letter).
MIN_DESCRIBED_WORD = 4
DESCRIBED_THRESHOLD = 85.0
#: Words that say nothing about which service is meant (a question's frame, not its subject).
_FRAME_WORDS = (
    "the a an and or of to for from in on at by with since about around is are was were be "
    "been being do does did not no can cant cannot won wont isn aren don doesn didn t s it its "
    "this that these those what why how when who which there here we our us you your they "
    "their them people users customers anyone someone anything something happened happening "
    "going wrong broken broke work working stopped keep keeps still any some all every "
    "am pm utc today yesterday morning minutes hour hours ago now please help look"
)
_FRAME = frozenset(_FRAME_WORDS.split())
_LATIN_WORD = re.compile(r"[a-z][a-z0-9]*")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")


def describe_terms(text: str) -> set[str]:
    """The words of ``text`` that can say which service is meant: Latin words (plural and
    verb endings cut) outside ``_FRAME``, and every pair of adjacent Chinese characters
    (Chinese has no spaces; a two-character word is the common unit)."""
    terms = {_cut(w) for w in _LATIN_WORD.findall(text.lower()) if w not in _FRAME and len(w) > 2}
    for run in _HAN.findall(text):
        terms.update(run[i : i + 2] for i in range(len(run) - 1))
    return terms


def _cut(word: str) -> str:
    for ending in ("ing", "ies", "es", "ed", "s"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def described_services(
    text: str, descriptions: Mapping[str, Sequence[str]]
) -> list[tuple[str, float]]:
    """Services whose descriptions share words with ``text``, best first, with a score.

    Each shared term counts by how rare it is among the descriptions (a word in every
    description tells nothing); a Latin word also matches a close spelling
    (``DESCRIBED_THRESHOLD``). Ties are kept.
    """
    asked = describe_terms(text)
    terms = {s: describe_terms(" ".join(d)) for s, d in descriptions.items()}
    frequency = Counter(term for found in terms.values() for term in found)
    ranked = []
    for service, found in terms.items():
        score = sum(1.0 / frequency[t] for t in _shared(asked, found))
        if score > 0:
            ranked.append((service, round(score, 3)))
    ranked.sort(key=lambda item: (-item[1], item[0]))
    return ranked


def _shared(asked: set[str], found: set[str]) -> set[str]:
    """The description's terms that ``asked`` uses, exactly or (Latin words) nearly."""
    latin = [w for w in asked if w.isascii() and len(w) >= MIN_DESCRIBED_WORD]
    near = {
        term
        for term in found
        if term.isascii()
        and len(term) >= MIN_DESCRIBED_WORD
        and any(fuzz.ratio(w, term) >= DESCRIBED_THRESHOLD for w in latin)
    }
    return (asked & found) | near
