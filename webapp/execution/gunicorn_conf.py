"""gunicorn settings for ``make serve``: gevent workers, so an open SSE stream costs no thread.

PyMySQL and redis-py are pure Python (patched with the rest); psycopg2 is made cooperative by
psycogreen's wait callback, installed in every worker. CPU-heavy offline analysis belongs on
Celery workers (``RUN_EXECUTOR=celery``).
"""

from __future__ import annotations

import gc
from typing import Any

worker_class = "gevent"
worker_connections = 1000
timeout = 300
graceful_timeout = 30
keepalive = 5
accesslog = "-"


def post_fork(server: Any, worker: Any) -> None:
    """Make psycopg2 cooperative in the worker (before any connection is made)."""
    try:
        from psycogreen.gevent import patch_psycopg
    except ImportError:  # PostgreSQL support not installed: nothing to patch
        return
    patch_psycopg()


def post_worker_init(worker: Any) -> None:
    """Keep what the app loaded at start out of the garbage collector's full passes (in the
    worker, not the app factory: a process building several apps would freeze their garbage)."""
    gc.freeze()
