"""``make serve``'s gunicorn settings: a worker freezes what the app loaded, the app does not."""

from __future__ import annotations

import gc

from webapp.execution.gunicorn_conf import post_worker_init


def test_a_gunicorn_worker_freezes_what_its_app_loaded() -> None:
    gc.unfreeze()
    try:
        post_worker_init(None)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
