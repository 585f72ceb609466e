"""The offline planner: which services, which window, which queries.

Each service the question names (``question.understand``) gets its own trail; a question about
alerts also reads the firing alerts; an unknown service is said to be unknown, never guessed.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from ...analysis.language import asks_what_is_wrong
from ...analysis.timeexpr import DEFAULT_TIMEZONE
from . import values
from .conversation import Catalog, call
from .question import Understanding, Window, iso, request_window, understand, window_record
from .suspects import TRIAGE, triage_call

#: Services the plan follows, each with its own trail (first named first).
MAX_SERVICES = 3
#: The planner_plan contract's limit on queries.
MAX_QUERIES = 12
#: How much calm before the split is read as the baseline.
BASELINE = timedelta(hours=1)
ANALYSE = "detect_anomalies"
PATTERNS = "log_patterns"


def service_queries(catalog: Catalog, service: str, window: Window) -> list[dict[str, Any]]:
    """``detect_anomalies`` and ``log_patterns`` over the question's window (none without the
    analysis tools, which the product always offers)."""
    if not (catalog.has(ANALYSE) and catalog.has(PATTERNS)):
        return []
    analyse = analysis_query(service, window)
    purpose = f"log templates of {service}, new ones flagged"
    return [analyse, call(PATTERNS, purpose, **analyse["arguments"])]


def analysis_query(service: str, window: Window) -> dict[str, Any]:
    """``detect_anomalies`` for ``service``: over the recent range, or from ``BASELINE``
    before the stated onset to its end."""
    if not window.stated:
        purpose = f"no time given: onsets of every signal of {service} over the recent range"
        return call(ANALYSE, purpose, service=service)
    purpose = f"onsets and baselines of every signal of {service} around {iso(window.split)}"
    return call(
        ANALYSE, purpose, service=service, start=iso(window.split - BASELINE), end=iso(window.end)
    )


def trails(catalog: Catalog, services: list[str], window: Window) -> list[dict[str, Any]]:
    """One trail per service: without a stated time ``detect_anomalies`` over the recent range
    (comparisons follow at the onset it finds, ``window.follow_ups``), else ``comparisons``."""
    services = services[:MAX_SERVICES]
    if not window.stated and catalog.has(ANALYSE):
        return [analysis_query(service, window) for service in services]
    return comparisons(catalog, services, window)


def comparisons(
    catalog: Catalog, services: list[str], window: Window, limit: int = MAX_QUERIES
) -> list[dict[str, Any]]:
    """``service_queries`` around the split for each service while room remains in ``limit``;
    a service that no longer fits gets ``detect_anomalies`` alone."""
    queries: list[dict[str, Any]] = []
    for service in services[:MAX_SERVICES]:
        full = service_queries(catalog, service, window)
        if len(queries) + len(full) <= limit:
            queries += full
        elif catalog.has(ANALYSE) and len(queries) < limit:
            queries.append(analysis_query(service, window))
    return queries


def triage_query(question: str, window: Window) -> dict[str, Any]:
    """``triage`` over the whole catalog; with a stated time, as ``suspects.triage_call`` from
    it."""
    purpose = "no service is named for sure: rank every service that changed"
    found = triage_call(window.split, iso(window.end)) if window.stated else call(TRIAGE)
    return call(TRIAGE, purpose, hint=question[:500], **found["arguments"])


def plan(
    request: dict[str, Any], catalog: Catalog, default_timezone: str = DEFAULT_TIMEZONE
) -> dict[str, Any]:
    """A ``planner_plan`` for the question (FULL) or for the verifier's gaps, with the window
    it resolved and the names it could not."""
    question = str(request.get("question", ""))
    if request.get("mode") == "EVIDENCE_GAP_ONLY":
        window = request_window(request, default_timezone)
        return {**gap_plan(request, catalog, window), "window": window_record(window)}
    history = [h for h in request.get("history") or [] if isinstance(h, dict)]
    now = request.get("reference_time")
    seen = understand(question, now, catalog.services, catalog.aliases, history, default_timezone)
    services = (seen.dependencies + seen.services)[:MAX_SERVICES]
    queries: list[dict[str, Any]] = []
    # "alerts fired, what is going on?" asks what is wrong too: triage answers that part
    wide = (
        seen.system_wide
        and catalog.has(TRIAGE)
        and (not seen.asks_alerts or asks_what_is_wrong(question))
    )
    if seen.asks_alerts and catalog.has("query_alerts"):
        purpose = "the question asks about alerts: which are firing now"
        queries.append(call("query_alerts", purpose, state="firing"))
    if wide:
        services = []
        queries.append(triage_query(question, seen.window))
    queries += trails(catalog, services, seen.window)
    notes = _unknown_notes(seen)
    if not queries:
        purpose = "; ".join(notes) or "no known service is named: look for runbooks"
        queries = [call("lookup_knowledge", purpose, query=question[:300], top_k=3)]
    # a plan reading no telemetry over time (alerts now, unknown names) shows no window
    windowed = any(q["tool"] in WINDOWED for q in queries)
    moved = [f"{s} changed behaviour at {iso(seen.window.split)}" for s in services]
    planned: dict[str, Any] = {
        "mode": "FULL",
        "summary": _summary(seen, services, notes, wide)[:2000],
        "hypotheses": (moved + notes)[:10],
        "queries": queries[:MAX_QUERIES],
        "window": window_record(seen.window) if windowed else None,
        "unknown_services": [
            {"name": u.text, "suggestions": list(u.suggestions)} for u in seen.unknown[:5]
        ],
    }
    asked = values.queries({**request, "plan": planned}, catalog)
    planned["queries"] = (asked + planned["queries"])[:MAX_QUERIES]
    return planned


#: Tools whose reading depends on a time window.
WINDOWED = ("query_logs", "query_metrics", ANALYSE, "log_patterns", TRIAGE)


def _unknown_notes(seen: Understanding) -> list[str]:
    return [
        f"{u.text} is not a service this system has telemetry for"
        + (f" (closest: {', '.join(u.suggestions)})" if u.suggestions else "")
        for u in seen.unknown
    ]


def _summary(seen: Understanding, services: list[str], notes: list[str], wide: bool) -> str:
    window = seen.window
    when = f' (read from "{window.resolved.text}")' if window.stated and window.resolved else ""
    said = {
        f"Compare {', '.join(services)} before and after {iso(window.split)}{when}: new log "
        "patterns, latency and error-rate shifts, then follow what they point at.": services,
        "A follow-up: the services and window come from the previous turn.": seen.follow_up,
        f"It asks about a dependency: {', '.join(seen.dependencies)}, which the previous answer "
        "found in the data.": seen.dependencies,
        "It asks about alerts: read the firing alerts.": seen.asks_alerts,
        "No service is named for sure: triage every service, then follow the suspects that "
        "changed first near the time asked about.": wide,
    }
    parts = [sentence for sentence, asked in said.items() if asked]
    return " ".join(parts + [f"{note}." for note in notes]) or "No known service is named."


def gap_plan(request: dict[str, Any], catalog: Catalog, window: Window) -> dict[str, Any]:
    """Queries for the services the verifier's gaps name, nothing else."""
    gaps = request.get("evidence_gaps") or []
    said = [g.get("description", "") for g in gaps]
    named = [(g.get("suggested_arguments") or {}).get("service") for g in gaps]
    services = list(dict.fromkeys(s for s in named if s in catalog.services))
    if services and not window.stated and catalog.has(ANALYSE):
        queries = trails(catalog, services, window)
    else:
        queries = [q for s in services for q in service_queries(catalog, s, window)]
    if not queries:
        purpose = "the gaps name no service: search the runbooks"
        queries = [call("lookup_knowledge", purpose, query=" ".join(said)[:300])]
    return {
        "mode": "EVIDENCE_GAP_ONLY",
        "summary": "Close the verifier's gaps: " + "; ".join(said),
        "hypotheses": [f"the cause lives in {s}" for s in sorted(services)],
        "queries": queries[:12],
    }
