"""The series behind each ``detect_anomalies`` finding, recorded in the tool's output.

:class:`Analysed` runs the detector and remembers the series each signal's detector saw;
:meth:`Analysed.as_dicts` adds to each finding its ``points`` (``[timestamp, value]`` pairs,
oldest first; a log signal's line counts per bucket start) and ``downsampled`` (true when
``points`` is not every point). A series longer than its share of the budget (``MAX_POINTS``
per finding, about ``BUDGET`` per output, never under ``MIN_POINTS``) is thinned by LTTB
("largest triangle three buckets"), keeping the onset, the last baseline point and the peak.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from datetime import datetime
from operator import itemgetter
from typing import Any

from ..telemetry.common import iso
from .onsets import Finding, Point, detect_ongoing, detect_onset, finite_points, significant

#: The most points recorded for one finding (about one per chart pixel column that matters).
MAX_POINTS = 120
#: About this many points per ``detect_anomalies`` output, shared by its findings.
BUDGET = 360
#: A finding's share of the budget never falls below this.
MIN_POINTS = 24


class Analysed:
    """Runs the detector on each signal and keeps the series it analysed, by signal."""

    def __init__(self) -> None:
        self.series: dict[tuple[str, str], list[Point]] = {}

    def detect_since(
        self,
        points: Sequence[Point],
        since: datetime,
        *,
        signal: str,
        kind: str = "metric",
        **options: Any,
    ) -> Finding | None:
        """A change that began before ``since`` and still holds after it (``detect_ongoing``
        over all ``points``), else a change in the points from ``since`` on (``detect_onset``);
        the series analysed is remembered for ``(kind, signal)``."""
        inside = points[bisect.bisect_left(points, since, key=itemgetter(0)) :]  # oldest first
        if len(inside) < len(points):
            found = detect_ongoing(points, since, signal=signal, kind=kind, **options)
            if found is not None:
                self.series[kind, signal] = list(points)
                return found
        self.series[kind, signal] = list(inside)
        return detect_onset(inside, signal=signal, kind=kind, **options)

    def as_dicts(self, findings: Sequence[Finding]) -> list[dict[str, Any]]:
        """The findings' raw-output dicts, each with its ``points`` and ``downsampled``."""
        limit = share(len(findings))
        out = []
        for finding in findings:
            points, downsampled = curve(
                self.series.get((finding.kind, finding.signal), []), finding, limit
            )
            out.append({**finding.as_dict(), "points": points, "downsampled": downsampled})
        return out


def share(findings: int) -> int:
    """Points per finding when an output has ``findings`` of them."""
    return max(MIN_POINTS, min(MAX_POINTS, BUDGET // max(1, findings)))


def curve(points: Sequence[Point], finding: Finding, limit: int) -> tuple[list[list[Any]], bool]:
    """The finding's series as recorded: at most ``limit`` (at least 6) points, anchors kept."""
    clean = finite_points(points)
    if len(clean) <= limit:
        return [_point(p) for p in clean], False
    times = [t for t, _ in clean]
    # the last point at or before each anchor (a log onset lies inside its bucket)
    moments = (finding.onset, finding.baseline.end, finding.incident.peak_at)
    anchors = {bisect.bisect_right(times, moment) - 1 for moment in moments}
    kept = set(lttb(clean, limit - len(anchors))) | anchors  # room for the anchors
    return [_point(clean[i]) for i in sorted(kept)], True


def lttb(points: Sequence[tuple[datetime, float]], limit: int) -> list[int]:
    """Indices of ``limit`` points that keep the series' shape (LTTB); first and last kept."""
    n = len(points)
    if limit >= n or limit < 3:
        return list(range(n))
    first = points[0][0]
    xs = [(p[0] - first).total_seconds() for p in points]
    ys = [p[1] for p in points]
    every = (n - 2) / (limit - 2)
    # bucket b holds [edges[b], edges[b + 1]); the one after the last is the last point
    edges = [int(b * every) + 1 for b in range(limit)]
    chosen = [0]
    ax, ay = xs[0], ys[0]
    for bucket in range(limit - 2):
        lo, hi = edges[bucket], edges[bucket + 1]
        nxt_lo, nxt_hi = hi, min(edges[bucket + 2], n)
        if nxt_lo >= nxt_hi:  # the last bucket: the next "bucket" is the last point
            nxt_lo, nxt_hi = n - 1, n
        size = nxt_hi - nxt_lo
        avg_x = sum(xs[nxt_lo:nxt_hi]) / size
        avg_y = sum(ys[nxt_lo:nxt_hi]) / size
        # twice the triangle's area, as a linear function of the candidate (x, y)
        dx, dy = ax - avg_x, avg_y - ay
        best, best_area = lo, -1.0
        for i in range(lo, min(hi, n - 1)):
            area = abs(dx * (ys[i] - ay) + (xs[i] - ax) * dy)
            if area > best_area:
                best, best_area = i, area
        chosen.append(best)
        ax, ay = xs[best], ys[best]
    chosen.append(n - 1)
    return chosen


def _point(point: tuple[datetime, float]) -> list[Any]:
    return [iso(point[0]), significant(point[1])]
