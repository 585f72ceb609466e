"""RATE_LIMIT: per client or API key, 429 with Retry-After, Redis-backed when configured."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest
from flask import Flask
from peewee import Database

from webapp.config import Settings, SettingsError
from webapp.demo.backend import DemoTelemetryBackend
from webapp.persistence.history import HistoryStore

from .conftest import make_app
from .openapi_check import assert_documented


@pytest.fixture
def limited(
    database: Database,
    demo_backend: DemoTelemetryBackend,
    history: HistoryStore | None,
    tmp_path: Path,
) -> Flask:
    return make_app(database, demo_backend, history, tmp_path, rate_limit="3/minute")


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
def test_over_the_limit_is_429_with_retry_after(limited: Flask) -> None:
    client = limited.test_client()
    statuses = [client.get("/api/cases").status_code for _ in range(3)]
    assert statuses == [200, 200, 200]
    refused = client.get("/api/cases")
    assert_documented(refused, "GET", "/api/cases")
    assert refused.status_code == 429 and refused.json["code"] == 429
    assert refused.json["data"] is None and "too many requests" in refused.json["message"]
    assert 0 < int(refused.headers["Retry-After"]) <= 60
    assert client.get("/healthz").status_code == 200  # probes are never limited
    assert client.get("/").status_code == 200  # nor are the pages


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
def test_each_api_key_and_each_address_has_its_own_budget(limited: Flask) -> None:
    client = limited.test_client()
    for _ in range(3):
        client.get("/api/cases", headers={"Authorization": "Bearer one"})
    assert client.get("/api/cases", headers={"Authorization": "Bearer one"}).status_code == 429
    assert client.get("/api/cases", headers={"Authorization": "Bearer two"}).status_code == 200
    other = client.get("/api/cases", environ_base={"REMOTE_ADDR": "10.9.8.7"})
    assert other.status_code == 200


def test_the_counters_live_in_redis_when_configured(
    database: Database, demo_backend: DemoTelemetryBackend, redis_url: str, tmp_path: Path
) -> None:
    """Two apps (two workers) on one Redis share one budget per client."""
    key = {"Authorization": f"Bearer {secrets.token_hex(8)}"}  # a budget no other run shares

    def worker(name: str) -> Flask:
        return make_app(
            database,
            demo_backend,
            None,
            tmp_path / name,
            rate_limit="2/minute",
            redis_url=redis_url,
        )

    first, second = worker("a").test_client(), worker("b").test_client()
    assert first.get("/api/cases", headers=key).status_code == 200
    assert second.get("/api/cases", headers=key).status_code == 200
    assert first.get("/api/cases", headers=key).status_code == 429
    assert second.get("/api/cases", headers=key).status_code == 429


@pytest.mark.parametrize("value", ["lots", "30/fortnight", "-1/minute"])
def test_a_bad_rate_is_refused_at_start_up(value: str) -> None:
    with pytest.raises(SettingsError, match="RATE_LIMIT"):
        Settings.from_env({"RATE_LIMIT": value})


def test_unset_means_unlimited() -> None:
    assert Settings.from_env({}).rate_limit is None
