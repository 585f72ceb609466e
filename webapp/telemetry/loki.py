"""Logs from Loki (LogQL over ``/loki/api/v1/query_range``), newest first.

Services are the values of the service label; a level filter matches every spelling of the level
in the level label; a keyword is a case-insensitive line filter. ``total`` is the server's
``count_over_time`` (``total_unknown`` when that fails). A JSON line gives message, level and
trace id as a log file's JSON line would (:mod:`.logformats`); else the line is the message and
labels give the rest; the level label wins over the line's own level.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

from .common import LEVEL_SPELLINGS, Clock, canonical_level, record, unknown_service, utc_now
from .http import HttpSource
from .logformats import json_fields, json_object
from .partial import PartialSource
from .port import TelemetryError
from .prometheus import selector_value


class LokiBackend(PartialSource):
    """The logs signal of ``TelemetryBackend`` over Loki."""

    system = "Loki"

    name = "loki"

    def __init__(
        self,
        http: HttpSource,
        *,
        service_label: str = "service_name",
        level_label: str = "level",
        clock: Clock = utc_now,
    ) -> None:
        self.http = http
        self.service_label = service_label
        self.level_label = level_label
        self._clock = clock

    def _services(self) -> list[str]:
        now = self._clock()
        values = self.http.get_data(
            f"/loki/api/v1/label/{self.service_label}/values",
            {"start": _ns(now) - 6 * 3600 * 10**9, "end": _ns(now)},
        )
        return sorted(str(v) for v in values) if isinstance(values, list) else []

    def services(self) -> list[str]:
        """Values of the service label seen in the last 6 hours (empty while unreachable)."""
        return self._listed(self._services)

    def selector(self, service: str, level: str | None, keyword: str | None) -> str:
        """The LogQL log query for the filters."""
        matchers = [f"{self.service_label}={selector_value(service)}"]
        if level:
            spellings = "|".join(s.lower() for s in LEVEL_SPELLINGS[level])
            matchers.append(f"{self.level_label}=~{selector_value('(?i)(' + spellings + ')')}")
        query = "{" + ", ".join(matchers) + "}"
        if keyword and keyword.strip():
            query += f" |~ {selector_value('(?i)' + re.escape(keyword.strip()))}"
        return query

    def _logs(
        self,
        name: str,
        start: datetime,
        end: datetime,
        level: str | None,
        keyword: str | None,
        limit: int,
    ) -> dict[str, Any]:
        query = self.selector(name, level, keyword)
        data = self.http.get_data(
            "/loki/api/v1/query_range",
            {
                "query": query,
                "start": _ns(start),
                "end": _ns(end),
                "limit": limit,
                "direction": "backward",
            },
        )
        if not isinstance(data, dict) or data.get("resultType") != "streams":
            raise TelemetryError("Loki's answer is not a list of log streams")
        rows = [row for stream in data.get("result") or [] for row in self._rows(name, stream)]
        if not rows and name not in self._services():
            raise unknown_service(name, self._services())
        rows.sort(key=lambda row: row[0], reverse=True)
        records = [r for _, r in rows[:limit]]
        try:
            total = self._count(query, start, end, len(rows))
        except TelemetryError:
            # The records stand without their count: a full page may have more behind it.
            found = {"records": records, "total": len(rows), "truncated": len(rows) >= limit}
            return {**found, "total_unknown": True}
        return {"records": records, "total": total, "truncated": total > limit}

    def _rows(self, service: str, stream: Any) -> list[tuple[int, dict[str, Any]]]:
        labels = stream.get("stream") or {} if isinstance(stream, dict) else {}
        rows = []
        for value in stream.get("values") or [] if isinstance(stream, dict) else []:
            stamp, line = int(value[0]), str(value[1])
            meta = value[2] if len(value) > 2 and isinstance(value[2], dict) else {}
            item = json_object(line) if line.startswith("{") else None
            level, message, trace = json_fields(item, line) if item else (None, line, None)
            level = labels.get(self.level_label) or level
            trace = trace or meta.get("trace_id") or labels.get("trace_id")
            moment = datetime.fromtimestamp(stamp / 1e9, tz=timezone.utc)
            rows.append((stamp, record(moment, service, canonical_level(level), message, trace)))
        return rows

    def _count(self, query: str, start: datetime, end: datetime, fallback: int) -> int:
        seconds = max(1, int((end - start).total_seconds()))
        data = self.http.get_data(
            "/loki/api/v1/query",
            {"query": f"sum(count_over_time({query} [{seconds}s]))", "time": _ns(end)},
        )
        result = data.get("result") if isinstance(data, dict) else None
        if not result:
            return fallback
        try:
            return max(fallback, int(float(result[0]["value"][1])))
        except (KeyError, IndexError, TypeError, ValueError):
            return fallback

    def probe(self) -> dict[str, Any]:
        """Reachability, version and latency (``/loki/api/v1/status/buildinfo``)."""
        return self.http.probe("/loki/api/v1/status/buildinfo", "version")


def _ns(moment: datetime) -> int:
    return int(moment.timestamp() * 1e9)
