"""The web app in thread mode with a slow model, served by werkzeug on ``TEST_PORT``.

``python -m tests.webapp.execution.web_main`` with ``DATABASE_URL``, ``RUN_LEASE_SECONDS``,
``TEST_MODEL_DELAY`` and ``TEST_PORT``.
"""

from __future__ import annotations

import os

from werkzeug.serving import make_server

from webapp import create_app
from webapp.config import Settings
from webapp.wiring import build_services

from .models import SlowModel


def main() -> None:
    settings = Settings.from_env()
    model = SlowModel(float(os.environ.get("TEST_MODEL_DELAY", "0")))
    app = create_app(services=build_services(settings, model=model))
    server = make_server("127.0.0.1", int(os.environ["TEST_PORT"]), app, threaded=True)
    print("serving", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
