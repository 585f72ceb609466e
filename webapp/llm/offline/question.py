"""Understanding an on-call question: which services, since when, about alerts, in which language.

A follow-up that names no service but refers back to one ("it", "its database", "它") is about
the services the previous user turn named, over that turn's window when it states none; "its
database" is the other service the previous answer found. The window the planner resolved is
recorded in the plan (``window_record``) and read back by every later agent (``request_window``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from diagnosis_graph.workflow.render import LABELS

from ...analysis.language import asks_dependency, refers_back
from ...analysis.names import NameMatch, Resolution, UnknownName, resolve_services, stem
from ...analysis.onsets import iso
from ...analysis.timeexpr import DEFAULT_TIMEZONE, TimeWindow, resolve_window
from ...telemetry.common import parse_timestamp

#: Without a stated onset, "before" and "after" split this long before now.
DEFAULT_SPLIT = timedelta(hours=1)

_ALERTS = re.compile(r"\b(alerts?|alerting|firing|pager|paged|pages)\b|告警|报警|警报", re.I)
#: Where a rendered answer's own conclusions end: the renderer's evidence, next-steps and
#: limitations headings, in either language.
_TAILS = [
    words[k] for words in LABELS.values() for k in ("evidence", "recommendations", "limitations")
]
_ANSWER_TAIL = re.compile(rf"^#{{2,4}} ({'|'.join(map(re.escape, _TAILS))})", re.I | re.M)


@dataclass(frozen=True)
class Window:
    """The time the question is about: ``onset`` (None when not said) to ``end``, and the full
    time expression reading."""

    onset: datetime | None
    end: datetime
    resolved: TimeWindow | None = field(default=None, compare=False)

    @property
    def stated(self) -> bool:
        """True when the question stated a time (else the window is the recent range)."""
        return self.resolved is not None and self.resolved.found

    @property
    def stated_onset(self) -> datetime | None:
        """The onset the question states, if it states one."""
        return self.onset if self.stated else None

    @property
    def split(self) -> datetime:
        """Where "before" ends and "after" begins: the onset, or one hour before the end."""
        return self.onset or self.end - DEFAULT_SPLIT


def parse_time(value: str | None) -> datetime | None:
    """Parse an ISO-8601 timestamp into aware UTC (None when absent or unreadable)."""
    parsed = parse_timestamp(value)
    return parsed.astimezone(timezone.utc) if parsed else None


def clock(moment: datetime) -> str:
    """``2027-03-09 09:30 UTC``: a moment as claims and answers write it."""
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def question_window(
    question: str, reference_time: str | None, default_timezone: str = DEFAULT_TIMEZONE
) -> Window:
    """The window a question is about, resolved against ``reference_time`` (now)."""
    now = parse_time(reference_time) or datetime.now(timezone.utc).replace(microsecond=0)
    return _window(resolve_window(question, now, default_timezone))


def _window(resolved: TimeWindow) -> Window:
    onset = resolved.onset or resolved.start
    if onset is not None and onset >= resolved.end:
        onset = None
    return Window(onset, resolved.end, resolved)


def window_record(window: Window) -> dict[str, Any]:
    """The plan's ``window``: the resolved window as ISO-8601 UTC strings."""
    resolved = window.resolved
    if resolved is None:
        return {"start": None, "end": iso(window.end), "onset": None, "text": None, "kind": "none"}
    return {k: v for k, v in resolved.as_dict().items() if k != "found"}


def request_window(request: Mapping[str, Any], default_timezone: str = DEFAULT_TIMEZONE) -> Window:
    """The window of a request: the one its plan recorded, else read from its question."""
    plan = request.get("plan") or request.get("previous_plan") or {}
    recorded = plan.get("window") if isinstance(plan, Mapping) else None
    end = parse_time((recorded or {}).get("end"))
    if not recorded or end is None:
        return question_window(
            str(request.get("question", "")), request.get("reference_time"), default_timezone
        )
    text, zone = recorded.get("text"), str(recorded.get("zone") or default_timezone)
    kind = str(recorded.get("kind") or "none") if text else "none"
    start, onset = parse_time(recorded.get("start")), parse_time(recorded.get("onset"))
    return _window(TimeWindow(start, end, onset, text, zone, kind))


@dataclass(frozen=True)
class Understanding:
    """What the planner needs to know about one question."""

    question: str
    window: Window
    services: list[str]
    unknown: list[UnknownName]
    asks_alerts: bool
    follow_up: bool = False
    #: For "its database" and the like: the dependency the previous answer found.
    dependencies: list[str] = field(default_factory=list)
    #: The services were recognised only by a part of their name used as a word ("scans").
    partial: bool = False

    @property
    def system_wide(self) -> bool:
        """No service is named for sure: the whole catalog is triaged (unknown names aside)."""
        return (not self.services or self.partial) and not self.unknown and not self.dependencies


def understand(
    question: str,
    reference_time: str | None,
    services: Sequence[str],
    aliases: Mapping[str, Sequence[str]] | None = None,
    history: Sequence[Mapping[str, Any]] = (),
    default_timezone: str = DEFAULT_TIMEZONE,
) -> Understanding:
    """Read ``question`` (and, for a follow-up, the earlier turns in ``history``)."""
    names: Resolution = resolve_services(question, services, aliases)
    window = question_window(question, reference_time, default_timezone)
    found, follow_up, dependencies = names.services, False, []
    if not found and not names.unknown and refers_back(question):
        earlier = _previous_turn(question, history, services, aliases)
        if earlier is not None:
            asked, found, answer = earlier
            follow_up = True
            if not window.stated:
                window = question_window(asked, reference_time, default_timezone)
            if asks_dependency(question):
                named = resolve_services(_conclusions(answer), services, aliases).services
                dependencies = [s for s in named if s not in found]
    elif found and refers_back(question) and not window.stated:
        # "and what about <another service>?": that service, over the previous turn's time.
        earlier = _previous_turn(question, history, services, aliases)
        if earlier is not None:
            window = question_window(earlier[0], reference_time, default_timezone)
    return Understanding(
        question,
        window,
        found,
        names.unknown,
        bool(_ALERTS.search(question)),
        follow_up,
        dependencies,
        bool(names.matches) and not follow_up and all(_describes(m) for m in names.matches),
    )


def _describes(match: NameMatch) -> bool:
    """True when ``match`` is an exact word that is only one part of the service's name
    ("scans" of ``kafka-scans``), not its whole stem: a word for what the question is about."""
    if match.how != "partial" or match.score < 100:
        return False
    own = stem(match.service)
    return match.text.lower() not in (own, own + "s", own + "es")


def _previous_turn(
    question: str,
    history: Sequence[Mapping[str, Any]],
    services: Sequence[str],
    aliases: Mapping[str, Sequence[str]] | None,
) -> tuple[str, list[str], str] | None:
    """The latest earlier user turn that named a service, its services and the latest answer
    since."""
    turns = [t for t in history if isinstance(t, Mapping)]
    for index in range(len(turns) - 1, -1, -1):
        turn = turns[index]
        text = str(turn.get("content", ""))
        if turn.get("role") != "user" or text == question:
            continue
        named = resolve_services(text, services, aliases).services
        if named:
            later = [t for t in turns[index + 1 :] if t.get("role") == "assistant"]
            return text, named, str(later[-1].get("content", "")) if later else ""
    return None


def _conclusions(answer: str) -> str:
    """A rendered answer without its question line, evidence list and next steps."""
    cut = _ANSWER_TAIL.search(answer)
    head = answer[: cut.start()] if cut else answer
    return "\n".join(line for line in head.splitlines() if not line.startswith("**"))
