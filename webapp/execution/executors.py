"""Where a started run executes: ``RUN_EXECUTOR=thread`` (default) or ``celery``.

:class:`ThreadExecutor` runs jobs on a bounded pool in this process (embedded: one machine);
the process holds their leases while they wait and run. :class:`CeleryExecutor` only enqueues
the job on the Redis broker: any number of ``make worker`` processes, on any machines, execute
it; this process never does.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from typing import Any, Protocol

from .jobs import JobRunner, RunJob
from .leases import LeaseKeeper

log = logging.getLogger(__name__)


class Executor(Protocol):
    """Takes a started run and gets it executed somewhere."""

    keeper: LeaseKeeper

    def submit(self, job: RunJob) -> None:
        """Have ``job`` executed (returns at once)."""
        ...

    def shutdown(self) -> None:
        """Stop taking jobs; wait for the ones running here."""
        ...


class ThreadExecutor:
    """A bounded pool that executes runs off the request thread, in this process."""

    def __init__(self, runner: JobRunner, max_workers: int = 8) -> None:
        self.runner = runner
        self.keeper = runner.keeper
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="run")

    def submit(self, job: RunJob) -> None:
        """Queue ``job``; its lease is renewed by this process from now on."""
        self.keeper.hold(job.run_id)
        self._pool.submit(self._execute, job)

    def _execute(self, job: RunJob) -> None:
        try:
            self.runner.execute(job)
        except Exception:  # JobRunner never raises for a run; this is a bug, keep the pool
            log.exception("executing run %s failed", job.run_id)
        finally:
            self.keeper.release(job.run_id)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True)
        self.keeper.stop()


class CeleryExecutor:
    """Enqueues runs for Celery workers; never executes one here."""

    def __init__(self, app: Any, keeper: LeaseKeeper) -> None:
        self.app = app
        self.keeper = keeper

    def submit(self, job: RunJob) -> None:
        """Send the job to the broker (the task id is the run id)."""
        from .celery_app import TASK_NAME

        self.app.send_task(TASK_NAME, args=[asdict(job)], task_id=job.run_id)

    def shutdown(self) -> None:
        self.keeper.stop()
        self.app.close()
