"""Understanding an on-call question: which services, since when, about alerts, in which language.

Everything here is built on ``webapp.analysis``: ``resolve_window`` (SPEC 5a time expressions),
``resolve_services`` (exact, alias, misspelt and partial names; unknown ones with suggestions)
and ``question_language``. ``question_window``, ``parse_time``, ``iso``, ``mentioned_services``
and ``Window`` keep the shapes the executor has always imported.

Follow-ups: a question that names no service but refers back to one ("it", "its database",
"that service", "它", "它的数据库") is about the services the previous user turn named.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from ...analysis.language import question_language
from ...analysis.names import Resolution, UnknownName, resolve_services
from ...analysis.timeexpr import DEFAULT_TIMEZONE, TimeWindow, resolve_window

#: Without a stated onset, "before" and "after" split this long before now (the executor's
#: log and metric comparisons); the analysis tools look over the whole recent range instead.
DEFAULT_SPLIT = timedelta(hours=1)

_ALERTS = re.compile(r"\b(alerts?|alerting|firing|pager|paged|pages)\b|告警|报警|警报", re.I)
_REFERS_BACK = re.compile(
    r"\b(it|its|it's|that service|this service|the same service|that one|they|their|them)\b"
    r"|\b(and|what) about\b|它|它的|这个服务|那个服务|该服务|同一个服务",
    re.I,
)


def mentioned_services(
    question: str, services: Sequence[str], aliases: Mapping[str, Sequence[str]] | None = None
) -> list[str]:
    """Services named in ``question``, first mention first (see ``webapp.analysis.names``)."""
    return resolve_services(question, services, aliases).services


@dataclass(frozen=True)
class Window:
    """The time the question is about: ``onset`` (None when not said) to ``end``.

    ``resolved`` is the full time expression reading (matched text, zone, kind).
    """

    onset: datetime | None
    end: datetime
    resolved: TimeWindow | None = field(default=None, compare=False)

    @property
    def split(self) -> datetime:
        """Where "before" ends and "after" begins: the onset, or one hour before the end."""
        return self.onset or self.end - DEFAULT_SPLIT

    def before(self) -> tuple[datetime, datetime]:
        """The hour before the split (the baseline)."""
        return self.split - timedelta(hours=1), self.split

    def after(self) -> tuple[datetime, datetime]:
        """From the split to the end (the incident)."""
        return self.split, self.end


def parse_time(value: str | None) -> datetime | None:
    """Parse an ISO-8601 timestamp into aware UTC (None when absent or unreadable)."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)).astimezone(
        timezone.utc
    )


def question_window(
    question: str, reference_time: str | None, default_timezone: str = DEFAULT_TIMEZONE
) -> Window:
    """The window a question is about, resolved against ``reference_time`` (now)."""
    now = parse_time(reference_time) or datetime.now(timezone.utc).replace(microsecond=0)
    resolved = resolve_window(question, now, default_timezone)
    onset = resolved.onset or resolved.start
    if onset is not None and onset >= resolved.end:
        onset = None
    return Window(onset, resolved.end, resolved)


def iso(moment: datetime) -> str:
    """``2026-11-30T10:00:00Z``."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Understanding:
    """What the planner needs to know about one question."""

    question: str
    window: Window
    services: list[str]
    unknown: list[UnknownName]
    language: str
    asks_alerts: bool
    follow_up: bool = False


def understand(
    question: str,
    reference_time: str | None,
    services: Sequence[str],
    aliases: Mapping[str, Sequence[str]] | None = None,
    history: Sequence[Mapping[str, Any]] = (),
    default_timezone: str = DEFAULT_TIMEZONE,
) -> Understanding:
    """Read ``question`` (and, for a follow-up, the previous user turns in ``history``)."""
    names: Resolution = resolve_services(question, services, aliases)
    found, follow_up = names.services, False
    if not found and not names.unknown and _REFERS_BACK.search(question):
        for turn in reversed(list(history)):
            if turn.get("role") != "user" or str(turn.get("content", "")) == question:
                continue
            earlier = resolve_services(str(turn.get("content", "")), services, aliases)
            if earlier.services:
                found, follow_up = earlier.services, True
                break
    return Understanding(
        question,
        question_window(question, reference_time, default_timezone),
        found,
        names.unknown,
        question_language(question),
        bool(_ALERTS.search(question)),
        follow_up,
    )
