"""The Flask application: ``create_app(config=None, services=None)``; ``config`` overrides
settings by field name, ``services`` replaces the adapters (tests pass their own)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from flask import Flask


def create_app(config: Mapping[str, Any] | None = None, services: Any = None) -> Flask:
    """Build the app: settings once, services, blueprints, error handlers, CLI commands."""
    from . import ui
    from .api import register_api
    from .cli import register_cli
    from .config import Settings
    from .wiring import build_services

    if services is None:
        services = build_services(Settings.from_env(overrides=config))
    app = Flask(__name__)
    app.config.update(MAX_CONTENT_LENGTH=services.settings.max_request_bytes)
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.extensions["diagnosis"] = services
    register_api(app)
    app.register_blueprint(ui.bp)
    register_cli(app)
    services.workers.keeper.start()  # heartbeats, and the reaper at start-up then periodically
    logging.getLogger("webapp").setLevel(logging.INFO)
    return app
