"""Leases and the reaper: no run stays PENDING or RUNNING after its holder stops renewing."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

from peewee import Database

from webapp.demo.backend import DemoTelemetryBackend
from webapp.execution.jobs import CHAT, RunJob
from webapp.execution.leases import LeaseKeeper
from webapp.persistence.models import DiagnosisRun, utcnow
from webapp.persistence.runs import CLAIMED, NOT_CLAIMED, RESUMED, SUCCESS, Finish, RunStore

from .conftest import services_for, wait_for
from .models import GatedModel


def row(database: Database, run_id: str) -> DiagnosisRun:
    with database.connection_context():
        return DiagnosisRun.get(DiagnosisRun.run_id == run_id)


def expire(database: Database, run_id: str) -> None:
    with database.connection_context():
        DiagnosisRun.update(lease_expires_at=utcnow() - timedelta(seconds=1)).where(
            DiagnosisRun.run_id == run_id
        ).execute()


def started(store: RunStore, run_id: str, session_id: str = "sess-lease") -> None:
    store.open_run(run_id, session_id, "CHAT", "complex", "why?")


def test_a_running_run_whose_lease_ran_out_is_put_back_pending_until_its_resumes_are_spent(
    database: Database,
) -> None:
    store = RunStore(database, 3600, lease_seconds=30, max_resumes=1)
    started(store, "run-back")
    assert store.claim("run-back") == CLAIMED
    expire(database, "run-back")
    [back] = store.reap()
    assert back.requeued and (back.run_id, back.flow, back.question) == (
        "run-back",
        "complex",
        "why?",
    )
    assert row(database, "run-back").status == "PENDING" and row(database, "run-back").resumes == 1
    assert store.claim("run-back") == RESUMED and store.claim("run-back") == NOT_CLAIMED
    expire(database, "run-back")
    [dead] = store.reap()
    assert not dead.requeued and "(1 of 1 resumes used)" in str(dead.error_message)
    assert row(database, "run-back").status == "FAILED"


def test_a_running_run_whose_lease_ran_out_is_failed_interrupted_with_its_partial_trace(
    database: Database,
) -> None:
    store = RunStore(database, 3600, lease_seconds=30, max_resumes=0)
    started(store, "run-dead")
    assert store.claim("run-dead")
    partial = {"transitions": [{"from": "planner", "to": "executor"}], "final_node": "planner"}
    store.save_partial_trace("run-dead", partial)
    expire(database, "run-dead")
    reaped = store.reap()
    assert [r.run_id for r in reaped] == ["run-dead"]
    dead = row(database, "run-dead")
    assert dead.status == "FAILED" and str(dead.error_message).startswith("interrupted: ")
    assert store.owner in str(dead.error_message) and dead.orchestration_trace == partial
    assert dead.finished_at is not None and dead.lease_expires_at is None


def test_a_renewed_run_is_not_reaped_and_a_reaped_run_keeps_its_failure(
    database: Database,
) -> None:
    store = RunStore(database, 3600, lease_seconds=30, max_resumes=0)
    started(store, "run-alive")
    started(store, "run-late")
    assert store.claim("run-alive") and store.claim("run-late")
    expire(database, "run-alive")
    expire(database, "run-late")
    assert store.renew(["run-alive"]) == 1
    assert [r.run_id for r in store.reap()] == ["run-late"]
    assert row(database, "run-alive").status == "RUNNING"
    store.finish("run-late", Finish(SUCCESS, "too late"))  # its client was told FAILED
    late = row(database, "run-late")
    assert late.status == "FAILED" and late.answer is None


def test_a_pending_run_nobody_started_is_enqueued_again_then_failed_queue_timeout(
    database: Database,
) -> None:
    store = RunStore(database, 3600, lease_seconds=30, queue_timeout_seconds=60)
    started(store, "run-queued")
    expire(database, "run-queued")
    [again] = store.reap()  # its message was lost (or is still queued): enqueue it again
    assert again.requeued and row(database, "run-queued").status == "PENDING"
    assert row(database, "run-queued").resumes == 0 and not store.reap()  # a new lease
    with database.connection_context():
        DiagnosisRun.update(started_at=utcnow() - timedelta(seconds=61)).execute()
    expire(database, "run-queued")
    [late] = store.reap()
    assert late.error_message == "queue timeout: no worker started the run within 60 s"
    assert row(database, "run-queued").status == "FAILED"


def test_a_redelivered_job_for_a_finished_run_does_nothing(
    database: Database, demo_backend: DemoTelemetryBackend, tmp_path: Path
) -> None:
    services = services_for(database, demo_backend, tmp_path)
    session_id, run_id, flow = services.chat.start("Why is payment-service slow?", None, "auto")
    job = RunJob(CHAT, session_id, run_id, "Why is payment-service slow?", flow)
    assert services.runner is not None and services.events is not None
    services.runner.execute(job)
    first = row(database, run_id)
    events = len(services.events.read(run_id, None, 0))
    services.runner.execute(job)  # the broker delivered it again
    again = row(database, run_id)
    assert first.status == again.status == "SUCCESS"
    assert again.finished_at == first.finished_at and again.answer == first.answer
    assert len(services.events.read(run_id, None, 0)) == events


def test_a_run_whose_process_stops_renewing_is_reaped_by_another_and_its_relay_ends(
    database: Database, demo_backend: DemoTelemetryBackend, tmp_path: Path
) -> None:
    model = GatedModel()
    holder = services_for(database, demo_backend, tmp_path, model, run_lease_seconds=1)
    session_id, run_id, flow = holder.chat.start("Why is payment-service slow?", None, "auto")
    holder.workers.submit(RunJob(CHAT, session_id, run_id, "why", flow))
    assert model.started.wait(10)
    assert row(database, run_id).status == "RUNNING"
    # The holder is "dead": it never renews. Another process's keeper, on the same events.
    other = LeaseKeeper(holder.chat.runs, holder.events, lease_seconds=1)
    began = time.monotonic()
    assert wait_for(lambda: other.tick() or row(database, run_id).status == "FAILED", 5)
    assert time.monotonic() - began < 3  # within its lease plus one tick
    dead = row(database, run_id)
    assert str(dead.error_message).startswith("interrupted: ")
    assert holder.events is not None
    kinds = [e.kind for e in holder.events.read(run_id, None, 0)]
    assert kinds[-2:] == ["error", "done"]
    model.gate.set()
    holder.workers.shutdown()
    assert row(database, run_id).status == "FAILED"  # the late finish did not resurrect it
