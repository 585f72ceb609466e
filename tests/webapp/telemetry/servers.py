"""Real Prometheus, Alertmanager and VictoriaMetrics processes on 127.0.0.1 free ports.

Each server gets a temporary directory (config, data) and is stopped by the fixture that
started it. Binaries are Debian's (``prometheus``, ``promtool``, ``prometheus-alertmanager``,
``victoria-metrics``); a missing one skips the test locally and fails it under CI=1.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.environment import unavailable

PROMETHEUS = "/usr/bin/prometheus"
PROMTOOL = "/usr/bin/promtool"
ALERTMANAGER = "/usr/bin/prometheus-alertmanager"
VICTORIA = "/usr/bin/victoria-metrics"
START_SECONDS = 30


def free_port() -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def binary(path: str) -> str:
    """``path`` when it is an executable, else skip (fail under CI=1)."""
    found = shutil.which(path)
    if not found:
        unavailable(
            f"{path} is missing (apt-get install prometheus prometheus-alertmanager "
            "victoria-metrics)"
        )
    return found


@dataclass
class Server:
    """One running server process."""

    name: str
    url: str
    process: subprocess.Popen[bytes]
    log: Path
    extra: dict[str, str] = field(default_factory=dict)

    def stop(self) -> None:
        """Terminate (then kill) the process."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)


def start(name: str, argv: Sequence[str], url: str, ready_path: str, workdir: Path) -> Server:
    """Start ``argv`` and wait until ``url + ready_path`` answers 200."""
    log = workdir / f"{name}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(list(argv), stdout=out, stderr=subprocess.STDOUT, cwd=workdir)
    server = Server(name, url, process, log)
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            if httpx.get(url + ready_path, timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"{name} did not start: {log.read_text()[-2000:]}")


def start_prometheus(
    workdir: Path,
    openmetrics: Path,
    rules: Path | None = None,
    alertmanager: str | None = None,
    port: int | None = None,
) -> Server:
    """Prometheus over a TSDB backfilled from ``openmetrics`` with promtool."""
    data = workdir / "data"
    subprocess.run(
        [
            binary(PROMTOOL),
            "tsdb",
            "create-blocks-from",
            "openmetrics",
            str(openmetrics),
            str(data),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    config: dict[str, object] = {"global": {"scrape_interval": "1m", "evaluation_interval": "1s"}}
    if rules is not None:
        config["rule_files"] = [str(rules)]
    if alertmanager is not None:
        target = alertmanager.removeprefix("http://")
        config["alerting"] = {"alertmanagers": [{"static_configs": [{"targets": [target]}]}]}
    (workdir / "prometheus.yml").write_text(json.dumps(config))
    port = port or free_port()
    argv = [
        binary(PROMETHEUS),
        f"--config.file={workdir / 'prometheus.yml'}",
        f"--storage.tsdb.path={data}",
        "--storage.tsdb.retention.time=3650d",
        "--rules.alert.resend-delay=2s",
        f"--web.listen-address=127.0.0.1:{port}",
    ]
    return start("prometheus", argv, f"http://127.0.0.1:{port}", "/-/ready", workdir)


def start_scraping_prometheus(workdir: Path) -> Server:
    """Prometheus scraping itself every second (job ``self``, no ``service`` label)."""
    port = free_port()
    target = f"127.0.0.1:{port}"
    config = {
        "global": {"scrape_interval": "1s"},
        "scrape_configs": [{"job_name": "self", "static_configs": [{"targets": [target]}]}],
    }
    (workdir / "prometheus.yml").write_text(json.dumps(config))
    argv = [
        binary(PROMETHEUS),
        f"--config.file={workdir / 'prometheus.yml'}",
        f"--storage.tsdb.path={workdir / 'data'}",
        f"--web.listen-address={target}",
    ]
    return start("prometheus", argv, f"http://{target}", "/-/ready", workdir)


def start_scraping_victoria(workdir: Path) -> Server:
    """VictoriaMetrics scraping itself every second (job ``self``, no ``service`` label)."""
    port = free_port()
    target = f"127.0.0.1:{port}"
    config = {
        "global": {"scrape_interval": "1s"},
        "scrape_configs": [{"job_name": "self", "static_configs": [{"targets": [target]}]}],
    }
    (workdir / "scrape.yml").write_text(json.dumps(config))
    argv = [
        binary(VICTORIA),
        f"-storageDataPath={workdir / 'vm-data'}",
        f"-httpListenAddr={target}",
        f"-promscrape.config={workdir / 'scrape.yml'}",
        "-search.disableCache",
        "-search.latencyOffset=0s",
    ]
    return start("victoria-metrics", argv, f"http://{target}", "/health", workdir)


def start_alertmanager(
    workdir: Path, webhook_url: str, token: str, port: int | None = None
) -> Server:
    """Alertmanager routing every alert to ``webhook_url`` with a bearer token, quickly."""
    config = {
        "route": {
            "receiver": "app",
            "group_by": [],  # one group: one investigation of everything firing
            "group_wait": "1s",
            "group_interval": "1s",
            "repeat_interval": "1h",
        },
        "receivers": [
            {
                "name": "app",
                "webhook_configs": [
                    {
                        "url": webhook_url,
                        "send_resolved": True,
                        "http_config": {"authorization": {"credentials": token}},
                    }
                ],
            }
        ],
    }
    (workdir / "alertmanager.yml").write_text(json.dumps(config))
    port = port or free_port()
    argv = [
        binary(ALERTMANAGER),
        f"--config.file={workdir / 'alertmanager.yml'}",
        f"--storage.path={workdir / 'am-data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--cluster.listen-address=",
    ]
    return start("alertmanager", argv, f"http://127.0.0.1:{port}", "/-/ready", workdir)


def start_victoria(workdir: Path, exposition: Path) -> Server:
    """VictoriaMetrics with ``exposition`` imported through ``/api/v1/import/prometheus``."""
    port = free_port()
    argv = [
        binary(VICTORIA),
        f"-storageDataPath={workdir / 'vm-data'}",
        f"-httpListenAddr=127.0.0.1:{port}",
        "-retentionPeriod=100y",
        "-search.disableCache",
    ]
    server = start("victoria-metrics", argv, f"http://127.0.0.1:{port}", "/health", workdir)
    response = httpx.post(
        server.url + "/api/v1/import/prometheus", content=exposition.read_bytes(), timeout=60
    )
    response.raise_for_status()
    httpx.get(server.url + "/internal/force_flush", timeout=30).raise_for_status()
    return server
