"""Which services a system-wide question investigates, from a ``triage`` output."""

from __future__ import annotations

from typing import Any

from webapp.llm.offline.conversation import Done
from webapp.llm.offline.suspects import picked


def _triage(*suspects: dict[str, Any]) -> list[Done]:
    return [Done("triage", {}, "inv-1", "ok", {"suspects": list(suspects)})]


def _suspect(service: str, onset: str, **fields: Any) -> dict[str, Any]:
    return {"service": service, "onset": onset, "incident": 1, "links": [], **fields}


def test_a_leader_without_a_mechanism_of_its_own_brings_the_service_that_names_it() -> None:
    # a job that only ran harder: the store it flooded says how, and names the job
    job = _suspect("nightly-job", "2030-01-01T07:39:00Z", signals=["job_items_processed"])
    store = _suspect(
        "blob-store",
        "2030-01-01T07:40:00Z",
        signals=["requests_waiting"],
        new_log_templates=["PutObject failed: Please reduce your request rate"],
        links=[{"to": "nightly-job", "how": "log", "evidence": "remote=10.0.0.9"}],
    )
    caller = _suspect("web", "2030-01-01T07:41:00Z", links=[{"to": "blob-store", "how": "timing"}])
    assert picked(_triage(job, store, caller), None) == ["nightly-job", "blob-store"]


def test_a_leader_whose_own_evidence_names_a_mechanism_is_enough() -> None:
    leader = _suspect(
        "cache", "2030-01-01T07:39:00Z", new_log_templates=["OOM command not allowed (maxmemory)"]
    )
    caller = _suspect(
        "web",
        "2030-01-01T07:40:00Z",
        links=[{"to": "cache", "how": "log", "evidence": "cache timed out"}],
    )
    assert picked(_triage(leader, caller), None) == ["cache"]


def test_two_incidents_are_each_investigated_from_their_leader() -> None:
    # the tool budget covers two chains, not four
    job = _suspect("nightly-job", "2030-01-01T07:39:00Z", signals=["job_items_processed"])
    store = _suspect(
        "blob-store",
        "2030-01-01T07:40:00Z",
        links=[{"to": "nightly-job", "how": "log", "evidence": "remote=10.0.0.9"}],
    )
    other = _suspect(
        "auth", "2030-01-01T07:41:00Z", incident=2, new_log_templates=["x509: certificate expired"]
    )
    assert picked(_triage(job, store, other), None) == ["nightly-job", "auth"]


def test_the_incident_whose_alert_fired_at_the_time_asked_about_comes_first() -> None:
    from datetime import datetime, timezone

    paged = datetime(2030, 1, 1, 10, 15, tzinfo=timezone.utc)
    crash = {
        "alert_name": "PodCrashLooping",
        "severity": "warning",
        "active_at": "2030-01-01T10:13:25Z",
    }
    leak = _suspect("ingest", "2030-01-01T09:52:00Z", alerts=[crash])
    lag = _suspect("db-replica", "2030-01-01T10:29:00Z", incident=2)
    assert picked(_triage(leak, lag), paged)[0] == "ingest"
    # without its alert, the incident that began nearer the time asked about comes first
    quiet = _suspect("ingest", "2030-01-01T09:52:00Z")
    assert picked(_triage(quiet, lag), paged)[0] == "db-replica"


def test_a_suspect_tied_by_timing_alone_with_a_cause_of_its_own_is_a_problem_of_its_own() -> None:
    replica = _suspect("db-replica", "2030-01-01T10:32:00Z", signals=["pg_replication_lag_seconds"])
    rejected = 'FATAL: password authentication failed for user "ledger"'
    timed = [{"to": "db-replica", "how": "timing", "evidence": "began 3 min after db-replica"}]
    ledger = _suspect("ledger", "2030-01-01T10:35:00Z", new_log_templates=[rejected], links=timed)
    assert picked(_triage(replica, ledger), None) == ["db-replica", "ledger"]
    # with no cause of its own it stays a follower of the incident's leader
    slow = _suspect("ledger", "2030-01-01T10:35:00Z", signals=["latency_p99"], links=timed)
    assert picked(_triage(replica, slow), None) == ["db-replica"]
