"""A private MariaDB restarted mid-run: the run ends SUCCESS or FAILED with a cause - its final
writes go through a fresh connection, or the lease runs out and the reaper fails it - and the
client is told; it is never left RUNNING.

The server is a private ``mariadbd`` (``mariadb-install-db`` into a temporary directory, a free
port), never the shared one.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pymysql
import pytest

from tests.conftest import close_database
from tests.environment import unavailable
from webapp import create_app
from webapp.demo.backend import DemoTelemetryBackend
from webapp.persistence.models import DiagnosisRun

from .conftest import free_port, services_for, wait_for
from .models import SlowModel

LEASE_SECONDS = 3


class PrivateMariaDB:
    """``mariadbd`` on a free port with its own data directory; can be restarted."""

    def __init__(self, workdir: Path) -> None:
        for tool in ("mariadbd", "mariadb-install-db"):
            if shutil.which(tool) is None:
                unavailable(f"{tool} is not installed")
        self.dir = workdir
        self.port = free_port()
        subprocess.run(
            [
                "mariadb-install-db",
                "--no-defaults",
                f"--datadir={workdir}/data",
                "--user=root",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
            ],
            check=True,
            capture_output=True,
        )
        self.process: subprocess.Popen[bytes] | None = None
        self.start()
        conn = pymysql.connect(host="127.0.0.1", port=self.port, user="root", autocommit=True)
        with conn.cursor() as cursor:
            cursor.execute("CREATE DATABASE diag CHARACTER SET utf8mb4")
        conn.close()
        self.url = f"mysql://root@127.0.0.1:{self.port}/diag"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                shutil.which("mariadbd") or "mariadbd",
                "--no-defaults",
                f"--datadir={self.dir}/data",
                f"--port={self.port}",
                f"--socket={self.dir}/mariadb.sock",
                "--bind-address=127.0.0.1",
                "--user=root",
                "--skip-name-resolve",
                "--innodb-buffer-pool-size=16M",
                f"--log-error={self.dir}/error.log",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

        def up() -> bool:
            try:
                pymysql.connect(host="127.0.0.1", port=self.port, user="root").close()
                return True
            except pymysql.err.OperationalError:
                return False

        assert wait_for(up, 60, 0.1), (self.dir / "error.log").read_text()[-2000:]

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=60)


@pytest.fixture
def mariadb(tmp_path: Path) -> Iterator[PrivateMariaDB]:
    server = PrivateMariaDB(tmp_path)
    yield server
    server.stop()


def test_a_database_restart_mid_run_never_leaves_the_run_running(
    mariadb: PrivateMariaDB, demo_backend: DemoTelemetryBackend, tmp_path: Path
) -> None:
    services = services_for(
        None,
        demo_backend,
        tmp_path,
        SlowModel(0.3),
        database_url=mariadb.url,
        run_lease_seconds=LEASE_SECONDS,
    )
    app = create_app(services=services)
    database = services.database
    response = app.test_client().post(
        "/api/chat_stream",
        json={"Question": "Why is payment-service slow since 10:00?"},
        buffered=False,
    )
    frames: Iterator[bytes] = iter(response.response)  # type: ignore[arg-type]
    first = next(frames).decode()
    run_id = first.split('"runId": "', 1)[1].split('"', 1)[0]

    def status() -> str | None:
        try:
            with database.connection_context():
                row = DiagnosisRun.get_or_none(DiagnosisRun.run_id == run_id)
            return None if row is None else str(row.status)
        except Exception:
            return None

    assert wait_for(lambda: status() == "RUNNING", 30)
    time.sleep(1.0)  # a few model steps in
    mariadb.kill()
    time.sleep(1.5)  # the run's writes meet a dead server meanwhile
    mariadb.start()
    restarted = time.monotonic()
    assert wait_for(lambda: status() in ("SUCCESS", "FAILED"), LEASE_SECONDS * 4 + 10)
    assert time.monotonic() - restarted < LEASE_SECONDS * 4 + 10
    with database.connection_context():
        run = DiagnosisRun.get(DiagnosisRun.run_id == run_id)
    assert run.finished_at is not None
    assert run.status == "SUCCESS" or run.error_message  # FAILED always says why
    rest = b"".join(frames).decode()
    assert '"type": "done"' in rest and f'"status": "{run.status}"' in rest
    services.workers.shutdown()
    close_database(database)
