"""The run lifecycle, for chat and AIOps runs alike: claim, work, flush, finish - or fail.

A run delivered twice executes once; while its writes fail it runs again from its last
checkpoint, up to :data:`WORK_ATTEMPTS` times.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..llm.tokens import PriceTable
from ..persistence.audit import Audit, AuditWriteError
from ..persistence.context import RunContext, run_scope
from ..persistence.runs import (
    FAILED,
    NOT_CLAIMED,
    RESUMED,
    DatabaseUnavailable,
    Finish,
    RunStore,
)

log = logging.getLogger(__name__)

#: Attempts of a run whose writes fail, from its last checkpoint, after 1, 2, 4 and 8 s.
WORK_ATTEMPTS = 5
RETRY_PAUSE_SECONDS = 1.0


class RunLifecycle:
    """Executes started runs: claim, work, flush, check, finish - or fail."""

    def __init__(self, runs: RunStore, audit: Audit) -> None:
        self.runs = runs
        self.audit = audit
        self.prices = PriceTable()  # LLM_PRICES, set by the wiring

    def execute(
        self,
        session_id: str,
        run_id: str,
        work: Callable[[RunContext], Finish],
        *,
        failed_trace: dict[str, Any] | None = None,
    ) -> Finish:
        """Run ``work`` as the run ``run_id`` and save its outcome; never raises but
        :class:`~webapp.persistence.runs.DatabaseUnavailable` (nothing was claimed, or the
        outcome could not be saved: the record does not have it)."""
        started = time.perf_counter()
        claim = self.runs.claim(run_id)
        if claim == NOT_CLAIMED:
            return self._stored(run_id)
        with run_scope(session_id, run_id) as run, self.runs.database.connection_context():
            try:
                finish = self._work(run, work, resumed=claim == RESUMED)
                steps, tools = run.journal.counts()
                finish = replace(
                    finish,
                    step_count=steps,
                    tool_count=tools,
                    duration_ms=_elapsed_ms(started),
                    **self._usage(run),
                )
                if not self.runs.finish(run_id, finish):
                    return self._stored(run_id)  # failed or taken over meanwhile: not ours
            except Exception as exc:
                log.exception("run %s failed", run_id)
                self._flush(run)  # what the run recorded, and no transaction left open
                run.journal.take_failure()
                finish = Finish(
                    FAILED,
                    None,
                    error_message=str(exc)
                    if isinstance(exc, AuditWriteError)
                    else f"{type(exc).__name__}: {exc}",
                    orchestration_trace=failed_trace,
                    duration_ms=_elapsed_ms(started),
                    **self._usage(run),
                )
                if not self.runs.fail_best_effort(run_id, finish):
                    # The record still says RUNNING: its lease runs out and the reaper
                    # resumes or fails it. Nobody is told an end the record does not have.
                    raise DatabaseUnavailable(
                        f"database unreachable: run {run_id} could not be saved FAILED"
                    ) from exc
        return finish

    def _work(
        self, run: RunContext, work: Callable[[RunContext], Finish], *, resumed: bool
    ) -> Finish:
        """``work(run)`` and its flush, again from the last checkpoint while its writes fail; a
        ``resumed`` run's journal is first restored from its rows."""
        for attempt in range(1, WORK_ATTEMPTS + 1):
            if attempt > 1:
                pause = RETRY_PAUSE_SECONDS * 2 ** (attempt - 2)
                log.warning(
                    "run %s: %s; again from its checkpoint in %.0f s",
                    run.run_id,
                    run.journal.failure,
                    pause,
                )
                time.sleep(pause)
            if resumed or attempt > 1:
                try:
                    self.audit.restore(run)
                except Exception as exc:  # unreachable: this attempt is spent
                    cause = f"its rows could not be read back: {type(exc).__name__}: {exc}"
                    run.journal.fail(cause[:2000])
                    continue
            finish = work(run)
            self._flush(run)
            if run.journal.failure is None:
                return finish
        raise AuditWriteError(run.journal.take_failure() or "a write of the run failed")

    def _usage(self, run: RunContext) -> dict[str, Any]:
        """The run's prompt and completion tokens, and its cost when the table prices a model."""
        usage = run.journal.token_usage()
        costs = [self.prices.cost(model, *tokens) for model, tokens in usage.items()]
        priced = [cost for cost in costs if cost is not None]
        return {
            "prompt_tokens": sum(p for p, _ in usage.values()),
            "completion_tokens": sum(c for _, c in usage.values()),
            "cost_usd": round(sum(priced), 6) if priced else None,
        }

    def _flush(self, run: RunContext) -> None:
        """Write the held-back rows; a failure is in the journal (step 4 reports it)."""
        try:
            self.audit.flush()
        except Exception as exc:
            run.journal.fail(f"audit write failed (flush): {type(exc).__name__}: {exc}"[:2000])

    def _stored(self, run_id: str) -> Finish:
        row = self.runs.status(run_id)
        if row is None:
            return Finish(FAILED, None, error_message=f"run {run_id} does not exist", replayed=True)
        log.info("run %s is already %s: not executed again", run_id, row.status)
        return Finish(
            row.status,
            row.answer,
            bool(row.degraded),
            row.error_message,
            step_count=row.step_count,
            tool_count=row.tool_count,
            duration_ms=row.duration_ms or 0,
            replayed=True,
        )


def _elapsed_ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
