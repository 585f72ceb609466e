"""A new SQLite ``agent_step`` has ``model_input`` (tens of KB, in overflow pages) as its last
column, so reading a step's other columns does not walk its input's pages."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import close_database
from webapp.persistence.db import bind, open_database
from webapp.persistence.models import AgentStep
from webapp.persistence.schema import create_schema


def test_a_new_step_table_has_model_input_last(tmp_path: Path) -> None:
    database = open_database(f"sqlite:///{tmp_path / 'new.db'}")
    bind(database)
    try:
        create_schema(database)
        with database.connection_context():
            names = [c.name for c in database.get_columns("agent_step")]
    finally:
        close_database(database)
    assert names[-1] == "model_input"
    assert names == [f.column_name for f in AgentStep._meta.sorted_fields]
