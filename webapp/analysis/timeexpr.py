"""Time expressions in a question, resolved to a window relative to the backend's "now".

``resolve_window(text, now)`` returns a ``TimeWindow`` (``start``/``end`` in aware UTC, the
``onset`` the question states, the matched ``text``, the ``zone`` read in) of one ``kind``:
``range`` ("between 09:50 and 10:30", "从10点到10点半"), ``since`` ("since 11:00 CET", "started
75 minutes ago"), ``at`` ("around 14:37", a bare clock time), ``until`` ("before 10:00"),
``last`` ("past hour", "最近30分钟"), ``day`` ("this morning", "昨晚") or ``none``.

Clock times are read by ``clocks``; day references ("yesterday", "Nov 29", "昨天") by
``dateparser``. A time without a zone is in ``default_timezone``; a clock time with no date that
would lie in the future is taken to be on the previous day.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from functools import lru_cache
from typing import Any

from ..telemetry.common import iso, utc
from .clocks import ZH_NUM, Atom, duration, find_clock_times, parse_amount
from .timezones import zone_of

DEFAULT_TIMEZONE = "UTC"

#: A clock time up to this far past "now" is still today (clocks drift; people round up).
FUTURE_TOLERANCE = timedelta(minutes=5)


@dataclass(frozen=True)
class TimeWindow:
    """The window a question is about; ``found`` is False when it names no time."""

    start: datetime | None
    end: datetime
    onset: datetime | None
    text: str | None
    zone: str
    kind: str = "none"

    @property
    def found(self) -> bool:
        """True when the question carried a time expression."""
        return self.kind != "none"

    @property
    def utc_offset_minutes(self) -> int:
        """The zone's offset from UTC at the window's time, in minutes (0 for UTC)."""
        zone = zone_of(self.zone)
        moment = self.onset or self.start or self.end
        offset = moment.astimezone(zone).utcoffset() if zone else None
        return int(offset.total_seconds()) // 60 if offset else 0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: ISO-8601 UTC strings, for recording on the run and in the trace."""
        return {
            "start": iso(self.start) if self.start else None,
            "end": iso(self.end),
            "onset": iso(self.onset) if self.onset else None,
            "text": self.text,
            "zone": self.zone,
            "kind": self.kind,
            "utc_offset_minutes": self.utc_offset_minutes,
            "found": self.found,
        }


# "since yesterday at 9:30pm", "从昨天10点": a day word may sit between the keyword and the time.
_DAY_WORDS = (
    r"(?:\s*(?:yesterday|today|this morning|this afternoon|昨天|今天|前天))?"
    r"(?:\s+(?:at|around))?\s*$"
)
_RANGE_JOIN = re.compile(r"^\s*(?:and|to|until|till|through|-|–|—|~|到|至)\s*$", re.I)
_RANGE_OPEN = re.compile(r"(?:between|from|从|在|自)\s*$", re.I)
_SINCE_BEFORE = re.compile(
    r"(?:since|from|after|starting(?:\s+(?:at|from))?|started(?:\s+at)?|began(?:\s+at)?|"
    r"beginning(?:\s+at)?|as of|从|自)" + _DAY_WORDS,
    re.I,
)
_SINCE_AFTER = re.compile(r"\s*(?:开始|以来|之后|以后|起)")
_UNTIL_BEFORE = re.compile(r"(?:until|till|before|up to|by)" + _DAY_WORDS, re.I)
_UNTIL_AFTER = re.compile(r"\s*(?:之前|以前)")
_ANCHORS = (("since", _SINCE_BEFORE, _SINCE_AFTER), ("until", _UNTIL_BEFORE, _UNTIL_AFTER))

_UNIT = r"(minutes?|mins?|m|hours?|hrs?|h|days?|d|分钟|分|小时|个小时|钟头|个钟头|天)"
_EN_AMOUNT = (
    r"(\d+(?:\.\d+)?|half(?: an)?|an?|one|two|three|four|five|six|ten|fifteen|twenty|thirty|forty|"
    r"sixty|ninety|few|couple(?: of)?)"
)
_LAST = re.compile(
    rf"\b(?:last|past|previous)\s+(?:{_EN_AMOUNT}\s*)?{_UNIT}(?![a-z])"
    rf"|(?:最近|过去|近)\s*({ZH_NUM}|半)?\s*(?:个)?\s*{_UNIT}",
    re.I,
)
_AGO = re.compile(
    rf"(?:\b{_EN_AMOUNT}\s*{_UNIT}\s+ago\b)|(?:({ZH_NUM}|半)\s*(?:个)?\s*{_UNIT}\s*(?:之|以)?前)",
    re.I,
)

