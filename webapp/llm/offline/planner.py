"""The offline planner: which services, which window, which queries."""

from __future__ import annotations

from typing import Any

from .conversation import Catalog
from .question import Window, iso, mentioned_services, question_window

MAX_SERVICES = 2


def golden_metrics(catalog: Catalog, service: str) -> list[str]:
    """The latency and error-rate metrics of ``service`` (the first two golden signals).

    A service with neither (a database, a cache) gets its own metrics, up to three.
    """
    metrics = catalog.metrics_of(service)
    latency = [m for m in metrics if "latency" in m or "duration" in m]
    latency.sort(key=lambda m: (0 if "p95" in m else 1 if "p99" in m else 2, m))
    errors = [m for m in metrics if "error" in m]
    golden = latency[:1] + errors[:1]
    if golden or len(metrics) == len(catalog.metrics):
        return golden
    return [m for m in metrics if "cpu" not in m][:3]


def service_queries(catalog: Catalog, service: str, window: Window) -> list[dict[str, Any]]:
    """Logs before/after the split per level, and the golden metrics across it."""
    after, before = window.after(), window.before()
    queries = []
    for level in ("ERROR", "WARN"):
        for label, (start, end) in (("after", after), ("before", before)):
            queries.append(
                {
                    "tool": "query_logs",
                    "arguments": {
                        "service": service,
                        "level": level,
                        "start": iso(start),
                        "end": iso(end),
                        "limit": 100,
                    },
                    "purpose": f"{level} lines {label} {iso(window.split)}",
                }
            )
    for metric in golden_metrics(catalog, service):
        queries.append(
            {
                "tool": "query_metrics",
                "arguments": {
                    "service": service,
                    "metric": metric,
                    "start": iso(before[0]),
                    "end": iso(window.end),
                },
                "purpose": f"{metric} before vs after {iso(window.split)}",
            }
        )
    return queries


def plan(request: dict[str, Any], catalog: Catalog) -> dict[str, Any]:
    """A ``planner_plan`` for the question (FULL) or for the verifier's gaps."""
    window = question_window(str(request.get("question", "")), request.get("reference_time"))
    if request.get("mode") == "EVIDENCE_GAP_ONLY":
        return gap_plan(request, catalog, window)
    services = mentioned_services(str(request.get("question", "")), catalog.services)
    queries = [q for s in services[:MAX_SERVICES] for q in service_queries(catalog, s, window)]
    if not queries:
        queries = [
            {
                "tool": "lookup_knowledge",
                "arguments": {"query": str(request.get("question", ""))[:300], "top_k": 3},
                "purpose": "no known service is named: look for relevant runbooks",
            }
        ]
    named = ", ".join(services[:MAX_SERVICES]) or "no known service"
    return {
        "mode": "FULL",
        "summary": f"Compare {named} before and after {iso(window.split)}: new log patterns, "
        "latency and error-rate shifts, then follow what they point at.",
        "hypotheses": [f"{s} changed behaviour at {iso(window.split)}" for s in services],
        "queries": queries[:12],
    }


def gap_plan(request: dict[str, Any], catalog: Catalog, window: Window) -> dict[str, Any]:
    """Queries for the services the verifier's gaps name, nothing else."""
    queries: list[dict[str, Any]] = []
    seen: set[str] = set()
    for gap in request.get("evidence_gaps") or []:
        service = (gap.get("suggested_arguments") or {}).get("service")
        if service in catalog.services and service not in seen:
            seen.add(service)
            queries += service_queries(catalog, service, window)
    if not queries:
        queries = [
            {
                "tool": "lookup_knowledge",
                "arguments": {
                    "query": " ".join(
                        g.get("description", "") for g in request.get("evidence_gaps") or []
                    )[:300]
                },
                "purpose": "the gaps name no service: search the runbooks",
            }
        ]
    return {
        "mode": "EVIDENCE_GAP_ONLY",
        "summary": "Close the verifier's gaps: "
        + "; ".join(g.get("description", "") for g in request.get("evidence_gaps") or []),
        "hypotheses": [f"the cause lives in {s}" for s in sorted(seen)],
        "queries": queries[:12],
    }
