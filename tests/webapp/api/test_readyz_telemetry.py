"""``/readyz`` reports each configured telemetry backend; an unreachable one degrades, not fails."""

from __future__ import annotations

from pathlib import Path

from flask.testing import FlaskClient
from peewee import Database

from tests.webapp.telemetry.servers import free_port
from webapp import create_app
from webapp.config import Settings
from webapp.wiring import build_services, telemetry_backend

from .openapi_check import assert_documented


def client_for(database: Database, tmp_path: Path, environ: dict[str, str]) -> FlaskClient:
    settings = Settings.from_env(environ, overrides={"knowledge_db": str(tmp_path / "k.db")})
    services = build_services(
        settings,
        database=database,
        backend=telemetry_backend(settings),
    )
    return create_app(services=services).test_client()


def test_the_demo_backend_is_reported_ready(database: Database, tmp_path: Path) -> None:
    response = client_for(database, tmp_path, {}).get("/readyz")
    assert_documented(response, "GET", "/readyz")
    assert response.json["data"]["telemetry"] == [
        {
            "backend": "demo",
            "signals": ["metrics", "logs", "alerts", "runbooks"],
            "system": "demo",
            "reachable": True,
        }
    ]


def test_an_unreachable_source_is_reported_and_degrades_readiness(
    database: Database, tmp_path: Path
) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "api.log").write_text("2026-12-01T10:00:00Z INFO up\n")
    url = f"http://127.0.0.1:{free_port()}"
    environ = {
        "TELEMETRY_BACKEND": "live",
        "PROMETHEUS_URL": url,
        "LOG_DIR": str(tmp_path / "logs"),
        "TELEMETRY_ATTEMPTS": "1",
        "PROMETHEUS_TIMEOUT_SECONDS": "1",
    }
    client = client_for(database, tmp_path, environ)
    response = client.get("/readyz")
    assert_documented(response, "GET", "/readyz")
    assert response.status_code == 200
    assert response.json["message"] == "degraded: prometheus telemetry unavailable"
    entries = {e["backend"]: e for e in response.json["data"]["telemetry"]}
    assert entries["prometheus"]["signals"] == ["metrics", "alerts"]
    assert (
        not entries["prometheus"]["reachable"] and "unreachable" in entries["prometheus"]["error"]
    )
    assert entries["log_dir"]["reachable"] and entries["log_dir"]["signals"] == ["logs"]
    for entry in entries.values():  # each backend: reachable, version and latency
        assert {"reachable", "version", "latencyMs"} <= set(entry)
        assert isinstance(entry["latencyMs"], float) and entry["latencyMs"] >= 0
    chat = client.post("/api/chat", json={"Question": "Why is api slow?"})
    assert chat.status_code == 200 and chat.json["data"]["runId"]