_DAY_PARTS = {  # name -> (days back, start hour, end hour)
    **dict.fromkeys(("this morning", "今天上午", "今天早上", "今早", "上午", "早上"), (0, 6, 12)),
    **dict.fromkeys(("this afternoon", "今天下午", "下午"), (0, 12, 18)),
    **dict.fromkeys(("this evening", "tonight", "今晚", "晚上"), (0, 18, 24)),
    **dict.fromkeys(("earlier today", "today", "今天"), (0, 0, 24)),
    **dict.fromkeys(("overnight", "今天凌晨", "凌晨"), (0, 0, 6)),
    **dict.fromkeys(("last night", "昨晚", "昨天晚上"), (1, 18, 30)),
    **dict.fromkeys(("yesterday morning", "昨天上午"), (1, 6, 12)),
    **dict.fromkeys(("yesterday afternoon", "昨天下午"), (1, 12, 18)),
    "yesterday evening": (1, 18, 24),
    **dict.fromkeys(("yesterday", "昨天"), (1, 0, 24)),
    "前天": (2, 0, 24),
    "中午": (0, 11, 14),
}
_DAY_PART = re.compile(  # the longest name first where one begins another
    "|".join(
        rf"\b{re.escape(k)}\b" if k.isascii() else re.escape(k)
        for k in sorted(_DAY_PARTS, key=len, reverse=True)
    ),
    re.I,
)
_MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DATE_REF = re.compile(
    rf"\b\d{{4}}-\d{{2}}-\d{{2}}\b|(\d{{1,2}})月(\d{{1,2}})[日号]"
    rf"|\b(?:yesterday|today|(?:mon|tues|wednes|thurs|fri|satur|sun)day"
    rf"|{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?\b|\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTHS}(?![a-z]))"
    r"|昨天|今天|前天|昨晚|今晚|今早",
    re.I,
)


def resolve_window(
    text: str, now: datetime, default_timezone: str = DEFAULT_TIMEZONE
) -> TimeWindow:
    """The window ``text`` is about, relative to ``now`` (the backend's reference time)."""
    now = utc(now, "now")
    default_zone = zone_of(default_timezone)
    if default_zone is None:
        raise ValueError(f"unknown time zone {default_timezone!r}")
    clean = unicodedata.normalize("NFKC", text)
    atoms = find_clock_times(clean)
    context = _Context(clean, now, default_zone, default_timezone, _day_reference(clean, now))
    found = context.range(atoms) or context.anchored(atoms) or context.ago() or context.last()
    if found is None and atoms:
        found = context.point(atoms[0], "at")
    return found or context.day_part() or TimeWindow(None, now, None, None, default_timezone)


