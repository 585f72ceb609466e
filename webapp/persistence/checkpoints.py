"""The engine's checkpointer on the database: one ``run_checkpoint`` row per run, replaced after
every node that called a model or a tool (a node that called nothing is executed again on
resume, at no cost). A node whose rows could not be written is never checkpointed; a write
meeting a dropped connection is retried on a fresh one (the upsert is idempotent).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from peewee import Database

from diagnosis_graph.checkpoint import Checkpoint

from .audit import AuditWriteError
from .context import current_run_or_none
from .db import connection, is_mysql, retry_disconnects
from .models import RunCheckpoint, utcnow


class SqlCheckpointer:
    """:class:`diagnosis_graph.checkpoint.Checkpointer` on the ``run_checkpoint`` table."""

    def __init__(self, database: Database) -> None:
        self.database = database
        # MySQL/MariaDB upsert on any unique key (ON DUPLICATE KEY UPDATE); the others name it.
        self._target = None if is_mysql(database) else [RunCheckpoint.run_id]

    def put(self, thread_id: str, step: int, node: str, state: Mapping[str, Any]) -> None:
        """Replace the run's checkpoint unless the run wrote nothing since the last one;
        refused while a write of the run has failed."""
        run = current_run_or_none()
        journal = run.journal if run is not None and run.run_id == thread_id else None
        if journal is not None:
            if journal.failure is not None:
                raise AuditWriteError(journal.failure)
            written = journal.counts()
            if written == journal.checkpointed:
                return
        row = {
            RunCheckpoint.run_id: thread_id,
            RunCheckpoint.step: step,
            RunCheckpoint.node: node,
            RunCheckpoint.state: dict(state),
            RunCheckpoint.updated_at: utcnow(),
        }
        preserve = [field for field in row if field is not RunCheckpoint.run_id]
        query = RunCheckpoint.insert(row).on_conflict(
            conflict_target=self._target, preserve=preserve
        )
        retry_disconnects(self.database, lambda: query.execute(self.database))
        if journal is not None:
            journal.checkpointed = written

    def latest(self, thread_id: str) -> Checkpoint | None:
        """The run's checkpoint, or None."""
        with connection(self.database):
            row = (
                RunCheckpoint.select(RunCheckpoint.step, RunCheckpoint.node, RunCheckpoint.state)
                .where(RunCheckpoint.run_id == thread_id)
                .first()
            )
        return None if row is None else Checkpoint(thread_id, row.step, row.node, row.state)
