"""What the analysis tools said about each service, read from the recorded tool results.

``detect_anomalies`` findings become :class:`Signal`, ``log_patterns`` patterns
:class:`Template`, log records naming another known service :class:`Mention`; a
:class:`Reading` gathers one service's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property, lru_cache
from typing import Any

from ...analysis.logpatterns import named_in, owners
from ..compact import shown_items
from .causes import metric_tokens
from .conversation import Done
from .question import parse_time

#: Metric-name words of a change marker (a version or build gauge), not a symptom.
MARKER_WORDS = re.compile(r"^(version|build|revision|rev|release)$", re.IGNORECASE)
#: Metric-name words of a volume of work (requests served, messages sent): it follows traffic.
VOLUME_WORDS = re.compile(
    r"^(count|total|requests?|rps|qps|throughput|calls|ops|sent|received|handled)$", re.IGNORECASE
)
#: Metric-name words of something held rather than work done: never read as traffic.
HELD_WORDS = re.compile(
    r"^(goroutines?|threads?|conn(ection)?s?|sockets?|fds?|descriptors?|handles?|open"
    r"|active|inflight|idle|busy|inuse|held|heap|rss|mem(ory)?|pool)$",
    re.IGNORECASE,
)
#: Metric-name words saying the work went wrong: never read as traffic.
TROUBLE_WORDS = re.compile(
    r"err|fail|[45]xx|^[45]\d\d$|reject|time(d)?out|drop|retr|restart|oom|kill|evict|miss|lag"
    r"|pend|wait|queue|backlog|den(y|ied)|throttl|limit|full|expir",
    re.IGNORECASE,
)
#: A rare line is one whose template occurs at most this often in the window around an onset.
RARE_COUNT = 3


@dataclass(frozen=True)
class Signal:
    """One ``detect_anomalies`` finding."""

    service: str
    invocation_id: str
    index: int
    signal: str
    kind: str
    onset: datetime
    raw: Mapping[str, Any]

    @property
    def leaf(self) -> tuple[str, str, Any]:
        """``(invocation_id, raw_path, value)`` of its signal name."""
        return (self.invocation_id, f"$.findings[{self.index}].signal", self.signal)

    @cached_property
    def marker(self) -> bool:
        """A version/build gauge: a change, not a symptom."""
        return self.kind == "metric" and any(
            MARKER_WORDS.match(t) for t in metric_tokens(self.signal)
        )

    @cached_property
    def volume(self) -> bool:
        """A count of work done (requests, messages): it follows traffic."""
        tokens = metric_tokens(self.signal)
        return (
            self.kind == "metric"
            and any(VOLUME_WORDS.match(t) for t in tokens)
            and not any(TROUBLE_WORDS.search(t) or HELD_WORDS.match(t) for t in tokens)
        )

    @property
    def significance(self) -> float:
        return float(self.raw.get("significance") or 0.0)


@dataclass(frozen=True)
class Template:
    """One ``log_patterns`` pattern."""

    service: str
    invocation_id: str
    index: int
    raw: Mapping[str, Any]

    @property
    def template(self) -> str:
        return str(self.raw.get("template", ""))

    @property
    def example(self) -> str:
        return str(self.raw.get("example", ""))

    @property
    def count(self) -> int:
        return int(self.raw.get("count_before", 0)) + int(self.raw.get("count_after", 0))

    @property
    def new(self) -> bool:
        return bool(self.raw.get("new"))

    @cached_property
    def first_seen(self) -> datetime | None:
        return parse_time(str(self.raw.get("first_seen") or ""))

    def leaf(self, name: str) -> tuple[str, str, Any]:
        """``(invocation_id, raw_path, value)`` of one field of the pattern."""
        return (self.invocation_id, f"$.patterns[{self.index}].{name}", self.raw.get(name))


@dataclass(frozen=True)
class Mention:
    """A log record of ``service`` that names ``other``."""

    service: str
    other: str
    invocation_id: str
    path: str
    message: str
    literal: bool = False  # the line spells ``other``'s own name, not one of its aliases


@dataclass
class Reading:
    """Everything the tool results say about one service."""

    service: str
    detect: Done | None = None
    signals: list[Signal] = field(default_factory=list)
    patterns: list[Template] = field(default_factory=list)
    events: list[Template] = field(default_factory=list)
    mentions: dict[str, list[Mention]] = field(default_factory=dict)
    logs_read: bool = False
    events_read: bool = False

    @cached_property
    def symptoms(self) -> list[Signal]:
        """Findings that are not change markers; counts of work done only beside another."""
        found = [s for s in self.signals if not s.marker]
        return found if any(not s.volume for s in found) else []

    @property
    def traffic(self) -> list[Signal]:
        """Counts of work done that moved while nothing else did (no symptoms)."""
        return [] if self.symptoms else [s for s in self.signals if s.volume]

    @property
    def onsets(self) -> list[datetime]:
        """The onsets of its symptoms and first sightings of its new templates, earliest first."""
        seen = {t.first_seen for t in self.new_templates() if t.first_seen is not None}
        return sorted({s.onset for s in self.symptoms} | seen)

    def at(self, onset: datetime) -> Signal | None:
        """The most significant symptom that began at ``onset``."""
        found = [s for s in self.symptoms if s.onset == onset]
        return max(found, key=lambda s: (s.significance, s.kind == "metric")) if found else None

    def since(self, moment: datetime) -> list[Signal]:
        """Symptoms that began at or after ``moment``."""
        return [s for s in self.symptoms if s.onset >= moment]

    def new_templates(self) -> list[Template]:
        """Log templates new since the onset of the service's log rate."""
        return [t for t in self.patterns if t.new]


