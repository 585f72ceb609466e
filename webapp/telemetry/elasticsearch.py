"""Logs from Elasticsearch or OpenSearch (``_search``), newest first.

Fields follow ECS unless mapped (``ELASTICSEARCH_FIELD_MAP``); ``total`` is the exact hit count;
a level filter matches every spelling of the level, a keyword is a ``match_phrase``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from .common import (
    LEVEL_SPELLINGS,
    Clock,
    canonical_level,
    parse_timestamp,
    record,
    unknown_service,
    utc_now,
)
from .http import HttpOptions, HttpSource
from .logformats import lookup
from .partial import PartialSource
from .port import TelemetryError

DEFAULT_FIELDS = {
    "timestamp": "@timestamp",
    "service": "service.name",
    "level": "log.level",
    "message": "message",
    "trace_id": "trace.id",
}


class ElasticsearchBackend(PartialSource):
    """The logs signal of ``TelemetryBackend`` over an Elasticsearch/OpenSearch index."""

    system = "Elasticsearch"

    name = "elasticsearch"

    def __init__(
        self,
        options: HttpOptions,
        index: str,
        *,
        fields: Mapping[str, str] | None = None,
        clock: Clock = utc_now,
    ) -> None:
        self.index = index
        self.fields = {**DEFAULT_FIELDS, **(fields or {})}
        self.http = HttpSource(self.system, options)
        self._clock = clock

    def _search(self, body: dict[str, Any]) -> dict[str, Any]:
        answer = self.http.request("POST", f"/{self.index}/_search", json=body)
        if not isinstance(answer, dict) or not isinstance(answer.get("hits"), dict):
            raise TelemetryError(f"Elasticsearch _search answer has no hits: {str(answer)[:200]}")
        return answer

    def services(self) -> list[str]:
        """Distinct values of the service field (a terms aggregation; empty while unreachable)."""
        return self._listed(self._services)

    def _services(self) -> list[str]:
        field = self.fields["service"]
        body = {"size": 0, "aggs": {"services": {"terms": {"field": field, "size": 1000}}}}
        answer = self._search(body)
        buckets = (answer.get("aggregations") or {}).get("services", {}).get("buckets", [])
        return sorted(str(b["key"]) for b in buckets if isinstance(b, dict) and "key" in b)

    def search_body(
        self,
        service: str,
        start: datetime,
        end: datetime,
        level: str | None,
        keyword: str | None,
        limit: int,
    ) -> dict[str, Any]:
        """The ``_search`` request for the filters."""
        stamp = self.fields["timestamp"]
        filters: list[dict[str, Any]] = [
            {"term": {self.fields["service"]: service}},
            {"range": {stamp: {"gte": start.isoformat(), "lt": end.isoformat()}}},
        ]
        if level:
            spellings = LEVEL_SPELLINGS[level]
            filters.append(
                {"terms": {self.fields["level"]: spellings + [s.lower() for s in spellings]}}
            )
        must = []
        if keyword and keyword.strip():
            must.append({"match_phrase": {self.fields["message"]: keyword.strip()}})
        return {
            "size": limit,
            "track_total_hits": True,
            "sort": [{stamp: {"order": "desc"}}],
            "query": {"bool": {"filter": filters, "must": must}},
        }

    def _logs(
        self,
        name: str,
        start: datetime,
        end: datetime,
        level: str | None,
        keyword: str | None,
        limit: int,
    ) -> dict[str, Any]:
        answer = self._search(self.search_body(name, start, end, level, keyword, limit))
        hits = answer["hits"]
        total_info = hits.get("total")
        total = int(total_info.get("value", 0) if isinstance(total_info, dict) else total_info or 0)
        rows = [self._record(name, hit.get("_source") or {}) for hit in hits.get("hits") or []]
        records = [r for r in rows if r is not None]
        if not records and total == 0:
            known = self.services()
            if known and name not in known:
                raise unknown_service(name, known)
        return {"records": records, "total": total, "truncated": total > len(records)}

    def _record(self, service: str, source: dict[str, Any]) -> dict[str, Any] | None:
        moment = parse_timestamp(lookup(source, self.fields["timestamp"]))
        if moment is None:
            return None
        return record(
            moment,
            str(lookup(source, self.fields["service"]) or service),
            canonical_level(lookup(source, self.fields["level"])),
            str(lookup(source, self.fields["message"]) or ""),
            lookup(source, self.fields["trace_id"]),
        )

    def probe(self) -> dict[str, Any]:
        """Reachability, version and latency (the root ``info`` call)."""
        return self.http.probe("/", "version", "number")
