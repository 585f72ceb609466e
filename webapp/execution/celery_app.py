"""The Celery application: configuration from the app's settings, one thin task.

Delivery is at least once and executing is idempotent (:class:`webapp.execution.jobs.JobRunner`):

* ``task_acks_late`` - the message is acknowledged after the run, so a worker that dies
  mid-run does not lose it; ``task_reject_on_worker_lost`` - a pool child killed mid-run puts
  the message back at once instead of acknowledging it; a worker that cannot reach the
  database to claim the run rejects the message back onto the queue (:mod:`.tasks`);
* ``visibility_timeout`` is twice ``RUN_LEASE_SECONDS``: a message reserved by a worker that
  died is redelivered soon after the run's lease ran out. A redelivered message of a run in
  flight or finished does nothing (the claim is conditional); the reaper does not rely on it:
  it enqueues a run whose lease ran out again itself (:mod:`.leases`);
* ``worker_prefetch_multiplier=1`` - a worker reserves one run per free slot, no more;
* no result backend: the database is the one record of a run; progress goes to Redis Streams.
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
        "task_acks_on_failure_or_timeout": True,
        "worker_prefetch_multiplier": 1,
        "task_ignore_result": True,
        "result_backend": None,
        "task_serializer": "json",
        "accept_content": ["json"],
        "task_default_queue": QUEUE,
        "worker_hijack_root_logger": False,
        "worker_send_task_events": False,
    }


def create_celery(settings: Settings) -> Celery:
    """A Celery app configured from ``settings`` (connects only when used)."""
    app = Celery("diagnosis", set_as_current=False)
    app.conf.update(celery_config(settings))
    return app