def read_signals(done: Done) -> list[Signal]:
    """The findings of one ``detect_anomalies`` result."""
    return list(_signals(done))


@lru_cache(maxsize=512)  # per result object: every round reads the same ``Done``
def _signals(done: Done) -> tuple[Signal, ...]:
    service = str(done.arguments.get("service", ""))
    return tuple(
        Signal(
            service,
            done.invocation_id,
            index,
            str(raw.get("signal", "")),
            str(raw.get("kind", "")),
            onset,
            raw,
        )
        for index, raw in shown_items(done.output.get("findings"))
        if isinstance(raw, dict) and (onset := parse_time(str(raw.get("onset", "")))) is not None
    )


def read_templates(done: Done) -> list[Template]:
    """The patterns of one ``log_patterns`` result."""
    service = str(done.arguments.get("service", ""))
    return [
        Template(service, done.invocation_id, index, raw)
        for index, raw in shown_items(done.output.get("patterns"))
        if isinstance(raw, dict)
    ]


def read_mentions(
    done: Done, services: Sequence[str], aliases: Mapping[str, Sequence[str]]
) -> list[Mention]:
    """Records of one ``query_logs`` result that name another known service (or its alias)."""
    return list(_mentions(done, tuple(services), tuple((k, *v) for k, v in aliases.items())))


@lru_cache(maxsize=512)  # per result object and catalog: every round reads the same ``Done``
def _mentions(
    done: Done, services: tuple[str, ...], aliases: tuple[tuple[str, ...], ...]
) -> tuple[Mention, ...]:
    service = str(done.arguments.get("service", ""))
    table = owners(services, {names[0]: names[1:] for names in aliases}, service)
    found: list[Mention] = []
    for index, record in shown_items(done.output.get("records")):
        message = str(record.get("message", "")) if isinstance(record, dict) else ""
        named = named_in(message.lower(), table)
        path = f"$.records[{index}].message"
        found += [
            Mention(service, o, done.invocation_id, path, message, named[o]) for o in sorted(named)
        ]
    return tuple(found)


def readings(
    done: Sequence[Done], services: Sequence[str], aliases: Mapping[str, Sequence[str]]
) -> dict[str, Reading]:
    """One :class:`Reading` per service the successful results cover, in first-seen order."""
    found: dict[str, Reading] = {}
    for d in done:
        service = str(d.arguments.get("service", ""))
        tool = d.tool if d.status == "SUCCESS" and service else ""
        if tool not in ("detect_anomalies", "log_patterns", "query_logs"):
            continue
        reading = found.setdefault(service, Reading(service))
        if d.tool == "detect_anomalies" and reading.detect is None:
            reading.detect = d
            reading.signals = read_signals(d)
        elif d.tool == "log_patterns" and str(d.arguments.get("level", "")).upper() == "INFO":
            # over INFO lines around an onset: its rare lines are events
            reading.events_read = True
            reading.events += [t for t in read_templates(d) if t.count <= RARE_COUNT]
        elif d.tool == "log_patterns" and not reading.patterns:
            reading.patterns = read_templates(d)
        elif d.tool == "query_logs":
            reading.logs_read = True
            for mention in read_mentions(d, services, aliases):
                reading.mentions.setdefault(mention.other, []).append(mention)
    return found
