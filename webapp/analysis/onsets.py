"""Onsets in one series (a metric, or a log level's count per bucket): when it changed, by how much.

1. **Candidates** - change points from ``ruptures`` (``KernelCPD``, linear kernel: PELT with the
   least-squares cost) on the series scaled by its point-to-point noise (``noise_scale``).
2. **Baseline from before the onset only** - the baseline is every point before a candidate;
   the incident is the segment that follows it.
3. **Significance** - the robust z ``(incident median - baseline median) / spread``
   (``baseline_spread``); the first candidate with ``|z| >= Z_SIGNIFICANT`` is the onset, moved
   back over the points just before it that already deviate by ``Z_ONSET`` spreads.

``detect_ongoing`` finds a change that began before a window and still holds in it.
"""

from __future__ import annotations

import bisect
import math
import statistics
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from operator import itemgetter
from typing import Any

import numpy as np
import ruptures

from ..telemetry.common import iso

#: Fewer points than this cannot hold a baseline and an incident: no detection.
MIN_POINTS = 8
#: The shortest segment a change point may create: three points (three minutes at a 60 s step)
#: make a sustained change; one or two are a spike.
MIN_SEGMENT = 3
#: The shortest baseline a finding may rest on.
MIN_BASELINE = 5
#: PELT penalty per change point, times log(n) (BIC on unit-variance data is 2 log n).
BIC_PENALTY = 2.0
#: Robust z an incident's median must reach to count as a change (Iglewicz and Hoaglin flag
#: single points at 3.5; a sustained segment must clear a slightly higher bar).
Z_SIGNIFICANT = 4.0
#: A metric segment shorter than this many points that is followed by a return to the baseline
#: is a transient (a periodic burst caught in one bucket or two), not an incident. Not applied
#: to event counts: a new error at a few lines per bucket varies more than that and goes on.
MIN_SUSTAINED = 6
#: Robust z at which a point just before the breakpoint already belongs to the incident.
Z_ONSET = 3.0
#: A flat baseline's spread is at least this fraction of the level it sits at: a change of
#: under 1% of the level is below what a gauge resolves, however flat the baseline is.
RELATIVE_FLOOR = 0.01
#: Counts are whole events per bucket: a spread below half an event is not resolvable.
COUNT_FLOOR = 0.5
#: The spread of an all-zero, non-count baseline (nothing else to scale by).
ABSOLUTE_FLOOR = 1e-6
#: Significance figures above this are reported as this (beyond it the number means nothing).
SIGNIFICANCE_CAP = 1000.0
#: An increase to at least this multiple of a positive baseline is rendered as a ratio.
RATIO_RENDER = 2.0
_MAD_TO_SIGMA = 1.4826
_MEAN_AD_TO_SIGMA = 1.2533


@dataclass(frozen=True)
class Baseline:
    """The points before the onset."""

    start: datetime
    end: datetime
    median: float
    spread: float


@dataclass(frozen=True)
class Incident:
    """The points from the onset on."""

    median: float
    peak: float
    peak_at: datetime


@dataclass(frozen=True)
class Finding:
    """A significant change in one signal."""

    signal: str
    kind: str
    onset: datetime
    baseline: Baseline
    incident: Incident
    change: str
    significance: float
    direction: str

    def as_dict(self) -> dict[str, Any]:
        """The raw-output shape of a ``detect_anomalies`` finding."""
        return {
            "signal": self.signal,
            "kind": self.kind,
            "onset": iso(self.onset),
            "baseline": _shape(self.baseline),
            "incident": _shape(self.incident),
            "change": self.change,
            "significance": self.significance,
            "direction": self.direction,
        }


def _shape(part: Baseline | Incident) -> dict[str, Any]:
    """Its fields in order: times as ISO-8601, values to five significant digits."""
    values = asdict(part).items()
    return {k: iso(v) if isinstance(v, datetime) else significant(v) for k, v in values}