@dataclass(frozen=True)
class _Context:
    """The question, "now", and zone defaults that every rule resolves against."""

    text: str
    now: datetime
    zone: tzinfo
    zone_name: str
    day: tuple[str, date] | None

    def _zone(self, name: str | None) -> tuple[tzinfo, str]:
        found = zone_of(name)
        return (found, name.strip()) if found and name else (self.zone, self.zone_name)

    def place(self, atom: Atom, zone_name: str | None = None) -> tuple[datetime, str]:
        """The instant ``atom`` denotes: on the referenced day (else today, else yesterday)."""
        zone, label = self._zone(zone_name or atom.zone)
        if (moment := atom.moment) is not None:
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=zone)
            else:
                label = "UTC" if moment.utcoffset() == timedelta(0) else moment.isoformat()[-6:]
            return moment.astimezone(timezone.utc), label
        local_now = self.now.astimezone(zone)
        day = self.day[1] if self.day else local_now.date()
        clock = time(atom.hour, atom.minute, atom.second)
        moment = datetime.combine(day, clock, tzinfo=zone)
        if self.day is None and moment > local_now + FUTURE_TOLERANCE:
            moment = datetime.combine(day - timedelta(days=1), clock, tzinfo=zone)
        return moment.astimezone(timezone.utc), label

    def _matched(self, begin: int, end: int) -> str:
        return self.text[begin:end].strip()

    def range(self, atoms: list[Atom]) -> TimeWindow | None:
        """Two clock times joined by "and"/"to"/"到": the window between them."""
        for first, second in itertools.pairwise(atoms):
            between = self.text[first.end : second.begin]
            if not _RANGE_JOIN.match(between):
                continue
            opener = _RANGE_OPEN.search(self.text[: first.begin])
            if not opener and between.strip().lower() in ("and",):
                continue
            zone = first.zone or second.zone
            start, label = self.place(first, zone)
            end, _ = self.place(second, zone)
            if end <= start:
                end += timedelta(days=1)
            if end > self.now + FUTURE_TOLERANCE:
                start, end = start - timedelta(days=1), end - timedelta(days=1)
            begin = opener.start() if opener else first.begin
            return TimeWindow(start, end, start, self._matched(begin, second.end), label, "range")
        return None

    def anchored(self, atoms: list[Atom]) -> TimeWindow | None:
        """A clock time after "since"/"from"/"从" (or before "开始"), or after "until"/"before"."""
        for atom, (kind, lead, trail) in itertools.product(atoms, _ANCHORS):
            match, tail = lead.search(self.text[: atom.begin]), trail.match(self.text, atom.end)
            if not (match or tail):
                continue
            begin, end = match.start() if match else atom.begin, tail.end() if tail else atom.end
            if kind == "since":
                return self.point(atom, "since", begin, end)
            moment, label = self.place(atom)
            text = self._matched(begin, end)
            return TimeWindow(None, min(moment, self.now), None, text, label, "until")
        return None

    def point(
        self, atom: Atom, kind: str, begin: int | None = None, end: int | None = None
    ) -> TimeWindow:
        """From the time ``atom`` names to now, with that time as the onset."""
        moment, label = self.place(atom)
        moment = min(moment, self.now)
        text = self._matched(atom.begin if begin is None else begin, end or atom.end)
        if self.day and self.day[0] not in text:
            text = f"{self.day[0]} {text}"
        return TimeWindow(moment, self.now, moment, text, label, kind)

    def ago(self) -> TimeWindow | None:
        """ "75 minutes ago", "3小时前": that moment is the onset."""
        return self._back(_AGO.search(self.text), "since")

    def last(self) -> TimeWindow | None:
        """ "in the last 30 minutes", "past hour", "最近30分钟": the window up to now."""
        return self._back(_LAST.search(self.text), "last")

    def _back(self, match: re.Match[str] | None, kind: str) -> TimeWindow | None:
        """From the duration an ``_AGO`` or ``_LAST`` match states (no amount: one unit) before
        now; ``since`` takes that moment as the onset."""
        if match is None:
            return None
        amount = match.group(1) or match.group(3)
        start = self.now - duration(
            parse_amount(amount) if amount else 1.0, match.group(2) or match.group(4)
        )
        onset = start if kind == "since" else None
        return TimeWindow(start, self.now, onset, match.group(0).strip(), self.zone_name, kind)

    def day_part(self) -> TimeWindow | None:
        """ "this morning", "yesterday", "今天上午": that part of the day (up to now)."""
        match = _DAY_PART.search(self.text)
        if match is None:
            if self.day is None:
                return None
            name, day = self.day
            first = datetime.combine(day, time(0), tzinfo=self.zone)
            start, end = first, first + timedelta(days=1)
        else:
            name = match.group(0)
            back, first_hour, last_hour = _DAY_PARTS[name.lower()]
            today = self.now.astimezone(self.zone).date()
            midnight = datetime.combine(today - timedelta(days=back), time(0), tzinfo=self.zone)
            start = midnight + timedelta(hours=first_hour)
            end = midnight + timedelta(hours=last_hour)
            if start > self.now:
                start, end = start - timedelta(days=1), end - timedelta(days=1)
        start, end = start.astimezone(timezone.utc), min(end, self.now).astimezone(timezone.utc)
        return TimeWindow(start, end, None, name, self.zone_name, "day")


def _day_reference(text: str, now: datetime) -> tuple[str, date] | None:
    """The day a question refers to ("yesterday", "Nov 29", "昨天"), read by dateparser (but
    ``11月29日``, which it does not read)."""
    match = _DATE_REF.search(text)
    if match is None:
        return None
    if match.group(1):
        month, day_of_month = int(match.group(1)), int(match.group(2))
        try:
            day = date(now.year, month, day_of_month)
        except ValueError:
            return None
        return match.group(0), day if day <= now.date() else day.replace(year=now.year - 1)
    phrase = match.group(0)
    phrase = {"昨晚": "昨天", "今晚": "今天", "今早": "今天"}.get(phrase, phrase)
    parsed = _date_parser(now.replace(tzinfo=None)).get_date_data(phrase).date_obj
    return (match.group(0), parsed.date()) if parsed is not None else None


@lru_cache(maxsize=8)
def _date_parser(relative_base: datetime) -> Any:
    from dateparser.date import DateDataParser  # a heavy import, paid on first use only

    return DateDataParser(
        languages=["en", "zh"],
        settings={"RELATIVE_BASE": relative_base, "PREFER_DATES_FROM": "past"},
    )
