"""``flask --app webapp runs|alerts|cases``: the lists of the web pages, in the terminal.

The same queries as ``GET /api/runs``, ``/api/alerts`` and ``/api/cases``
(:mod:`webapp.persistence.listing`, :class:`webapp.services.alert_inbox.AlertInbox`); times are
UTC and say so. A page that has more ends with the ``--cursor`` of the next one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import click
from flask import Flask, current_app

from .persistence.listing import CursorError, Listing, Page, RunFilter
from .services.alert_inbox import AlertInbox

STATUSES = ("PENDING", "RUNNING", "SUCCESS", "FAILED")
FLOWS = ("complex", "simple", "aiops")
FEEDBACK = ("useful", "not_useful", "none")
MAX_LIMIT = 200
QUESTION_WIDTH = 70


def _database() -> Any:
    return current_app.extensions["diagnosis"].database


def utc(moment: datetime | str | None) -> str:
    """``2026-11-30 10:00:00 UTC`` for a naive-UTC datetime (or an ISO string); ``-`` for none."""
    if moment is None:
        return "-"
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def short(value: Any, width: int = QUESTION_WIDTH) -> str:
    """``value`` on one line, cut to ``width`` characters (other than text: as JSON)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    line = " ".join(text.split()) if value is not None else ""
    return line if len(line) <= width else line[: width - 1] + "…"


def _naive(moment: datetime | None) -> datetime | None:
    """A ``--since``/``--until`` value as naive UTC (click's DateTime has no zone: UTC)."""
    return moment.replace(tzinfo=None) if moment is not None else None


def _read(read: Callable[[], Page]) -> Page:
    try:
        return read()
    except CursorError as exc:
        raise click.BadParameter(str(exc), param_hint="--cursor") from None


def _next(page: Page) -> None:
    if page.next_cursor:
        click.echo(f"more: --cursor {page.next_cursor}")


def register_list_commands(app: Flask) -> None:
    """Attach ``runs``, ``alerts`` and ``cases`` to ``app``."""
    limit_option = click.option(
        "--limit", type=click.IntRange(1, MAX_LIMIT), default=20, show_default=True
    )
    cursor_option = click.option("--cursor", default=None, help="The cursor a page ended with.")
    when = click.DateTime(["%Y-%m-%d", "%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S"])

    @app.cli.command("runs")
    @click.option("--service", default=None, help="Runs whose tool calls or alerts name it.")
    @click.option("--status", type=click.Choice(STATUSES), default=None)
    @click.option("--flow", type=click.Choice(FLOWS), default=None)
    @click.option("--text", default=None, help="In the question or the answer.")
    @click.option("--degraded/--not-degraded", default=None)
    @click.option("--feedback", type=click.Choice(FEEDBACK), default=None)
    @click.option("--since", type=when, default=None, help="Started at or after (UTC).")
    @click.option("--until", type=when, default=None, help="Started before (UTC).")
    @click.option("--session", "session_id", default=None)
    @limit_option
    @cursor_option
    def runs(limit: int, cursor: str | None, **filters: Any) -> None:
        """List runs, newest first: started (UTC), status, flow, ids, question."""
        filters["since"], filters["until"] = _naive(filters["since"]), _naive(filters["until"])
        page = _read(lambda: Listing(_database()).runs(RunFilter(**filters), limit, cursor))
        if not page.rows:
            click.echo("no runs")
        for row in page.rows:
            mark = " degraded" if row["degraded"] else ""
            click.echo(
                f"{utc(row['started_at'])}  {row['status']:<7} {row['flow']:<7} "
                f"{row['run_id']}  {row['session_id']}  {short(row['question'])}{mark}"
            )
        _next(page)

    @app.cli.command("cases")
    @click.option("--text", default=None, help="In the question or the answer.")
    @limit_option
    @cursor_option
    def cases(text: str | None, limit: int, cursor: str | None) -> None:
        """List the case library, newest first."""
        page = _read(lambda: Listing(_database()).cases(limit, cursor, text))
        if not page.rows:
            click.echo("no cases")
        for row in page.rows:
            click.echo(
                f"{utc(row['created_at'])}  {row['run_id']}  {row['session_id']}  "
                f"{short(row['question'])}"
            )
        _next(page)

    @app.cli.command("alerts")
    @click.option(
        "--state",
        type=click.Choice(("firing", "resolved", "all")),
        default="all",
        show_default=True,
    )
    @limit_option
    @cursor_option
    def alerts(state: str, limit: int, cursor: str | None) -> None:
        """List received alerts by group (most recently updated first), with their runs."""

        def read_only(_: str) -> Any:
            raise click.ClickException("listing alerts starts no run")

        page = _read(lambda: AlertInbox(_database(), read_only).page(state, limit, cursor))
        if not page.rows:
            click.echo("no alerts" if state == "all" else f"no {state} alerts")
        groups: dict[str, list[dict[str, Any]]] = {}
        for row in page.rows:  # most recently updated group first
            groups.setdefault(row["groupKey"], []).append(row)
        for group, members in groups.items():
            click.echo(f"group {group}")
            for alert in members:
                click.echo(
                    f"  {alert['status']:<8} {alert['alertName']} ({alert['service'] or '-'})  "
                    f"since {utc(alert['startsAt'])}  fingerprint {alert['fingerprint']}"
                )
                for run in alert["runs"]:
                    click.echo(
                        f"    run {run['runId']}  {run['status']}  {utc(run['startedAt'])}  "
                        f"session {run['sessionId']}"
                    )
        _next(page)