Point = tuple[datetime, float]


def detect_onset(
    points: Sequence[Point], *, signal: str, kind: str = "metric", counts: bool = False
) -> Finding | None:
    """The first significant change in ``points`` (oldest first), or None; ``counts`` marks
    event counts per bucket, whose spread is floored at ``COUNT_FLOOR``."""
    clean = finite_points(points)
    return next(_findings(clean, signal, kind, counts), None) if len(clean) >= MIN_POINTS else None


def detect_ongoing(
    points: Sequence[Point],
    since: datetime,
    *,
    signal: str,
    kind: str = "metric",
    counts: bool = False,
) -> Finding | None:
    """The first significant change in ``points`` that began before ``since`` and still holds
    from ``since`` on (the window's median is off that change's baseline), or None."""
    clean = finite_points(points)
    first = bisect.bisect_left(clean, since, key=_TIME)
    if len(clean) < MIN_POINTS or first < MIN_BASELINE or len(clean) - first < MIN_SEGMENT:
        return None
    window = statistics.median(map(_VALUE, clean[first:]))
    for finding in _findings(clean, signal, kind, counts, last=first):
        sign = 1.0 if finding.direction == "up" else -1.0
        off = sign * (window - finding.baseline.median)
        if finding.onset < since and off >= Z_SIGNIFICANT * finding.baseline.spread:
            return finding
    return None


def _findings(
    points: list[Point], signal: str, kind: str, counts: bool, last: int | None = None
) -> Iterator[Finding]:
    """The significant changes at the change points from ``MIN_BASELINE`` to ``last``."""
    values = list(map(_VALUE, points))
    breakpoints = change_points(values)
    for breakpoint in breakpoints:
        if breakpoint < MIN_BASELINE or (last is not None and breakpoint > last):
            continue
        finding = _assess(points, values, breakpoints, breakpoint, signal, kind, counts)
        if finding is not None:
            yield finding


def finite_points(points: Sequence[Point]) -> list[Point]:
    """``(t, float(v))`` for every point whose value is a finite number (None, NaN and
    infinities dropped)."""
    return [(t, float(v)) for t, v in points if v is not None and math.isfinite(float(v))]


_TIME, _VALUE = itemgetter(0), itemgetter(1)


def change_points(values: Sequence[float]) -> list[int]:
    """Indices where a new segment starts (PELT), in time order; excludes ``len(values)``."""
    array = np.asarray(values, dtype=float)
    scale = noise_scale(array)
    if scale == 0.0:
        scale = max(float(np.ptp(array)) * 1e-3, ABSOLUTE_FLOOR)
    algo = ruptures.KernelCPD(kernel="linear", min_size=MIN_SEGMENT).fit(array / scale)
    ends = algo.predict(pen=BIC_PENALTY * math.log(len(values)))
    return [int(e) for e in ends if e < len(values)]


def noise_scale(values: Sequence[float] | np.ndarray) -> float:
    """Point-to-point noise: MAD of first differences / sqrt 2 (a step barely moves it)."""
    if len(values) < 3:
        return 0.0
    diffs = np.diff(values)
    centre = statistics.median(diffs.tolist())
    return _MAD_TO_SIGMA * statistics.median(np.abs(diffs - centre).tolist()) / math.sqrt(2.0)


def baseline_spread(values: Sequence[float], *, level: float, counts: bool = False) -> float:
    """The baseline's variability: MAD x 1.4826, else mean AD x 1.2533, floored.

    ``level`` is the larger magnitude of the two medians being compared; the floor is
    ``RELATIVE_FLOOR`` of it (and ``COUNT_FLOOR`` for counts, ``ABSOLUTE_FLOOR`` at worst).
    """
    centre = statistics.median(values)
    deviations = [abs(v - centre) for v in values]
    spread = _MAD_TO_SIGMA * statistics.median(deviations)
    if spread == 0.0:
        spread = _MEAN_AD_TO_SIGMA * statistics.fmean(deviations)
    floor = max(RELATIVE_FLOOR * abs(level), COUNT_FLOOR if counts else ABSOLUTE_FLOOR)
    return max(spread, floor)


