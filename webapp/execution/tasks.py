"""The one Celery task: execute a started run. Thin: it hands the job over, and gives the message
back to the queue when the database could not be reached to claim the run (never acknowledging
a run it did not execute)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from celery import Celery
from celery.exceptions import Reject
from peewee import InterfaceError, OperationalError

from ..persistence.runs import DatabaseUnavailable
from .celery_app import TASK_NAME
from .jobs import JobRunner, RunJob

log = logging.getLogger(__name__)


class LazyRunner:
    """Builds the worker's runner on first use, once per process (after a prefork fork)."""

    def __init__(self, build: Callable[[], JobRunner]) -> None:
        self._build = build
        self._runner: JobRunner | None = None
        self._lock = threading.Lock()

    def get(self) -> JobRunner:
        """The runner, built (and its lease keeper started) on first call."""
        with self._lock:
            if self._runner is None:
                self._runner = self._build()
                self._runner.keeper.start()
            return self._runner

    def forget(self) -> None:
        """Drop the runner inherited through a fork (its threads and connections are the
        parent's): the child builds its own on its first task."""
        self._lock = threading.Lock()
        self._runner = None


def register_tasks(app: Celery, runner: LazyRunner) -> Any:
    """Define the run task on ``app``; returns it."""

    @app.task(  # type: ignore[untyped-decorator,unused-ignore]
        name=TASK_NAME, acks_late=True, reject_on_worker_lost=True, ignore_result=True
    )
    def execute_run(job: dict[str, Any]) -> None:
        try:
            runner.get().execute(RunJob.from_dict(job))
        except (DatabaseUnavailable, OperationalError, InterfaceError) as exc:
            # the run was not claimed (or the worker could not even start): back to the queue
            raise Reject(str(exc), requeue=True) from exc

    return execute_run
