"""A real Celery worker (threads pool) whose model is slow, configured from the environment.

``python -m tests.webapp.execution.worker_main`` with ``DATABASE_URL``, ``REDIS_URL``,
``RUN_EXECUTOR=celery``, ``RUN_LEASE_SECONDS`` and ``TEST_MODEL_DELAY`` (seconds per model call).
With ``TEST_CALL_LOG`` every model call is logged there (:class:`.models.LoggedModel`), and
``TEST_KILL_AT`` SIGKILLs the worker once (``TEST_KILL_MARKER``) at that point: a model contract
(``planner_plan``, ``executor_evidence_v2``...), ``claim`` (before the run is claimed) or
``finish`` (as its final write starts).
"""

from __future__ import annotations

import os
from typing import Any

from webapp.config import Settings
from webapp.execution.celery_app import create_celery
from webapp.execution.jobs import JobRunner
from webapp.execution.tasks import LazyRunner, register_tasks
from webapp.persistence.runs import RunStore
from webapp.wiring import build_services

from .models import LoggedModel, SlowModel, kill_once


def main() -> None:
    settings = Settings.from_env()
    delay = float(os.environ.get("TEST_MODEL_DELAY", "0"))
    kill_at = os.environ.get("TEST_KILL_AT", "")
    marker = os.environ.get("TEST_KILL_MARKER", "")
    log_path = os.environ.get("TEST_CALL_LOG")
    model = LoggedModel(log_path, kill_at, marker) if log_path else SlowModel(delay)
    if kill_at in ("claim", "finish"):
        original = getattr(RunStore, kill_at)

        def killing(self: RunStore, *args: Any) -> Any:
            kill_once(marker)
            return original(self, *args)

        setattr(RunStore, kill_at, killing)

    def build() -> JobRunner:
        services = build_services(settings, model=model)
        assert services.runner is not None
        return services.runner

    app = create_celery(settings)
    runner = LazyRunner(build)
    register_tasks(app, runner)
    runner.get()
    app.worker_main(
        [
            "worker",
            "-P",
            "threads",
            "-c",
            os.environ.get("TEST_CONCURRENCY", "2"),
            "--without-mingle",
            "--without-gossip",
            "--without-heartbeat",
            "-l",
            "WARNING",
            "-n",
            f"test{os.getpid()}@%h",
        ]
    )


if __name__ == "__main__":
    main()
