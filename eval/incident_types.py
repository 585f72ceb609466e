"""The shape of an incident family: what moves after the onset and what gets logged."""

from __future__ import annotations

from dataclasses import dataclass

# Placeholders in phrasings: {dep} culprit name or address, {victim}, {method}, {path}, {ms},
# {secs}, {n}, {id}, {pid}, {port}, {k}, {old}, {new}, {job}, {group}, {now}, {xid}, {ip}.


@dataclass(frozen=True)
class Shape:
    """A change to one role's series after the onset.

    ``ramp``: move to ``value`` (times the baseline when ``rel``) over ``ramp`` minutes, starting
    ``start`` minutes after the onset (negative: before it); with ``to``, jump to ``value`` and
    drift to ``to`` over ``duration`` minutes. ``saw``: climb from the baseline to ``value``
    every ``ramp`` minutes and drop back (a leak and its restarts); ``steps``: a counter that
    goes up by one at each drop of a ``saw`` with the same period; ``countdown``: a value that
    reaches zero at the onset; ``bump``: the baseline plus ``value`` from the onset on (a new
    build number).
    """

    role: str
    value: float
    rel: bool = True
    sd: float = 0.05
    ramp: int = 3
    start: int = 0
    to: float | None = None
    duration: int = 1
    kind: str = "ramp"


@dataclass(frozen=True)
class Family:
    """One incident mechanism."""

    key: str
    culprit: str
    symptom: str
    victim: tuple[Shape, ...]
    cause: tuple[Shape, ...]
    victim_errors: tuple[str, ...]
    cause_lines: tuple[tuple[str, str], ...]
    # (milliseconds from the onset, "victim" or "culprit", level, phrasing)
    precursor: tuple[tuple[int, str, str, str], ...]
    runbook: tuple[str, str]
    alert: tuple[str, str, str]
    victim_warns: tuple[str, ...] = ()
    warn_rate: float = 0.03  # share of the victim's requests that log a ``victim_warns`` line
    # Logged by the victim, a second apart, at the end of every period of a ``saw`` shape.
    cycle_lines: tuple[tuple[str, str], ...] = ()
