"""A throwaway deployment for the scale benchmarks: private Redis, database, web, workers.

Everything is started on 127.0.0.1 and free ports and stopped at the end: a private
``redis-server`` (the broker and the event streams), a scratch MariaDB database on the server
``BENCH_MYSQL_URL`` names (default ``mysql://root@127.0.0.1:3306/test``; set it empty for a
SQLite file), gunicorn with the gevent config of ``make serve``, and Celery workers
(``celery -A webapp.worker worker``, one process each). With ``proxy=True`` the web
and the workers reach the database through a TCP proxy the benchmark controls (``proxy.drop()``,
``down()``, ``up()``: the test suite's :class:`TcpProxy`).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))  # the proxy lives with the tests that break connections

from tests.webapp.execution.proxy import TcpProxy  # noqa: E402


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(check: Any, timeout: float, what: str) -> None:
    """Poll ``check()`` until truthy; raise naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not ready after {timeout} s")
        time.sleep(0.1)


class Cluster:
    """Starts and stops the processes; ``url`` is the web app's base URL."""

    def __init__(
        self,
        *,
        lease_seconds: int = 10,
        web_workers: int = 1,
        web_args: tuple[str, ...] = (),
        redis: bool = True,
        proxy: bool = False,
    ) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="bench-scale-"))
        self.procs: list[subprocess.Popen[bytes]] = []
        self.workers: list[subprocess.Popen[bytes]] = []
        self.redis_port = free_port()
        self.database_url, self._drop = self._database()
        served = self.database_url
        self.proxy: TcpProxy | None = None
        if proxy:
            parsed = urlparse(self.database_url)
            self.proxy = TcpProxy(parsed.port or 3306)
            netloc = parsed.netloc.rsplit("@", 1)[0] + f"@127.0.0.1:{self.proxy.port}"
            served = parsed._replace(netloc=netloc).geturl()
        self.env = {
            **os.environ,
            "DATABASE_URL": served,
            "RUN_LEASE_SECONDS": str(lease_seconds),
            "KNOWLEDGE_DB": str(self.dir / "knowledge.db"),
        }
        self.port = free_port()
        self.web_workers = web_workers
        self.web_args = web_args
        self.url = f"http://127.0.0.1:{self.port}"
        if not redis:  # runs in the web processes, events in process: make serve's default
            for name in ("REDIS_URL", "RUN_EXECUTOR"):
                self.env.pop(name, None)
            return
        self.env["REDIS_URL"] = f"redis://127.0.0.1:{self.redis_port}/0"
        self.env["RUN_EXECUTOR"] = "celery"
        self._start(
            [
                shutil.which("redis-server") or "redis-server",
                "--port",
                str(self.redis_port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            "redis.log",
        )

    def _database(self) -> tuple[str, Any]:
        server = os.environ.get("BENCH_MYSQL_URL", "mysql://root@127.0.0.1:3306/test")
        if not server:
            return f"sqlite:///{self.dir}/bench.db", None
        import pymysql

        parsed = urlparse(server)
        name = f"bench_{os.getpid()}_{secrets.token_hex(3)}"
        admin = {"host": parsed.hostname, "port": parsed.port or 3306, "user": parsed.username}
        conn = pymysql.connect(autocommit=True, password=parsed.password or "", **admin)
        with conn.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE {name} CHARACTER SET utf8mb4")
        conn.close()

        def drop() -> None:
            c = pymysql.connect(autocommit=True, password=parsed.password or "", **admin)
            with c.cursor() as cursor:
                cursor.execute(f"DROP DATABASE IF EXISTS {name}")
            c.close()

        return parsed._replace(path=f"/{name}").geturl(), drop

    def _start(self, argv: list[str], log: str, env: Any = None) -> subprocess.Popen[bytes]:
        out = open(self.dir / log, "ab")  # noqa: SIM115 - closed with the process
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        self.procs.append(proc)
        return proc

    def start_web(self) -> None:
        """gunicorn with ``make serve``'s gevent config; waits for ``/healthz``."""
        self._start(
            [
                str(BIN / "gunicorn"),
                "webapp:create_app()",
                "-c",
                "python:webapp.execution.gunicorn_conf",
                "--bind",
                f"127.0.0.1:{self.port}",
                "--workers",
                str(self.web_workers),
                "--access-logfile",
                "/dev/null",
                *self.web_args,
            ],
            "web.log",
            self.env,
        )
        wait_until(lambda: self.get("/healthz")[0] == 200, 60, "web")

    def start_worker(self) -> subprocess.Popen[bytes]:
        """One Celery worker process (concurrency 1); waits until it says it is ready."""
        n = len(self.workers)
        log = f"worker-{n}.log"
        proc = self._start(
            [
                str(BIN / "celery"),
                "-A",
                "webapp.worker",
                "worker",
                "--concurrency",
                "1",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "-n",
                f"bench{n}@%h",
                "--loglevel",
                "INFO",
            ],
            log,
            self.env,
        )
        self.workers.append(proc)
        wait_until(lambda: b"ready." in (self.dir / log).read_bytes(), 90, f"worker {n}")
        return proc

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        """SIGKILL ``proc`` and its children (a Celery worker's pool)."""
        try:
            children = subprocess.run(
                ["pgrep", "-P", str(proc.pid)], capture_output=True, text=True, check=False
            ).stdout.split()
        except FileNotFoundError:
            children = []
        for pid in [proc.pid, *map(int, children)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=10)

    def get(self, path: str) -> tuple[int, Any]:
        """``GET path``: (status, parsed JSON or None); (0, None) if nothing answers."""
        try:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            conn.request("GET", path)
            response = conn.getresponse()
            body = response.read()
            conn.close()
            return response.status, json.loads(body) if body.startswith(b"{") else None
        except OSError:
            return 0, None

    def stop(self) -> None:
        """Stop every process, drop the scratch database, remove the directory."""
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill(proc)
        if self._drop is not None:
            self._drop()
        shutil.rmtree(self.dir, ignore_errors=True)


def stream_run(port: int, question: str, timeout: float = 600) -> dict[str, Any]:
    """POST /api/chat_stream and read it to the end: run id, status, time to first event."""
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.request(
        "POST",
        "/api/chat_stream",
        json.dumps({"Question": question}),
        {"Content-Type": "application/json"},
    )
    response = conn.getresponse()
    first: float | None = None
    run_id = status = None
    buffer = b""
    while True:
        chunk = response.read1(65536) if hasattr(response, "read1") else response.read(65536)
        if not chunk:
            break
        if first is None:
            first = time.perf_counter() - started
        buffer += chunk
        while b"\n\n" in buffer:
            frame, buffer = buffer.split(b"\n\n", 1)
            if b"data: " not in frame:
                continue
            event = json.loads(frame.split(b"data: ", 1)[1].split(b"\n", 1)[0])
            if event["type"] == "metadata":
                run_id = event["data"]["runId"]
            if event["type"] == "done":
                status = event["data"]["status"]
    conn.close()
    return {
        "run_id": run_id,
        "status": status,
        "first_event_s": first,
        "total_s": time.perf_counter() - started,
    }


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile (``pct`` in 0..100)."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(1, min(len(ordered), round(pct / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]
