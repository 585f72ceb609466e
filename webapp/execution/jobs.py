"""A run to execute, and executing one wherever it lands (a pool thread or a Celery worker).

A :class:`RunJob` is what travels: plain ids and text, JSON-serialisable, so the Celery message
is small and the database stays the one record of the run. :meth:`JobRunner.execute` is
idempotent: a job whose run is no longer PENDING (a redelivered message, a run the reaper
failed) does nothing, and claiming PENDING -> RUNNING is one conditional UPDATE, so two
deliveries of the same job never both execute it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Protocol

from ..persistence.runs import AI_OPS, DatabaseUnavailable, Reaped, RunStore
from ..services.chat import ChatOutcome, ChatService
from .events import EventLog
from .leases import LeaseKeeper
from .streams import ending_events, publish

log = logging.getLogger(__name__)

CHAT, AIOPS = "chat", "aiops"


@dataclass(frozen=True)
class RunJob:
    """One started run (its rows exist, PENDING) waiting to be executed."""

    kind: str
    session_id: str
    run_id: str
    question: str | None
    flow: str

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunJob:
        """The job a Celery message carries (its ``dataclasses.asdict`` form)."""
        if data.get("kind") not in (CHAT, AIOPS):
            raise ValueError(f"unknown job kind {data.get('kind')!r}")
        return cls(**{f.name: data[f.name] for f in fields(cls)})

    @classmethod
    def of(cls, run: Reaped) -> RunJob:
        """The job of a run the reaper put back PENDING, from its row."""
        kind = AIOPS if run.agent_flow == AI_OPS else CHAT
        return cls(kind, run.session_id, run.run_id, run.question, run.flow)


class AiOpsRuns(Protocol):
    """What executing an AIOps run needs (``webapp.aiops.AiOpsService``)."""

    def execute(
        self, session_id: str, run_id: str, user_request: str | None, on_event: Any = None
    ) -> ChatOutcome: ...


@dataclass(frozen=True, kw_only=True, eq=False)
class JobRunner:
    """Executes jobs: the run lifecycle, its events published, its lease held meanwhile."""

    runs: RunStore
    chat: ChatService
    aiops: AiOpsRuns | None  # None where that flow is not available
    events: EventLog
    keeper: LeaseKeeper
    telemetry: Any = None

    def execute(self, job: RunJob) -> None:
        """Execute ``job`` unless its run already left PENDING (the claim says so: nothing is
        published); never raises for the run but :class:`DatabaseUnavailable` (not claimed, or
        its outcome not saved): the caller gives the job back."""
        emit = publish(self.events, job.run_id)
        self.keeper.hold(job.run_id)
        try:
            outcome = self._traced(job, lambda event: emit("progress", event))
            if outcome.replayed:
                log.info("job for run %s skipped: run is %s", job.run_id, outcome.status)
                return
            for kind, data in ending_events(outcome):
                emit(kind, data)
        except DatabaseUnavailable as exc:
            log.warning("job for run %s given back: %s", job.run_id, exc)
            raise
        except Exception as exc:  # a bug: the record tells the end (a relay reads it from there)
            log.exception("job for run %s failed", job.run_id)
            emit("error", {"message": f"{type(exc).__name__}: {exc}", "runId": job.run_id})
        finally:
            self.keeper.release(job.run_id)

    def _traced(self, job: RunJob, on_event: Any) -> ChatOutcome:
        """:meth:`_run` inside the run's ``invoke_agent`` span when spans are exported."""
        if self.telemetry is None:
            return self._run(job, on_event)
        agent = "aiops_supervisor" if job.kind == AIOPS else "diagnosis"
        with self.telemetry.run(
            agent=agent, session_id=job.session_id, run_id=job.run_id, flow=job.flow
        ) as span:
            outcome = self._run(job, on_event)
            self.telemetry.finish(span, outcome.status, outcome.error_message)
            return outcome

    def _run(self, job: RunJob, on_event: Any) -> ChatOutcome:
        if job.kind == AIOPS:
            if self.aiops is None:
                raise RuntimeError("the AIOps flow is not available in this process")
            return self.aiops.execute(job.session_id, job.run_id, job.question, on_event)
        return self.chat.execute(
            job.question or "", job.session_id, job.run_id, job.flow, on_event=on_event
        )
