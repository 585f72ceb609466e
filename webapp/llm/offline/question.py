"""Understanding an on-call question: which services it names and since when."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from .conversation import words

# Words that appear in many service names and identify none of them.
_GENERIC = {
    "service",
    "svc",
    "api",
    "app",
    "server",
    "worker",
    "main",
    "primary",
    "the",
    "v1",
    "v2",
    "prod",
    "backend",
    "frontend",
}


def mentioned_services(question: str, services: Sequence[str]) -> list[str]:
    """Services named in ``question``: full names first, then distinctive name parts."""
    text = question.lower()
    exact = [s for s in services if re.search(rf"(?<![\w-]){re.escape(s.lower())}(?![\w-])", text)]
    if exact:
        return sorted(exact, key=lambda s: text.index(s.lower()))
    asked = set(words(question))
    asked |= {w.rstrip("s") for w in asked}
    partial = []
    for service in services:
        parts = [p for p in words(service) if p not in _GENERIC and len(p) > 2]
        if parts and any(p in asked for p in parts):
            partial.append(service)
    return partial


@dataclass(frozen=True)
class Window:
    """The time the question is about: ``onset`` (None when not said) to ``end`` (now)."""

    onset: datetime | None
    end: datetime

    @property
    def split(self) -> datetime:
        """Where "before" ends and "after" begins: the onset, or one hour before now."""
        return self.onset or self.end - timedelta(hours=1)

    def before(self) -> tuple[datetime, datetime]:
        """The hour before the split (the baseline)."""
        return self.split - timedelta(hours=1), self.split

    def after(self) -> tuple[datetime, datetime]:
        """From the split to now (the incident)."""
        return self.split, self.end


_CLOCK = r"(\d{1,2})[:h.](\d{2})(?:\s*(am|pm))?"
_SINCE = re.compile(rf"\b(?:since|from|after|starting(?: at)?|began at|at|around)\s+{_CLOCK}", re.I)
_ANY_CLOCK = re.compile(rf"\b{_CLOCK}\b", re.I)
_AGO = re.compile(r"\b(?:last|past)\s+(\d+)\s*(minute|min|hour|hr|h|m)s?\b", re.I)
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?")


def parse_time(value: str | None) -> datetime | None:
    """Parse an ISO-8601 timestamp into aware UTC (None when absent or unreadable)."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)).astimezone(
        timezone.utc
    )


def question_window(question: str, reference_time: str | None) -> Window:
    """The window a question is about, resolved against ``reference_time`` (now)."""
    now = parse_time(reference_time) or datetime.now(timezone.utc).replace(microsecond=0)
    if iso := _ISO.search(question):
        onset = parse_time(iso.group(0))
        if onset and onset < now:
            return Window(onset, now)
    if ago := _AGO.search(question):
        amount, unit = int(ago.group(1)), ago.group(2).lower()
        delta = timedelta(hours=amount) if unit.startswith("h") else timedelta(minutes=amount)
        return Window(now - delta, now)
    clock = _SINCE.search(question) or _ANY_CLOCK.search(question)
    if clock:
        hour, minute, meridiem = int(clock.group(1)), int(clock.group(2)), clock.group(3)
        if meridiem and meridiem.lower() == "pm" and hour < 12:
            hour += 12
        if meridiem and meridiem.lower() == "am" and hour == 12:
            hour = 0
        if hour < 24 and minute < 60:
            onset = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
            if onset >= now:
                onset -= timedelta(days=1)
            return Window(onset, now)
    return Window(None, now)


def iso(moment: datetime) -> str:
    """``2026-11-30T10:00:00Z``."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
