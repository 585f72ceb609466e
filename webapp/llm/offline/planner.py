"""The offline planner: which services, which window, which queries.

The question is read by ``question.understand`` (time expression, service names with aliases
and misspellings, unknown names, alerts, follow-ups). Each named service gets its own trail;
a question about alerts also queries the firing alerts; an unknown service is said to be
unknown (with the closest names) in the summary and hypotheses instead of being guessed.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from .conversation import Catalog
from .question import Window, iso, question_window, understand

#: Services the plan follows, each with its own trail (first named first).
MAX_SERVICES = 3
#: The planner_plan contract's limit on queries.
MAX_QUERIES = 12
#: How much calm before a stated onset detect_anomalies is asked to read.
BASELINE = timedelta(hours=1)
ANALYSE = "detect_anomalies"
PATTERNS = "log_patterns"


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
    """``detect_anomalies`` and ``log_patterns`` over the question's window (the executor
    follows what they show); without the analysis tools, logs and golden metrics."""
    if catalog.has(ANALYSE) and catalog.has(PATTERNS):
        analyse = analysis_query(service, window)
        patterns = {
            "tool": PATTERNS,
            "arguments": dict(analyse["arguments"]),
            "purpose": f"log templates of {service}, new ones flagged",
        }
        return [analyse, patterns]
    after, before = window.after(), window.before()
    queries = [
        {
            "tool": "query_logs",
            "arguments": {
                "service": service,
                "level": "ERROR",
                "start": iso(after[0]),
                "end": iso(after[1]),
                "limit": 100,
            },
            "purpose": f"ERROR lines after {iso(window.split)}",
        }
    ]
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


def analysis_query(service: str, window: Window) -> dict[str, Any]:
    """``detect_anomalies`` for ``service``: over the recent range when the question gave no
    time, else from an hour before the stated onset (so a baseline exists) to its end."""
    arguments: dict[str, Any] = {"service": service}
    resolved = window.resolved
    if resolved is not None and resolved.found:
        arguments["start"] = iso(window.split - BASELINE)
        arguments["end"] = iso(window.end)
        purpose = f"onsets and baselines of every signal of {service} around {iso(window.split)}"
    else:
        purpose = f"no time given: onsets of every signal of {service} over the recent range"
    return {"tool": "detect_anomalies", "arguments": arguments, "purpose": purpose}


def trails(catalog: Catalog, services: list[str], window: Window) -> list[dict[str, Any]]:
    """One trail per service, within the plan's ``MAX_QUERIES``.

    The first service gets the full comparison (logs and golden metrics before and after the
    split); without a stated time it also gets ``detect_anomalies`` over the recent range,
    since "the last hour" may miss an incident that began earlier. Every further service gets
    the full comparison while room remains, else ``detect_anomalies`` alone.
    """
    no_time = window.resolved is None or not window.resolved.found
    queries: list[dict[str, Any]] = []
    for n, service in enumerate(services[:MAX_SERVICES]):
        full = service_queries(catalog, service, window)
        if n == 0:
            head = [analysis_query(service, window)] if no_time and catalog.has(ANALYSE) else []
            queries += head + full
        elif len(queries) + len(full) <= MAX_QUERIES:
            queries += full
        elif catalog.has(ANALYSE) and len(queries) < MAX_QUERIES:
            queries.append(analysis_query(service, window))
    return queries


def alert_query() -> dict[str, Any]:
    """The firing alerts."""
    return {
        "tool": "query_alerts",
        "arguments": {"state": "firing"},
        "purpose": "the question asks about alerts: which are firing now",
    }


def plan(request: dict[str, Any], catalog: Catalog) -> dict[str, Any]:
    """A ``planner_plan`` for the question (FULL) or for the verifier's gaps."""
    question = str(request.get("question", ""))
    if request.get("mode") == "EVIDENCE_GAP_ONLY":
        window = question_window(question, request.get("reference_time"))
        return gap_plan(request, catalog, window)
    seen = understand(
        question,
        request.get("reference_time"),
        catalog.services,
        catalog.aliases,
        [h for h in request.get("history") or [] if isinstance(h, dict)],
    )
    queries: list[dict[str, Any]] = []
    if seen.asks_alerts and catalog.has("query_alerts"):
        queries.append(alert_query())
    queries += trails(catalog, seen.services, seen.window)
    notes = [
        f"{u.text} is not a service this system has telemetry for"
        + (f" (closest: {', '.join(u.suggestions)})" if u.suggestions else "")
        for u in seen.unknown
    ]
    if not queries:
        queries = [
            {
                "tool": "lookup_knowledge",
                "arguments": {"query": question[:300], "top_k": 3},
                "purpose": "; ".join(notes) or "no known service is named: look for runbooks",
            }
        ]
    services = seen.services[:MAX_SERVICES]
    named = ", ".join(services) or "no known service"
    window = seen.window
    when = window.resolved.describe() if window.resolved else iso(window.split)
    return {
        "mode": "FULL",
        "summary": " ".join(
            [
                f"Compare {named} before and after {iso(window.split)} ({when}): new log "
                "patterns, latency and error-rate shifts, then follow what they point at.",
                *(f"{note}." for note in notes),
            ]
        )[:2000],
        "hypotheses": [f"{s} changed behaviour at {iso(window.split)}" for s in services]
        + [f"{note}" for note in notes][: 10 - len(services)],
        "queries": queries[:MAX_QUERIES],
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
