"""The Celery application: configuration from the app's settings, one thin task.

Delivery is at least once and executing is idempotent (:class:`.jobs.JobRunner`): messages are
acknowledged after the run (``task_acks_late``, ``task_reject_on_worker_lost``), redelivered
after twice ``RUN_LEASE_SECONDS`` (``visibility_timeout``), one reserved per free slot; no
result backend: the database is the record of a run, progress goes to Redis Streams.
"""

from __future__ import annotations

from typing import Any

from celery import Celery

from ..config import Settings

TASK_NAME = "diagnosis.execute_run"
QUEUE = "diagnosis"


def celery_config(settings: Settings) -> dict[str, Any]:
    """Celery settings for ``settings`` (``REDIS_URL`` is the broker)."""
    return {
        "broker_url": settings.redis_url,
        "broker_connection_retry_on_startup": True,
        "broker_transport_options": {"visibility_timeout": 2 * settings.run_lease_seconds},
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_ignore_result": True,
        "result_backend": None,
        "task_default_queue": QUEUE,
        "worker_hijack_root_logger": False,
    }


def create_celery(settings: Settings) -> Celery:
    """A Celery app configured from ``settings`` (connects only when used)."""
    app = Celery("diagnosis", set_as_current=False)
    app.conf.update(celery_config(settings))
    return app
