"""Reading an answer the way a person does: its conclusion, the services it names, its clock
times and its quantities.

* **Conclusion**: Markdown escapes and HTML entities undone; citation chips (``[E3]``) and the
  echoed question removed wherever they appear; then every section is kept except those a
  reader skips for a verdict - evidence lists, recommendations/next steps, limitations,
  sources (English and Chinese headings). Bullets that quote a runbook (``runbooks/...`` or a
  ``reference`` source) are dropped: reference text is not a conclusion. The window line
  (``**Window:** ...``) and the limitations are kept apart as the answer's *limits*, read only
  for what it says about the data's range.
* **Names**: a catalog service or a declared alias, on token boundaries (a name inside a longer
  name or a metric does not count); Chinese aliases anywhere.
* **Clock times**: ``10:42``, ``10:42:07``, ``2027-03-12T10:42:00Z``, ``10am``, ``10点42分``.
* **Quantities**: numbers with a unit (``4.3 s``, ``181 ms``, ``14%``, ``1.2 GiB``, ``85/s``,
  ``1,024 open files``), and ``a -> b`` changes (``→``, ``to``, ``升至``, ...) whose ends may be
  bare numbers; identifiers (``p99``, ``5xx``, ``v2.14.0``), times and dates are not numbers.
"""

from __future__ import annotations

import html
import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>~])")
_CHIP = re.compile(r"\s*\[E\d+\]")
_HEADING = re.compile(r"^\s*(#{1,6})\s+(.*)$")
_SKIP = re.compile(
    r"evidence|recommend|next steps|source|reference|runbook|证据|建议|后续|下一步|参考|来源", re.I
)
_LIMITS = re.compile(r"limitation|caveat|局限|限制", re.I)
_ITALIC = re.compile(r"\s*_.*_\s*")
_ECHO = re.compile(r"^\s*\*\*(question|问题)\s*[:：]?\*\*", re.I)
_WINDOW = re.compile(r"^\s*\*\*(window|时间范围|窗口)\s*[:：]?\*\*", re.I)
_QUOTED_REFERENCE = re.compile(r"`runbooks/|\(reference|\(参考|\(uploaded", re.I)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|[。！？；\n]+")


@dataclass(frozen=True)
class Reading:
    """The parts of an answer a verdict reads."""

    conclusion: str
    limits: str


def plain(text: str) -> str:
    """``text`` without Markdown escapes, HTML entities and citation chips."""
    return _CHIP.sub("", html.unescape(_ESCAPE.sub(r"\1", text)))


