"""The Celery worker's entry point: ``celery -A webapp.worker worker`` (``make worker``).

Settings are read lazily; the services are built once per worker process.
"""

from __future__ import annotations

from celery import Celery
from celery.signals import worker_process_init, worker_ready

from .config import Settings
from .execution.celery_app import celery_config
from .execution.jobs import JobRunner
from .execution.tasks import LazyRunner, register_tasks


def build_runner() -> JobRunner:
    """The services of a worker process, from the environment."""
    from .wiring import build_services

    return build_services(Settings.from_env()).runner


app = Celery("diagnosis")
app.add_defaults(lambda: celery_config(Settings.from_env()))
runner = LazyRunner(build_runner)
execute_run = register_tasks(app, runner)


@worker_ready.connect
def _start_reaping(**_: object) -> None:
    # Build at start-up (schema, reaper tick) rather than on the first task.
    runner.get()


@worker_process_init.connect
def _after_fork(**_: object) -> None:
    # A prefork pool child must not share its parent's connections or lease-keeper thread.
    runner.forget()
