"""Apps on a real database with a chosen model; private Redis servers; free ports."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from flask import Flask
from peewee import Database

from tests.environment import unavailable
from webapp import create_app
from webapp.config import Settings
from webapp.container import Services
from webapp.demo.backend import DemoTelemetryBackend
from webapp.llm.types import ChatModel
from webapp.wiring import build_services


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def demo_backend() -> DemoTelemetryBackend:
    backend = DemoTelemetryBackend()
    backend.services()
    return backend


def services_for(
    database: Database | None,
    backend: DemoTelemetryBackend,
    tmp_path: Path,
    model: ChatModel | None = None,
    tracer_provider: Any = None,
    **overrides: Any,
) -> Services:
    """Services on ``database`` (None: the ``database_url`` override's), any overrides."""
    settings = Settings.from_env(
        {},
        overrides={
            "knowledge_db": str(tmp_path / f"knowledge-{time.monotonic_ns()}.db"),
            "database_url": "sqlite:///unused.db",
            **overrides,
        },
    )
    return build_services(
        settings, database=database, backend=backend, model=model, tracer_provider=tracer_provider
    )


def app_for(services: Services) -> Flask:
    return create_app(services=services)


class RedisServer:
    """A private ``redis-server`` on a free port (never the shared one: tests may kill it)."""

    def __init__(self, workdir: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            unavailable("redis-server is not installed")
        self.port = free_port()
        self.process = subprocess.Popen(
            [
                str(binary),
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(workdir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.url = f"redis://127.0.0.1:{self.port}/0"
        client = redis.Redis.from_url(self.url)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        client.close()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    yield server
    server.stop()


def wait_for(predicate: Any, timeout: float, interval: float = 0.05) -> bool:
    """Poll ``predicate`` until it is truthy or ``timeout`` s passed; its last answer."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(interval)
