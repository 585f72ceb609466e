"""The four telemetry and knowledge tools, over a telemetry backend and the knowledge index.

What each service does, for ``triage``'s hint: the titles of the knowledge documents that name
exactly one service, without that name ("Sends the nightly invoices"). An index that cannot list
its documents gives none.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol

from ..persistence.context import current_run_or_none
from ..telemetry import TelemetryBackend
from .analysis_tools import TIME_SCHEMA, analysis_tools
from .registry import (
    REFERENCE,
    TELEMETRY,
    ToolOutput,
    ToolSpec,
    checked_window,
    object_schema,
    parse_time,
)

#: Precedes the JSON map of metrics per service in the query_metrics detail (the planner's).
METRICS_MARKER = "Metrics by service: "
#: Precedes the JSON map of other names per service (aliases, Chinese names) in the
#: query_logs description, when the backend declares any.
ALIASES_MARKER = "Service aliases: "

DEFAULT_WINDOW = timedelta(hours=1)


class KnowledgeSearch(Protocol):
    """What ``lookup_knowledge`` needs from the knowledge index."""

    def search(self, query: str, top_k: int = 3) -> list[dict[str, Any]]:
        """Best chunks first, as ``{"doc_id", "title", "source", "score", "content"}``."""
        ...


class DocFilter(Protocol):
    """De-duplicates chunks already returned in the same diagnosis (RetrievedDocTracker)."""

    def filter(self, session_key: str, documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Replace chunks already returned for ``session_key`` by short stubs."""
        ...


def window(backend: TelemetryBackend, arguments: dict[str, Any]) -> tuple[datetime, datetime]:
    """``[start, end)`` from the arguments; defaults to the hour before the backend's now."""
    end = parse_time("end", arguments.get("end")) or backend.reference_time()
    start = parse_time("start", arguments.get("start")) or end - DEFAULT_WINDOW
    return checked_window(start, end)


def telemetry_tools(backend: TelemetryBackend) -> list[ToolSpec]:
    """``query_logs``, ``query_metrics`` and ``query_alerts`` over ``backend`` (an unknown
    service or metric is the backend's error, which lists the valid ones)."""
    services = backend.services()
    aliases = backend.service_aliases()
    alias_note = (
        f" {ALIASES_MARKER}" + json.dumps(aliases, ensure_ascii=False, separators=(",", ":"))
        if aliases
        else ""
    )
    now = backend.reference_time().strftime("%Y-%m-%dT%H:%M:%SZ")
    metrics_of = backend.metrics_by_service()
    service: dict[str, Any] = {"type": "string"}
    if services:  # a live backend that is unreachable at start-up has no catalog yet
        service["enum"] = services

    def query_logs(args: dict[str, Any]) -> ToolOutput:
        start, end = window(backend, args)
        return ToolOutput(
            backend.query_logs(
                service=args["service"],
                start=start,
                end=end,
                level=args.get("level"),
                keyword=args.get("keyword"),
                limit=args["limit"],
            )
        )

    def query_metrics(args: dict[str, Any]) -> ToolOutput:
        start, end = window(backend, args)
        return ToolOutput(
            backend.query_metrics(
                service=args["service"],
                metric=args["metric"],
                start=start,
                end=end,
                step_seconds=args.get("step_seconds"),
            )
        )

    def query_alerts(args: dict[str, Any]) -> ToolOutput:
        return ToolOutput(backend.query_alerts(state=args["state"]))

    return [
        ToolSpec(
            "query_logs",
            f"Search one service's logs, newest first. Window defaults to the hour before now "
            f"({now}). Filter by exact level and a case-insensitive keyword.{alias_note}",
            object_schema(
                "service",
                service=service,
                level={"type": "string", "enum": ["ERROR", "WARN", "INFO"]},
                keyword={"type": "string", "maxLength": 200},
                start=TIME_SCHEMA,
                end=TIME_SCHEMA,
                limit={"type": "integer", "minimum": 1, "maximum": 200, "default": 50},
            ),
            query_logs,
            TELEMETRY,
        ),
        ToolSpec(
            "query_metrics",
            f"Read one metric series of a service with min/max/avg/last. Window defaults to the "
            f"hour before now ({now}). Metric names: as detect_anomalies reports them; a wrong "
            "name is answered with the service's list.",
            object_schema(
                "service",
                "metric",
                service=service,
                metric={"type": "string", "maxLength": 200},
                start=TIME_SCHEMA,
                end=TIME_SCHEMA,
                step_seconds={"type": "integer", "minimum": 60, "maximum": 86400},
            ),
            query_metrics,
            TELEMETRY,
            METRICS_MARKER + json.dumps(metrics_of, separators=(",", ":")),
        ),
        ToolSpec(
            "query_alerts",
            "List alerts by state (firing, pending or all).",
            object_schema(
                state={"type": "string", "enum": ["firing", "pending", "all"], "default": "firing"}
            ),
            query_alerts,
            TELEMETRY,
        ),
    ]


