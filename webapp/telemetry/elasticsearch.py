"""Logs from Elasticsearch or OpenSearch (the ``opensearch-py`` client speaks to both).

``opensearch-py`` is used rather than ``elasticsearch``: it runs the same ``_search`` API
against OpenSearch and Elasticsearch alike, while the ``elasticsearch`` 8 client refuses
servers that are not Elasticsearch. Fields follow ECS by default and are configurable
(``ELASTICSEARCH_FIELD_MAP``): ``timestamp=@timestamp``, ``service=service.name``,
``level=log.level``, ``message=message``, ``trace_id=trace.id``. Records come newest first
(sorted on the timestamp field); ``total`` is the server's exact hit count
(``track_total_hits``). Level filters match every spelling of the level; keywords are a
``match_phrase`` on the message field. Retries are the client's own (``max_retries`` =
attempts - 1, on timeouts and 502/503/504).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from opensearchpy import OpenSearch
from opensearchpy import exceptions as es_errors

from .common import (
    LEVEL_SPELLINGS,
    Clock,
    canonical_level,
    check_limit,
    level_filter,
    parse_timestamp,
    record,
    unknown_service,
    utc_now,
)
from .common import window as checked_window
from .http import HttpOptions
from .logsource import LogSource
from .port import TelemetryError

DEFAULT_FIELDS = {
    "timestamp": "@timestamp",
    "service": "service.name",
    "level": "log.level",
    "message": "message",
    "trace_id": "trace.id",
}


def client_for(options: HttpOptions) -> OpenSearch:
    """An ``OpenSearch`` client with the backend's auth, TLS, timeout and retry options."""
    headers = dict(options.headers)
    if options.bearer_token:
        headers["Authorization"] = f"Bearer {options.bearer_token}"
    auth = (options.username, options.password or "") if options.username else None
    return OpenSearch(
        hosts=[options.url],
        http_auth=auth,
        headers=headers,
        verify_certs=options.tls_verify,
        ca_certs=options.ca_bundle,
        ssl_show_warn=False,
        timeout=options.timeout_seconds,
        max_retries=max(0, options.attempts - 1),
        retry_on_timeout=True,
        retry_on_status=(502, 503, 504),
    )


def _get(source: Mapping[str, Any], dotted: str) -> Any:
    if dotted in source:
        return source[dotted]
    value: Any = source
    for part in dotted.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


class ElasticsearchBackend(LogSource):
    """The logs signal of ``TelemetryBackend`` over an Elasticsearch/OpenSearch index."""

    system = "Elasticsearch"

    name = "elasticsearch"

    def __init__(
        self,
        options: HttpOptions,
        index: str,
        *,
        fields: Mapping[str, str] | None = None,
        aliases: dict[str, list[str]] | None = None,
        clock: Clock = utc_now,
    ) -> None:
        self.options = options
        self.index = index
        self.fields = {**DEFAULT_FIELDS, **(fields or {})}
        self.client = client_for(options)
        self._aliases = aliases or {}
        self._clock = clock

    def reference_time(self) -> datetime:
        """The clock."""
        return self._clock()

    def _call(self, what: str, call: Any, **kwargs: Any) -> Any:
        try:
            return call(**kwargs)
        except es_errors.ConnectionTimeout:
            raise TelemetryError(
                f"Elasticsearch at {self.options.url} did not answer within "
                f"{self.options.timeout_seconds:g} s ({self.options.attempts} attempt(s))"
            ) from None
        except es_errors.ConnectionError as exc:
            raise TelemetryError(
                f"Elasticsearch at {self.options.url} is unreachable ({exc.error})"
            ) from None
        except (es_errors.AuthenticationException, es_errors.AuthorizationException) as exc:
            raise TelemetryError(
                f"Elasticsearch at {self.options.url} rejected the credentials "
                f"(HTTP {exc.status_code}); check its bearer token or username/password"
            ) from None
        except es_errors.SerializationError as exc:
            raise TelemetryError(
                f"Elasticsearch answered {what} with a malformed body: {exc}"
            ) from None
        except es_errors.TransportError as exc:
            raise TelemetryError(
                f"Elasticsearch {what} failed with HTTP {exc.status_code}: {str(exc.error)[:300]}"
            ) from None

    def _search(self, body: dict[str, Any]) -> dict[str, Any]:
        answer = self._call("_search", self.client.search, index=self.index, body=body)
        if not isinstance(answer, dict) or not isinstance(answer.get("hits"), dict):
            raise TelemetryError(f"Elasticsearch _search answer has no hits: {str(answer)[:200]}")
        return answer

    def services(self) -> list[str]:
        """Distinct values of the service field (a terms aggregation; empty while unreachable)."""
        field = self.fields["service"]
        body = {"size": 0, "aggs": {"services": {"terms": {"field": field, "size": 1000}}}}
        try:
            answer = self._search(body)
        except TelemetryError as exc:
            self.catalog_error = str(exc)
            return []
        self.catalog_error = None
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

    def query_logs(
        self,
        *,
        service: str,
        start: datetime,
        end: datetime,
        level: str | None = None,
        keyword: str | None = None,
        limit: int = 50,
    ) -> dict[str, Any]:
        """Records of ``service`` in ``[start, end)``, newest first."""
        name = str(service).strip()
        start, end = checked_window(start, end)
        check_limit(limit)
        answer = self._search(
            self.search_body(name, start, end, level_filter(level), keyword, limit)
        )
        hits = answer["hits"]
        total_info = hits.get("total")
        total = int(total_info.get("value", 0) if isinstance(total_info, dict) else total_info or 0)
        rows = [self._record(name, hit.get("_source") or {}) for hit in hits.get("hits") or []]
        records = [r for r in rows if r is not None]
        if not records and total == 0:
            known = self.services()
            if known and name not in known:
                raise unknown_service(service, known)
        return {"records": records, "total": total, "truncated": total > len(records)}

    def _record(self, service: str, source: Mapping[str, Any]) -> dict[str, Any] | None:
        moment = parse_timestamp(_get(source, self.fields["timestamp"]))
        if moment is None:
            return None
        return record(
            moment,
            str(_get(source, self.fields["service"]) or service),
            canonical_level(_get(source, self.fields["level"])),
            str(_get(source, self.fields["message"]) or ""),
            _get(source, self.fields["trace_id"]),
        )

    def probe(self) -> dict[str, Any]:
        """Reachability, version and latency (the root ``info`` call)."""
        started = time.perf_counter()
        try:
            info = self._call("info", self.client.info)
            version = (info.get("version") or {}).get("number") if isinstance(info, dict) else None
            error = None
        except TelemetryError as exc:
            version, error = None, str(exc)
        return {
            "system": "Elasticsearch",
            "url": self.options.url,
            "reachable": error is None,
            "version": version,
            "latencyMs": round((time.perf_counter() - started) * 1000, 1),
            "error": error,
        }
