"""Prometheus and VictoriaMetrics scraping themselves: real scraped series, read on the real clock.

A scraped server has what the backfilled demo data has not: no ``service`` label (services
fall back to ``job``), counters (``_total``, read as a per-second rate), metadata
(Prometheus' ``/api/v1/metadata``: a histogram's ``_count`` is a counter), and "now" from the
real clock. Each server is polled until its own samples are queryable, never timed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.webapp.telemetry.servers import (
    Server,
    start_scraping_prometheus,
    start_scraping_victoria,
)
from webapp.telemetry.common import utc_now
from webapp.telemetry.http import HttpOptions, HttpSource
from webapp.telemetry.prometheus import PrometheusBackend

STARTERS: dict[str, Callable[[Path], Server]] = {
    "prometheus": start_scraping_prometheus,
    "victoria-metrics": start_scraping_victoria,
}
#: A counter both servers export about themselves.
COUNTERS = {
    "prometheus": "prometheus_http_requests_total",
    "victoria-metrics": "vm_http_requests_total",
}


def _eventually(check: Callable[[], Any], seconds: float = 60) -> Any:
    deadline = time.monotonic() + seconds
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except httpx.HTTPError as exc:
            last = exc
        if last and not isinstance(last, Exception):
            return last
        time.sleep(0.5)
    raise AssertionError(f"not reached within {seconds}s: {last!r}")


@pytest.fixture(scope="module", params=list(STARTERS))
def scraping(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Server]]:
    """A server that has scraped itself a few times."""
    name = request.param
    server = STARTERS[name](tmp_path_factory.mktemp(f"scraping-{name}"))
    try:

        def samples() -> int:
            answer = httpx.get(
                server.url + "/api/v1/query",
                params={"query": f'count_over_time({COUNTERS[name]}{{job="self"}}[1m])'},
                timeout=5,
            ).json()
            result = answer.get("data", {}).get("result") or []
            return max((int(float(r["value"][1])) for r in result), default=0) >= 4

        _eventually(samples)
        yield name, server
    finally:
        server.stop()


def backend_on(server: Server) -> PrometheusBackend:
    """A backend with the real clock (the default) and the default labels."""
    return PrometheusBackend(HttpSource(server.name, HttpOptions(url=server.url)))


def test_services_fall_back_to_the_job_label(scraping: tuple[str, Server]) -> None:
    name, server = scraping
    backend = backend_on(server)
    assert backend.services() == ["self"]
    assert COUNTERS[name] in backend.metrics_by_service()["self"]


def test_counters_are_read_as_a_rate_on_the_real_clock(scraping: tuple[str, Server]) -> None:
    name, server = scraping
    backend = backend_on(server)
    before = utc_now()
    now = backend.reference_time()
    assert before <= now <= utc_now()  # "now" is the real clock
    answer = backend.query_metrics(
        service="self",
        metric=COUNTERS[name],
        start=now - timedelta(seconds=30),
        end=now,
        step_seconds=1,  # the server has scraped for seconds only
    )
    assert answer["query"].startswith("rate(")
    assert answer["summary"]["unit"] == "/s"
    assert answer["series"] and all(s["labels"]["job"] == "self" for s in answer["series"])
    values = [v for s in answer["series"] for _, v in s["points"] if v is not None]
    assert values and all(v >= 0 for v in values)


def test_a_histogram_count_is_a_counter_by_the_server_metadata(
    scraping: tuple[str, Server],
) -> None:
    name, server = scraping
    backend = backend_on(server)
    now = backend.reference_time()
    window: dict[str, Any] = {
        "service": "self",
        "start": now - timedelta(seconds=30),
        "end": now,
        "step_seconds": 1,
    }
    family = "go_gc_duration_seconds"  # a summary both servers export about themselves
    if name == "victoria-metrics":
        # No metric metadata: only the naming conventions apply, and ``_count`` is no counter.
        assert backend.http.request("GET", "/api/v1/metadata")["data"] == {}
    count = backend.query_metrics(metric=f"{family}_count", **window)
    total = backend.query_metrics(metric=f"{family}_sum", **window)
    gauge = backend.query_metrics(metric="go_goroutines", **window)
    if name == "prometheus":
        assert count["query"].startswith("rate(") and count["summary"]["unit"] == "/s"
        assert total["query"].startswith("rate(") and total["summary"]["unit"] == "s/s"
    else:
        assert not count["query"].startswith("rate(") and count["summary"]["unit"] == ""
        assert not total["query"].startswith("rate(") and total["summary"]["unit"] == ""
    assert not gauge["query"].startswith("rate(") and gauge["summary"]["last"] > 0


def test_readiness_reports_reachable_version_and_latency(scraping: tuple[str, Server]) -> None:
    name, server = scraping
    probe = backend_on(server).probe()
    assert probe["reachable"] is True and probe["error"] is None
    assert isinstance(probe["latencyMs"], float) and probe["latencyMs"] >= 0
    if name == "prometheus":
        assert probe["version"] and probe["version"][0].isdigit()
    else:  # Debian's VictoriaMetrics build answers buildinfo without a version
        assert probe["version"] is None
