"""The app served in-process on a free port, and the system Chromium driven by Playwright.

Shared by the browser tests and ``scripts/screenshots.py``. The browser is Debian's
``/usr/bin/chromium``, never one Playwright downloads; each launch gets a fresh user-data dir.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flask import Flask
from werkzeug.serving import BaseWSGIServer, make_server

from webapp import create_app
from webapp.config import Settings
from webapp.container import Services
from webapp.demo.backend import DemoTelemetryBackend
from webapp.llm.types import ChatModel
from webapp.persistence.db import bind, open_database
from webapp.persistence.schema import create_schema
from webapp.telemetry import TelemetryBackend
from webapp.wiring import build_services

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
)
VIEWPORT = {"width": 1280, "height": 900}


def browser_missing() -> str | None:
    """Why the browser cannot be driven here (a readable reason), or None when it can."""
    if importlib.util.find_spec("playwright") is None:
        return "the playwright package is missing (pip install -e '.[dev]')"
    if not CHROMIUM.is_file():
        return f"no browser at {CHROMIUM} (apt-get install chromium)"
    return None


def screenshot_folder(description: str, default: Path) -> Path | None:
    """The screenshot scripts' start: ``--out`` (created), or None - the reason
    printed - when no browser can be driven here."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", type=Path, default=default)
    out: Path = parser.parse_args().out
    reason = browser_missing()
    if reason:
        print(f"screenshots: {reason}", file=sys.stderr)
        return None
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    out.mkdir(parents=True, exist_ok=True)
    return out


@dataclass
class LiveApp:
    """A running app: its base URL, the Flask app and its services."""

    url: str
    app: Flask
    services: Services
    server: BaseWSGIServer
    thread: threading.Thread

    def stop(self) -> None:
        """Stop serving, let streamed runs finish, close the database."""
        self.server.shutdown()
        self.thread.join(timeout=10)
        self.server.server_close()
        self.services.workers.shutdown()
        self.services.database.close()


def start_app(
    workdir: Path,
    *,
    backend: TelemetryBackend | None = None,
    model: ChatModel | None = None,
    **overrides: Any,
) -> LiveApp:
    """Serve a new app on 127.0.0.1 (free port): SQLite under ``workdir``, the offline model.

    ``overrides`` are settings fields (``api_key="..."``); ``model`` replaces the offline model.
    """
    database = open_database("sqlite:///" + str(workdir / "diagnosis.db"))
    bind(database)
    create_schema(database)
    settings = Settings.from_env(
        {},
        overrides={
            "knowledge_db": str(workdir / "knowledge.db"),
            "database_url": "sqlite:///unused.db",
            **overrides,
        },
    )
    services = build_services(
        settings,
        database=database,
        backend=backend or DemoTelemetryBackend(),
        model=model,
    )
    app = create_app(services=services)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="live-app", daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_port}"
    return LiveApp(url=url, app=app, services=services, server=server, thread=thread)


@contextmanager
def chromium(user_data_dir: Path) -> Iterator[BrowserContext]:
    """A headless system Chromium with a fresh user-data dir, as one Playwright context."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(user_data_dir),
            executable_path=str(CHROMIUM),
            args=list(CHROMIUM_ARGS),
            headless=True,
            viewport=VIEWPORT,  # type: ignore[arg-type]
            locale="en-GB",
            timezone_id="UTC",
        )
        try:
            yield context
        finally:
            context.close()
