"""Four processes creating the schema of one fresh database at once all succeed, ten times over.

Each process is a real interpreter that waits for a database URL on stdin and creates the
schema there (what every web and Celery worker does at boot); the URL is written to the four
of them back to back, so they race.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ScratchServers
from webapp.persistence.db import bind, open_database
from webapp.persistence.models import MODELS

PROCESSES = 4
ROUNDS = 10
BOOT = """
import sys
from webapp.persistence.db import bind, open_database
from webapp.persistence.schema import create_schema
print("ready", flush=True)
for line in sys.stdin:
    db = bind(open_database(line.strip()))
    try:
        create_schema(db)
        print("ok", flush=True)
    except Exception as exc:
        print(f"failed {type(exc).__name__}: {exc}".replace("\\n", " "), flush=True)
    finally:
        db.close_all() if hasattr(db, "close_all") else db.close()
"""


@pytest.mark.parametrize("backend", ["sqlite", "mysql", "postgres"])
def test_four_processes_booting_on_a_fresh_database_at_once_all_succeed(
    backend: str, scratch_servers: ScratchServers, tmp_path: Path
) -> None:
    if backend != "sqlite":
        scratch_servers.server_url(backend)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", BOOT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).parents[3],
        )
        for _ in range(PROCESSES)
    ]
    try:
        assert all(p.stdout is not None and p.stdout.readline().strip() == "ready" for p in procs)
        outcomes = []
        for round_no in range(ROUNDS):
            if backend == "sqlite":
                url = f"sqlite:///{tmp_path}/boot-{round_no}.db"
            else:
                url = scratch_servers.new_database_url(backend)
            for p in procs:
                assert p.stdin is not None
                p.stdin.write(url + "\n")
                p.stdin.flush()
            outcomes.append([p.stdout.readline().strip() for p in procs if p.stdout])
            database = bind(open_database(url))
            with database.connection_context():
                assert {m._meta.table_name for m in MODELS} <= set(database.get_tables())
            database.close()
            if backend != "sqlite":
                scratch_servers.drop(url)
        assert outcomes == [["ok"] * PROCESSES] * ROUNDS
    finally:
        for p in procs:
            if p.stdin:
                p.stdin.close()
            p.wait(timeout=30)
