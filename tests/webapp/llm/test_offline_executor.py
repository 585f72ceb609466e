"""The offline executor's chain from an asked service to its culprit, over recorded outputs."""

from __future__ import annotations

from typing import Any

from webapp.llm.offline.conversation import Catalog, Done
from webapp.llm.offline.executor import Investigation

SERVICES = ["api", "db"]
CATALOG = Catalog(
    [{"name": "query_logs", "parameters": {"properties": {"service": {"enum": SERVICES}}}}]
)


def detect(service: str, *findings: dict[str, Any]) -> Done:
    result = {"window": {"start": "2026-11-30T08:00:00Z"}, "findings": list(findings)}
    return Done("detect_anomalies", {"service": service}, f"d-{service}", "SUCCESS", result)


def finding(signal: str, kind: str, onset: str) -> dict[str, Any]:
    return {"signal": signal, "kind": kind, "onset": f"2026-11-30T{onset}:00Z", "significance": 9}


def lines(service: str, *messages: str) -> Done:
    records = [{"message": m, "level": "ERROR"} for m in messages]
    return Done("query_logs", {"service": service}, f"l-{service}", "SUCCESS", {"records": records})


def chain(*done: Done) -> list[str]:
    request = {"plan": {"queries": [{"tool": "detect_anomalies", "arguments": {"service": "api"}}]}}
    investigation = Investigation(request, CATALOG, list(done))
    return [reading.service for reading, _ in investigation.chain("api")]


def test_a_service_whose_own_lines_show_its_cause_ends_the_chain() -> None:
    db = detect("db", finding("db_latency_seconds", "metric", "10:01"))
    timeout = finding("call to db timed out after <NUM> ms", "log_pattern", "10:02")
    assert chain(detect("api", timeout), lines("api", "call to db timed out after 900 ms"), db) == [
        "api",
        "db",
    ]
    # the same service naming db, but its own lines say why it fails: db only answers its calls
    fds = finding("accept: too many open files", "log_pattern", "10:02")
    assert chain(detect("api", fds), lines("api", "call to db failed: EMFILE"), db) == ["api"]


def test_a_named_dependency_whose_own_cause_built_up_long_before_joins_the_chain() -> None:
    refused = finding("call to db failed: connect ECONNREFUSED <IP>", "log_pattern", "10:07")
    calls = lines("api", "call to db failed: connect ECONNREFUSED 10.0.0.7:5432")
    leak = detect("db", finding("process_memory_rss_bytes", "metric", "09:26"))
    assert chain(detect("api", refused), calls, leak) == ["api", "db"]
    # long before, and with no cause of its own: something else
    busy = detect("db", finding("db_latency_seconds", "metric", "09:26"))
    assert chain(detect("api", refused), calls, busy) == ["api"]


def new_message(service: str, template: str, first_seen: str) -> Done:
    pattern = {"template": template, "example": template, "new": True, "count_after": 3}
    result = {"patterns": [{**pattern, "first_seen": f"2026-11-30T{first_seen}:00Z"}]}
    return Done("log_patterns", {"service": service}, f"p-{service}", "SUCCESS", result)


def test_a_few_new_errors_stand_only_when_they_lead_to_a_culprit_with_a_cause() -> None:
    quiet = detect("api")
    refused = new_message("api", "call to db failed: connect ECONNREFUSED <IP>", "10:07")
    calls = lines("api", "call to db failed: connect ECONNREFUSED 10.0.0.7:5432")
    leak = detect("db", finding("process_memory_rss_bytes", "metric", "09:26"))
    assert chain(quiet, refused, calls, leak) == ["api", "db"]
    # a few new errors, and what they name shows no cause of its own: no incident
    slow = detect("db", finding("db_latency_seconds", "metric", "10:06"))
    assert chain(quiet, refused, calls, slow) == []
    assert chain(quiet, refused) == []


def test_a_suspect_on_the_route_that_names_the_caller_leads_only_when_its_trouble_began_first() -> (
    None
):
    def route(db_onset: str) -> list[str]:
        suspects = [
            {"service": "db", "onset": f"2026-11-30T{db_onset}:00Z", "incident": 1, "links": []},
            {
                "service": "api",
                "onset": "2026-11-30T09:33:00Z",
                "incident": 1,
                "links": [{"to": "db", "how": "log", "evidence": "app=api"}],
            },
        ]
        triaged = Done("triage", {}, "t-1", "SUCCESS", {"suspects": suspects})
        api = detect("api", finding("http_errors_ratio", "metric", "09:33"))
        db = detect("db", finding("pg_replication_lag_seconds", "metric", db_onset))
        clients = lines("db", "user=api_rw,app=api ERROR: canceling statement")
        return chain(api, triaged, db, clients)

    # a database logging the client it serves, whose own trouble began first: the cause
    assert route("09:31") == ["api", "db"]
    # named by it, in the same minute: the database is the one waiting on it
    assert route("09:33") == ["api"]


def test_a_timing_candidate_that_calls_the_service_is_its_client_not_its_cause() -> None:
    catalog = Catalog(
        [
            {
                "name": "query_logs",
                "parameters": {"properties": {"service": {"enum": ["redis-wallet", "wallet-api"]}}},
            }
        ]
    )
    planned = {"tool": "detect_anomalies", "arguments": {"service": "redis-wallet"}}
    store = detect("redis-wallet", finding("redis_cluster_slots_fail", "metric", "10:47"))
    caller = detect("wallet-api", finding("connection timed out: <IP>", "log_pattern", "10:49"))
    calls = lines("wallet-api", "Unable to connect to redis-wallet-2/10.0.0.7:6379: timed out")

    def chain(*done: Done) -> list[str]:
        investigation = Investigation({"plan": {"queries": [planned]}}, catalog, list(done))
        return [reading.service for reading, _ in investigation.chain("redis-wallet")]

    assert chain(store, caller) == ["redis-wallet", "wallet-api"]  # timing alone: it may be
    assert chain(store, caller, calls) == ["redis-wallet"]  # its lines name the store: a client
