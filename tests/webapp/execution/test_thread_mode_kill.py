"""SIGKILL of a web process executing runs on its own pool (thread mode): the run is failed
``interrupted`` by another process's reaper within its lease, never left RUNNING."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import close_database
from webapp.execution.leases import LeaseKeeper
from webapp.persistence.db import bind, open_database
from webapp.persistence.models import DiagnosisRun
from webapp.persistence.runs import RunStore
from webapp.persistence.schema import create_schema

from .conftest import free_port, wait_for

ROOT = Path(__file__).parents[3]
LEASE_SECONDS = 2


def test_a_sigkilled_web_process_leaves_its_run_failed_interrupted(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/web.db"
    database = bind(open_database(url))
    create_schema(database)
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "RUN_LEASE_SECONDS": str(LEASE_SECONDS),
        "TEST_MODEL_DELAY": "0.4",
        "TEST_PORT": str(port),
        "KNOWLEDGE_DB": str(tmp_path / "knowledge.db"),
    }
    web = subprocess.Popen(
        [sys.executable, "-m", "tests.webapp.execution.web_main"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert web.stdout is not None and web.stdout.readline().strip() == "serving"
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        body = json.dumps({"Question": "Why is payment-service slow since 10:00?"})
        connection.request("POST", "/api/chat_stream", body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        first = response.readline() + response.readline() + response.readline()
        run_id = json.loads(first.decode().split("data: ", 1)[1])["data"]["runId"]

        def status() -> str:
            with database.connection_context():
                return str(DiagnosisRun.get(DiagnosisRun.run_id == run_id).status)

        def progressed() -> bool:
            with database.connection_context():
                trace = DiagnosisRun.get(DiagnosisRun.run_id == run_id).orchestration_trace
            return bool(trace and trace["transitions"])

        assert wait_for(progressed, 30)  # RUNNING, two nodes in
        web.send_signal(signal.SIGKILL)
        web.wait(timeout=10)
        killed = time.monotonic()
        reaper = LeaseKeeper(RunStore(database, 3600, lease_seconds=LEASE_SECONDS), None, 2)
        assert wait_for(lambda: reaper.tick() or status() != "RUNNING", LEASE_SECONDS * 3)
        assert time.monotonic() - killed < LEASE_SECONDS + 1
        with database.connection_context():
            run = DiagnosisRun.get(DiagnosisRun.run_id == run_id)
        assert run.status == "FAILED" and str(run.error_message).startswith("interrupted: ")
        assert f":{web.pid}" in str(run.error_message)
        assert run.orchestration_trace["transitions"]  # the partial trace it had reached
    finally:
        if web.poll() is None:
            web.kill()
            web.wait()
        close_database(database)
