"""Session fixtures: the demo dataset exported, and real metric servers loaded with it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import pytest

from tests.webapp.demo_export import write_exposition, write_log_dir, write_openmetrics, write_rules
from tests.webapp.telemetry.servers import Server, start_prometheus, start_victoria
from webapp.demo.backend import DEFAULT_DATA_DIR, DemoTelemetryBackend
from webapp.telemetry.http import HttpOptions, HttpSource
from webapp.telemetry.prometheus import PrometheusBackend, PrometheusOptions

SERVERS = ("prometheus", "victoria-metrics")


@pytest.fixture(scope="session")
def demo() -> DemoTelemetryBackend:
    """The bundled dataset, the reference the live backends are compared with."""
    return DemoTelemetryBackend()


@pytest.fixture(scope="session")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo dataset as OpenMetrics, exposition format, rules and a LOG_DIR."""
    out = tmp_path_factory.mktemp("export")
    write_openmetrics(DEFAULT_DATA_DIR, out)
    write_exposition(DEFAULT_DATA_DIR, out)
    write_log_dir(DEFAULT_DATA_DIR, out)
    write_rules(DEFAULT_DATA_DIR, out)
    return out


@pytest.fixture(scope="session")
def prometheus_server(tmp_path_factory: pytest.TempPathFactory, exported: Path) -> Iterator[Server]:
    """A real Prometheus with the demo metrics backfilled by promtool."""
    server = start_prometheus(tmp_path_factory.mktemp("prometheus"), exported / "metrics.om")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def victoria_server(tmp_path_factory: pytest.TempPathFactory, exported: Path) -> Iterator[Server]:
    """A real VictoriaMetrics with the demo metrics imported."""
    server = start_victoria(tmp_path_factory.mktemp("victoria"), exported / "metrics.prom")
    yield server
    server.stop()


@pytest.fixture(params=SERVERS)
def metrics_server(request: pytest.FixtureRequest) -> Server:
    """Each metric server in turn: both must pass the same tests."""
    name = "prometheus_server" if request.param == "prometheus" else "victoria_server"
    server: Server = request.getfixturevalue(name)
    return server


def pinned(moment: datetime) -> Callable[[], datetime]:
    """A clock stopped at ``moment`` (the dataset's reference time)."""
    return lambda: moment


def metrics_backend(
    server: Server, demo: DemoTelemetryBackend, options: PrometheusOptions | None = None
) -> PrometheusBackend:
    """A Prometheus backend on ``server`` whose "now" is the dataset's reference time."""
    http = HttpSource(server.name, HttpOptions(url=server.url, timeout_seconds=10))
    return PrometheusBackend(http, options, clock=pinned(demo.reference_time()))