def read(answer: str | None, question: str = "") -> Reading:
    """The conclusion and the limits of ``answer`` to ``question``."""
    kept: list[str] = []
    limits: list[str] = []
    section = "keep"
    asked = plain(question).strip()
    for line in plain(answer or "").splitlines():
        if asked:
            line = line.replace(asked, " ")
        heading = _HEADING.match(line)
        if heading:
            title = heading.group(2)
            section = (
                "limits" if _LIMITS.search(title) else "skip" if _SKIP.search(title) else "keep"
            )
            if section == "keep":
                kept.append(title)
        elif _WINDOW.match(line) or section == "limits":
            limits.append(line)
        elif not (
            section == "skip"
            or _ECHO.match(line)
            or _QUOTED_REFERENCE.search(line)
            or _ITALIC.fullmatch(line)
        ):
            kept.append(line)
    return Reading("\n".join(kept).strip(), "\n".join(limits).strip())


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences (a decimal point or a host name does not end one)."""
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def names_in(text: str, services: Sequence[str], aliases: Mapping[str, Iterable[str]]) -> set[str]:
    """The services ``text`` names, by name or declared alias."""
    found = set()
    lowered = text.lower()
    for service in services:
        for name in (service, *aliases.get(service, ())):
            if re.search(r"[\u4e00-\u9fff]", name):
                hit = name in text
            else:
                hit = bool(re.search(rf"(?<![\w-]){re.escape(name.lower())}(?![\w-])", lowered))
            if hit:
                found.add(service)
                break
    return found


_ISO_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ](\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
)
_CLOCK = re.compile(r"(?<![\d:.])(\d{1,2}):(\d{2})(?::\d{2})?(?:\s*([ap])\.?m\b)?(?!\d|:\d)", re.I)
_AMPM = re.compile(r"(?<![\d:.])(\d{1,2})\s*([ap])\.?m\b", re.I)
_ZH_CLOCK = re.compile(r"(\d{1,2})\s*[点時时]\s*(?:(\d{1,2})\s*分|(半))?")


def clock_minutes(text: str) -> list[int]:
    """Every clock time in ``text`` as minutes after midnight (dates dropped)."""
    found: list[int] = []

    def hour(value: str, half: str | None) -> int:
        """The 24-hour hour of ``value`` with an optional am/pm letter."""
        number = int(value) % 12 if half else int(value)
        return number + (12 if half and half.lower() == "p" else 0)

    for match in _ISO_TIME.finditer(text):
        found.append(int(match.group(1)) * 60 + int(match.group(2)))
    rest = _ISO_TIME.sub(" ", text)
    for match in _CLOCK.finditer(rest):
        found.append(hour(match.group(1), match.group(3)) * 60 + int(match.group(2)))
    for match in _AMPM.finditer(_CLOCK.sub(" ", rest)):
        found.append(hour(match.group(1), match.group(2)) * 60)
    for match in _ZH_CLOCK.finditer(rest):
        minutes = 30 if match.group(3) else int(match.group(2) or 0)
        found.append(int(match.group(1)) * 60 + minutes)
    return found


#: Units an answer may write, as (dimension, factor to the dimension's base unit).
UNITS = {
    "ms": ("time", 0.001),
    "毫秒": ("time", 0.001),
    "s": ("time", 1.0),
    "sec": ("time", 1.0),
    "secs": ("time", 1.0),
    "second": ("time", 1.0),
    "seconds": ("time", 1.0),
    "秒": ("time", 1.0),
    "min": ("time", 60.0),
    "mins": ("time", 60.0),
    "minutes": ("time", 60.0),
    "分钟": ("time", 60.0),
    "µs": ("time", 1e-6),
    "us": ("time", 1e-6),
    "%": ("ratio", 0.01),
    "b": ("bytes", 1.0),
    "bytes": ("bytes", 1.0),
    "kb": ("bytes", 1e3),
    "kib": ("bytes", 1024.0),
    "mb": ("bytes", 1e6),
    "mib": ("bytes", 1024.0**2),
    "gb": ("bytes", 1e9),
    "gib": ("bytes", 1024.0**3),
    "/s": ("rate", 1.0),
    "req/s": ("rate", 1.0),
    "rps": ("rate", 1.0),
    "ops/s": ("rate", 1.0),
    "/min": ("rate", 1 / 60),
    "per second": ("rate", 1.0),
    "每秒": ("rate", 1.0),
}
#: The dimension and factor of each ground-truth unit.
TRUTH_UNITS = {
    "s": ("time", 1.0),
    "ms": ("time", 0.001),
    "ratio": ("ratio", 1.0),
    "%": ("ratio", 0.01),
    "bytes": ("bytes", 1.0),
    "/s": ("rate", 1.0),
    "bytes/s": ("rate", 1.0),
    "": ("count", 1.0),
}
_UNIT = "|".join(sorted((re.escape(u) for u in UNITS), key=len, reverse=True))
_NUMBER = re.compile(
    rf"(?<![\w.:/-])(-?\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|-?\d+(?:\.\d+)?)"
    rf"(?:\s*({_UNIT})(?![\w/]))?(?![\w:/-]|\.\d)",
    re.I,
)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_COUNTED = re.compile(r"\s+([A-Za-z][A-Za-z-]*)|\s*([个次条项])")
_NOT_NOUNS = frozenset(
    {"to", "from", "at", "and", "or", "in", "on", "since", "of", "per", "is", "was", "were", "by"}
    | {"for", "with", "the", "a", "an", "after", "before", "than", "until", "then"}
)
_ARROW = re.compile(
    r"^\s*(->|→|=>|⇒|to|rose to|went to|升至|升到|上升到|上升至|增至|增加到|涨到|到|至|变为)\s*$",
    re.I,
)


@dataclass(frozen=True)
class Number:
    """A number an answer states: its value in its dimension's base unit, and how it was
    written (``factor`` converts the written number)."""

    value: float
    dimension: str  # time, ratio, bytes, rate, count (a counted noun) or "" (bare)
    factor: float
    start: int
    end: int


def _blank(pattern: re.Pattern[str], text: str) -> str:
    return pattern.sub(lambda m: " " * len(m.group(0)), text)


def numbers(text: str) -> list[Number]:
    """Every number of ``text`` with its unit; clock times and dates are not numbers."""
    rest = _blank(_CLOCK, _blank(_DATE, _blank(_ISO_TIME, text)))
    found = []
    for match in _NUMBER.finditer(rest):
        written = float(match.group(1).replace(",", ""))
        unit = match.group(2)
        if unit:
            dimension, factor = UNITS[unit.lower()]
        else:
            after = _COUNTED.match(rest, match.end())
            noun = after and (after.group(2) or after.group(1).lower() not in _NOT_NOUNS)
            dimension, factor = ("count" if noun else ""), 1.0
        found.append(Number(written * factor, dimension, factor, match.start(), match.end()))
    return found


def changes(text: str) -> list[tuple[Number, Number]]:
    """``a -> b`` pairs; a bare end is read in the other end's unit."""
    found = numbers(_blank(_CLOCK, _blank(_DATE, _blank(_ISO_TIME, text))))
    pairs = []
    for left, right in itertools.pairwise(found):
        if not _ARROW.match(text[left.end : right.start]):
            continue
        if not left.dimension and right.dimension:
            left = Number(
                left.value * right.factor, right.dimension, right.factor, left.start, left.end
            )
        if not right.dimension and left.dimension:
            right = Number(
                right.value * left.factor, left.dimension, left.factor, right.start, right.end
            )
        pairs.append((left, right))
    return pairs
