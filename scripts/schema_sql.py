"""Write ``schema.sql`` from the peewee models (``make schema``): the MySQL/MariaDB DDL that
``create_schema`` creates, for a DBA who creates the tables by hand."""

from __future__ import annotations

from pathlib import Path

from webapp.persistence.schema import mysql_schema_sql

SCHEMA_SQL = Path(__file__).resolve().parents[1] / "schema.sql"

if __name__ == "__main__":
    SCHEMA_SQL.write_text(mysql_schema_sql(), encoding="utf-8")
    print(f"wrote {SCHEMA_SQL}")
