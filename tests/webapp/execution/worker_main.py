"""A real Celery worker (threads pool) whose model is slow, configured from the environment.

``python -m tests.webapp.execution.worker_main`` with ``DATABASE_URL``, ``REDIS_URL``,
``RUN_EXECUTOR=celery``, ``RUN_LEASE_SECONDS`` and ``TEST_MODEL_DELAY`` (seconds per model call).
"""

from __future__ import annotations

import os

from webapp.config import Settings
from webapp.execution.celery_app import create_celery
from webapp.execution.jobs import JobRunner
from webapp.execution.tasks import LazyRunner, register_tasks
from webapp.wiring import build_services

from .models import SlowModel


def main() -> None:
    settings = Settings.from_env()
    delay = float(os.environ.get("TEST_MODEL_DELAY", "0"))

    def build() -> JobRunner:
        services = build_services(settings, role="worker", model=SlowModel(delay))
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
