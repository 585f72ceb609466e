"""The app on every backend: SQLite with in-process history always; MariaDB and PostgreSQL
(with Redis history when ``TEST_REDIS_URL`` is set) when their URLs are set."""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from peewee import Database
from werkzeug.serving import make_server

from webapp import create_app
from webapp.config import Settings
from webapp.demo.backend import DemoTelemetryBackend
from webapp.persistence.history import HistoryStore, RedisHistory
from webapp.wiring import build_services


@pytest.fixture(scope="session")
def demo_backend() -> DemoTelemetryBackend:
    backend = DemoTelemetryBackend()
    backend.services()  # load once for the whole session
    return backend


@pytest.fixture
def history(request: pytest.FixtureRequest) -> Iterator[HistoryStore | None]:
    """History from the runs' rows on SQLite (None: the app's default); Redis history on the
    server backends when available."""
    backend = request.node.callspec.params.get("database", "sqlite")
    url = os.environ.get("TEST_REDIS_URL")
    if backend == "sqlite" or not url:
        yield None
        return
    store = RedisHistory(
        url, max_messages=12, ttl_seconds=3600, key_prefix=f"test:{secrets.token_hex(4)}:"
    )
    yield store
    store.close()


def make_app(
    database: Database,
    backend: DemoTelemetryBackend,
    history: HistoryStore | None,
    tmp_path: Path,
    **overrides: Any,
) -> Flask:
    settings = Settings.from_env(
        {},
        overrides={
            "knowledge_db": str(tmp_path / "knowledge.db"),
            "database_url": "sqlite:///unused.db",
            **overrides,
        },
    )
    services = build_services(settings, database=database, backend=backend, history=history)
    return create_app(services=services)


@pytest.fixture
def app(
    database: Database,
    demo_backend: DemoTelemetryBackend,
    history: HistoryStore | None,
    tmp_path: Path,
) -> Flask:
    return make_app(database, demo_backend, history, tmp_path)


@pytest.fixture
def server(app: Flask) -> Iterator[int]:
    """The app behind a real threaded HTTP server on a free port: a thread per request, as
    ``make run`` serves it (chunked bodies and per-thread connections need a real one)."""
    httpd = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_port
    httpd.shutdown()
    thread.join()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def answered(client: FlaskClient) -> dict[str, Any]:
    """One finished complex chat run."""
    response = client.post(
        "/api/chat", json={"Question": "Why is payment-service slow since 10:00?"}
    )
    assert response.status_code == 200, response.json
    data: dict[str, Any] = response.json["data"]
    return data