def render_change(baseline: float, incident: float) -> str:
    """``x38.2`` for a rise to at least ``RATIO_RENDER`` x a positive baseline, else ``+0.26``."""
    if baseline > 0 and incident >= RATIO_RENDER * baseline:
        return f"x{incident / baseline:.1f}"
    return _signed(incident - baseline)


def _assess(
    points: Sequence[Point],
    values: Sequence[float],
    breakpoints: Sequence[int],
    breakpoint: int,
    signal: str,
    kind: str,
    counts: bool,
) -> Finding | None:
    """The finding at ``breakpoint`` if its segment is significant (``values``: the points')."""
    segment_end = next((b for b in breakpoints if b > breakpoint), len(values))
    centre, incident, spread, z = _compare(values, breakpoint, segment_end, counts)
    if abs(z) < Z_SIGNIFICANT:
        return None
    onset = _refine(values, breakpoint, centre, spread, 1.0 if z > 0 else -1.0)
    if onset != breakpoint:  # the baseline lost its last points: compare again without them
        centre, incident, spread, z = _compare(values, onset, segment_end, counts)
    if abs(z) < Z_SIGNIFICANT or (
        not counts and _transient(values, breakpoints, segment_end, centre, spread)
    ):
        return None
    peak_at, peak = (max if z > 0 else min)(points[onset:], key=_VALUE)
    return Finding(
        signal,
        kind,
        points[onset][0],
        Baseline(points[0][0], points[onset - 1][0], centre, spread),
        Incident(incident, peak, peak_at),
        render_change(centre, incident),
        round(min(abs(z), SIGNIFICANCE_CAP), 1),
        "up" if z > 0 else "down",
    )


def _compare(
    values: Sequence[float], onset: int, segment_end: int, counts: bool
) -> tuple[float, float, float, float]:
    """Baseline median, incident median, baseline spread and robust z for onset ``onset``."""
    base = values[:onset]
    centre, incident = statistics.median(base), statistics.median(values[onset:segment_end])
    spread = baseline_spread(base, level=max(abs(centre), abs(incident)), counts=counts)
    return centre, incident, spread, (incident - centre) / spread


def _transient(
    values: Sequence[float],
    breakpoints: Sequence[int],
    segment_end: int,
    centre: float,
    spread: float,
) -> bool:
    """A short segment after which the series is back within ``Z_SIGNIFICANT`` of the baseline."""
    start = max((b for b in breakpoints if b < segment_end), default=0)
    if segment_end - start >= MIN_SUSTAINED or segment_end >= len(values):
        return False
    following = next((b for b in breakpoints if b > segment_end), len(values))
    back = statistics.median(values[segment_end:following])
    return abs(back - centre) / spread < Z_SIGNIFICANT


def _refine(values: Sequence[float], index: int, centre: float, spread: float, sign: float) -> int:
    """Move the onset back over points that already deviate by ``Z_ONSET`` in the same sense."""
    while index > MIN_BASELINE and sign * (values[index - 1] - centre) >= Z_ONSET * spread:
        index -= 1
    return index


def _signed(delta: float) -> str:
    if delta == 0:
        return "+0"
    size = abs(delta)
    digits = f"{size:.0f}" if size >= 100 else f"{size:.1f}" if size >= 10 else f"{size:.3g}"
    if size < 10 and "e" not in digits:
        digits = f"{size:.2f}" if size >= 1 else f"{size:.2g}"
    return ("+" if delta > 0 else "-") + digits


def significant(value: float) -> float:
    """``value`` to five significant digits (whole numbers stay whole)."""
    if value == 0 or not math.isfinite(value):
        return value
    return round(value, max(0, 4 - math.floor(math.log10(abs(value)))))