def promql_tool(backend: Any) -> ToolSpec:
    """``query_promql``: one bounded PromQL range query (offered when metrics speak PromQL)."""

    def query_promql(args: dict[str, Any]) -> ToolOutput:
        start, end = window(backend, args)
        return ToolOutput(
            backend.query_promql(
                query=args["query"], start=start, end=end, step_seconds=args.get("step_seconds")
            )
        )

    return ToolSpec(
        "query_promql",
        "Run one PromQL range query against the metrics server (e.g. a rate or a ratio the "
        "query_metrics catalog does not offer). Points and series are capped; truncated says so.",
        object_schema(
            "query",
            query={"type": "string", "minLength": 1, "maxLength": 2000},
            start=TIME_SCHEMA,
            end=TIME_SCHEMA,
            step_seconds={"type": "integer", "minimum": 15, "maximum": 86400},
        ),
        query_promql,
        TELEMETRY,
    )


def knowledge_tool(index: KnowledgeSearch, tracker: DocFilter | None) -> ToolSpec:
    """``lookup_knowledge`` over the runbook index, de-duplicated within a diagnosis."""

    def lookup_knowledge(args: dict[str, Any]) -> ToolOutput:
        found = index.search(args["query"], args["top_k"])
        identity = current_run_or_none()
        if tracker is not None and identity is not None:
            found = tracker.filter(f"{identity.session_id}:{identity.run_id}", found)
        details = {
            "query": args["query"],
            "top_k": args["top_k"],
            "doc_ids": [d["doc_id"] for d in found],
            "scores": [d["score"] for d in found],
            "already_retrieved": [d["doc_id"] for d in found if d.get("already_retrieved")],
        }
        return ToolOutput({"documents": found}, details)

    return ToolSpec(
        "lookup_knowledge",
        "Search the runbooks and uploaded knowledge (bm25 full-text). Returns the best chunks.",
        object_schema(
            "query",
            query={"type": "string", "minLength": 1, "maxLength": 500},
            top_k={"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
        ),
        lookup_knowledge,
        REFERENCE,
    )


#: A description longer than this is cut (a title is a line, not a page).
MAX_DESCRIPTION = 200


def service_descriptions(services: Sequence[str], index: Any) -> dict[str, list[str]]:
    """Titles of the knowledge documents that name one service each, by service."""
    lister = getattr(index, "documents", None)
    if not callable(lister) or not services:
        return {}
    try:
        titles = [str(doc.get("title") or "") for doc in lister()]
    except (sqlite3.Error, OSError):
        return {}
    patterns = {s: re.compile(rf"\(?(?<![\w-]){re.escape(s)}(?![\w-])\)?", re.I) for s in services}
    found: dict[str, list[str]] = {}
    for title in titles:
        named = [s for s, pattern in patterns.items() if pattern.search(title)]
        if len(named) != 1:
            continue
        text = re.sub(r"\s+", " ", patterns[named[0]].sub(" ", title)).strip(" -/:")
        if text:
            found.setdefault(named[0], []).append(text[:MAX_DESCRIPTION])
    return found


def diagnosis_tools(
    backend: TelemetryBackend, index: KnowledgeSearch, tracker: DocFilter | None
) -> list[ToolSpec]:
    """The complex-chat executor's tools: knowledge, logs, metrics, alerts, the analysis tools
    and, when the metrics backend speaks PromQL, ``query_promql``."""
    logs, metrics, alerts = telemetry_tools(backend)
    analysis = analysis_tools(
        backend, backend.service_aliases(), service_descriptions(backend.services(), index)
    )
    tools = [knowledge_tool(index, tracker), logs, metrics, alerts, *analysis]
    if getattr(backend, "speaks_promql", False):
        tools.append(promql_tool(backend))
    return tools
