"""``flask --app webapp <command>``: init-db (more commands arrive with the UI issue)."""

from __future__ import annotations

import click
from flask import Flask, current_app

from .db import create_schema


def register_cli(app: Flask) -> None:
    """Attach the commands to ``app``."""

    @app.cli.command("init-db")
    def init_db() -> None:
        """Create the tables and indexes that are missing (safe to run again)."""
        services = current_app.extensions["diagnosis"]
        created = create_schema(services.database)
        click.echo(
            f"created tables: {', '.join(created)}" if created else "schema already up to date"
        )
