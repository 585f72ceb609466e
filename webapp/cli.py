"""``flask --app webapp <command>``: init-db, ask, mcp, trace, graph, replay, export-telemetry, and
the lists of the web pages (``runs``, ``alerts``, ``cases``), each page printed as the JSON the API
answers with (its ``nextCursor`` is the ``--cursor`` of the next page)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from flask import Flask

from .api.responses import AlertList, CaseList, ResponseModel, RunPage
from .config import MCP_EXTRA
from .container import Services
from .container import services as _services
from .demo.snapshot import write_snapshot
from .persistence.listing import CursorError, Page, RunFilter
from .persistence.records import NotFound
from .persistence.schema import create_schema
from .replay import (
    Recording,
    conclusion_lines,
    export_recording,
    replay_diagnoser,
    side_by_side,
)
from .services.alert_inbox import AlertInbox
from .services.routing import MODES
from .telemetry.common import parse_timestamp
from .telemetry.port import TelemetryError

STATUSES = ("PENDING", "RUNNING", "SUCCESS", "FAILED")
FLOWS = ("complex", "simple", "aiops", "tool")  # as GET /api/runs accepts
FEEDBACK = ("useful", "not_useful", "none")
MAX_LIMIT = 200
T = TypeVar("T")


def short(value: Any, width: int = 120) -> str:
    """``value`` on one line, cut to ``width`` characters (other than text: as JSON)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    line = " ".join(text.split()) if value is not None else ""
    return line if len(line) <= width else line[: width - 1] + "…"


def _read(read: Callable[[], T]) -> T:
    """``read()``; a bad cursor is a bad ``--cursor``, a record that is not there an error."""
    try:
        return read()
    except CursorError as exc:
        raise click.BadParameter(str(exc), param_hint="--cursor") from None
    except NotFound as exc:
        raise click.ClickException(str(exc)) from None


def _echo_page(model: type[ResponseModel], rows: str, read: Callable[[], Page], limit: int) -> None:
    """Print the page ``read`` gives as the API's JSON for it (``model``, its rows as ``rows``)."""
    page = _read(read)
    body = {rows: page.rows, "next_cursor": page.next_cursor, "limit": limit, "offset": 0}
    click.echo(model.model_validate(body).model_dump_json(indent=2))


def register_cli(app: Flask) -> None:
    """Attach the commands to ``app``."""

    @app.cli.command("init-db")
    def init_db() -> None:
        """Create the tables and indexes that are missing (safe to run again)."""
        created = create_schema(_services().database)
        click.echo(
            f"created tables: {', '.join(created)}" if created else "schema already up to date"
        )

    @app.cli.command("mcp")
    @click.option("--http", "http", is_flag=True, help="Streamable HTTP instead of stdio.")
    @click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: bind address.")
    @click.option("--port", default=8001, show_default=True, help="HTTP: port (path /mcp).")
    def mcp(http: bool, host: str, port: int) -> None:
        """Serve the tools and ``diagnose`` over MCP (stdio, or streamable HTTP)."""
        try:
            from .mcp.server import serve_http, serve_stdio
        except ModuleNotFoundError:
            raise click.ClickException(f"serving MCP needs the MCP SDK ({MCP_EXTRA})") from None

        if http:
            click.echo(f"MCP over streamable HTTP at http://{host}:{port}/mcp", err=True)
            serve_http(_services(), host, port)
        else:
            serve_stdio(_services())

    @app.cli.command("ask")
    @click.argument("question")
    @click.option("--session", "session_id", default=None, help="Continue this session.")
    @click.option("--mode", type=click.Choice(MODES), default="auto", show_default=True)
    def ask(question: str, session_id: str | None, mode: str) -> None:
        """Run a diagnosis in the terminal: a progress line per node, then the answer."""

        def progress(event: dict[str, Any]) -> None:
            click.echo(
                f"  -> {event['node']:<15} {event['outcome']:<20} "
                f"{event['reason_code']} (attempt {event['attempt']})",
                err=True,
            )

        click.echo(f"asking: {question}", err=True)
        outcome = _services().chat.chat(
            question, session_id=session_id, mode=mode, on_event=progress
        )
        click.echo("")
        click.echo(outcome.answer or f"FAILED: {outcome.error_message}")
        click.echo(
            f"session: {outcome.session_id}  run: {outcome.run_id}  flow: {outcome.flow}  "
            f"status: {outcome.status}{'  (degraded)' if outcome.degraded else ''}"
        )
        click.echo(f"trace:   flask --app webapp trace {outcome.session_id} {outcome.run_id}")
        if not outcome.success:
            sys.exit(1)

    @app.cli.command("trace")
    @click.argument("session_id")
    @click.argument("run_id")
    def trace(session_id: str, run_id: str) -> None:
        """Print a run's trace: summary, route, steps, tool invocations and cited evidence."""
        found = _read(lambda: _services().records.trace(session_id, run_id))
        for line in trace_lines(found.run, found.steps, found.invocations):
            click.echo(line)

    @app.cli.command("replay")
    @click.argument("session_id")
    @click.argument("run_id")
    @click.option(
        "--export",
        "export_path",
        type=click.Path(dir_okay=False, writable=True),
        default=None,
        help="Also write the recording as a JSON fixture (for make eval RECORDED=DIR).",
    )
    def replay_command(session_id: str, run_id: str, export_path: str | None) -> None:
        """Re-run a recorded run's question with the current model and prompts.

        Every tool call is served from the run's recorded invocations; a call the recording
        lacks is reported as a miss and never sent to a backend.
        """
        for line in replay_lines(_services(), session_id, run_id, export_path):
            click.echo(line)

    @app.cli.command("export-telemetry")
    @click.option("--out", "out", required=True, type=click.Path(file_okay=False))
    @click.option("--start", "start", required=True, help="ISO-8601, e.g. 2026-12-01T09:00:00Z")
    @click.option("--end", "end", default=None, help="ISO-8601; default: now")
    @click.option("--step", "step", type=click.IntRange(1, 86400), default=60, show_default=True)
    def export_telemetry(out: str, start: str, end: str | None, step: int) -> None:
        """Write a window of the configured telemetry to a TELEMETRY_DIR folder."""
        backend = _services().backend
        begins = parse_timestamp(start)
        ends = parse_timestamp(end) if end else backend.reference_time()
        if begins is None or ends is None:
            raise click.BadParameter("--start and --end must be ISO-8601 times")
        try:
            summary = write_snapshot(backend, Path(out), start=begins, end=ends, step_seconds=step)
        except TelemetryError as exc:
            raise click.ClickException(str(exc)) from None
        click.echo(
            f"{out}: {summary['services']} services, {summary['series']} series, "
            f"{summary['log_records']} log records, {summary['alerts']} alerts"
        )
        for kind in ("skipped", "truncated"):
            for line in summary[kind]:
                click.echo(f"{kind} {line}")

    @app.cli.command("graph")
    def graph() -> None:
        """Print the diagnosis graph as Mermaid (a run's route: ``GET .../graph?runId=``)."""
        click.echo(_services().diagnoser.graph.to_mermaid(), nl=False)

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
        """List runs, newest first, as ``GET /api/runs`` does."""
        listing, wanted = _services().listing, RunFilter(**filters)
        _echo_page(RunPage, "runs", lambda: listing.runs(wanted, limit, cursor), limit)

    @app.cli.command("cases")
    @click.option("--text", default=None, help="In the question or the answer.")
    @limit_option
    @cursor_option
    def cases(text: str | None, limit: int, cursor: str | None) -> None:
        """List the case library, newest first, as ``GET /api/cases`` does."""
        listing = _services().listing
        _echo_page(CaseList, "cases", lambda: listing.cases(limit, cursor, text), limit)

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
        """List received alerts with their runs, most recently updated first, as
        ``GET /api/alerts`` does."""

        def read_only(_: str) -> Any:
            raise click.ClickException("listing alerts starts no run")

        inbox = AlertInbox(_services().database, read_only)
        _echo_page(AlertList, "alerts", lambda: inbox.page(state, limit, cursor), limit)


def replay_lines(
    services: Services, session_id: str, run_id: str, export_path: str | None = None
) -> list[str]:
    """Replay a recorded run (see ``webapp.replay``): the lines that compare old and new."""
    found = _read(lambda: services.records.trace(session_id, run_id))
    history = _history_before(services, session_id, found.run)
    recording = Recording.from_invocations(found.invocations)
    if export_path:
        definitions = [spec.definition() for spec in services.diagnoser.tools]
        document = export_recording(
            found.run, found.invocations, services.backend, definitions, history
        )
        with open(export_path, "w", encoding="utf-8") as handle:
            json.dump(document, handle, ensure_ascii=False, indent=1)
        click.echo(f"exported the recording to {export_path}", err=True)
    diagnoser = replay_diagnoser(services.model, services.backend, recording)
    question = found.run["question"]
    result = diagnoser.diagnose(question, session_id="replay", history=history)
    old, new = conclusion_lines(found.run["answer"]), conclusion_lines(result.answer)
    lines = [f"question: {question}", f"model:    {services.model.model_name}", ""]
    lines += [*side_by_side(old, new), ""]
    lines.append(
        f"tool calls served from the recording: {recording.hits}, misses: {len(recording.misses)}"
    )
    lines += [f"  miss: {miss.tool} {miss.arguments}" for miss in recording.misses]
    return lines


def _history_before(
    services: Services, session_id: str, run: dict[str, Any]
) -> list[dict[str, Any]]:
    """The session's earlier successful turns, oldest first, as chat history messages."""
    earlier = [
        r
        for r in services.listing.runs(RunFilter(session_id=session_id), 50).rows
        if r["started_at"] < run["started_at"] and r["answer"]
    ]
    return [
        {"role": role, "content": row[key], "run_id": row["run_id"], "at": str(row["started_at"])}
        for row in reversed(earlier[:6])
        for role, key in (("user", "question"), ("assistant", "answer"))
    ]


def trace_lines(
    run: dict[str, Any], steps: list[dict[str, Any]], invocations: list[dict[str, Any]]
) -> list[str]:
    """The readable text of a trace."""
    lines = [
        f"run {run['run_id']}  session {run['session_id']}",
        f"  {run['agent_flow']}/{run['flow']}  status {run['status']}"
        f"{'  degraded' if run['degraded'] else ''}  {run['duration_ms']} ms  "
        f"{run['step_count']} steps  {run['tool_count']} tool calls",
        f"  question: {run['question']}",
    ]
    if run["error_message"]:
        lines.append(f"  error: {run['error_message']}")
    orchestration = run["orchestration_trace"]
    if orchestration:
        route = [t["from"] for t in orchestration["transitions"]] + [orchestration["final_node"]]
        lines += [
            "",
            f"route ({orchestration['termination_reason']}):",
            "  " + " -> ".join(str(node) for node in route),
        ]
    lines += ["", "steps:"]
    for step in steps:
        lines.append(
            f"  #{step['step_index']:<3} {step['agent_name']:<10} {step['status']:<8} "
            f"{step['duration_ms'] or 0:>6} ms  tokens {step['prompt_tokens']}+"
            f"{step['completion_tokens']}{'  tool call' if step['has_tool_call'] else ''}"
        )
    lines += ["", "tool invocations:"]
    for invocation in invocations:
        lines.append(
            f"  {invocation['invocation_id']} {invocation['tool_name']} "
            f"{invocation['status']} {invocation['duration_ms']} ms "
            f"{short(invocation['arguments'])}"
        )
        if invocation["error_message"]:
            lines.append(f"      error: {invocation['error_message']}")
        for ref in invocation["evidence_refs"] or []:
            mark = "cited" if ref.get("cited") else "verified"
            lines.append(
                f"      {ref['evidence_id']} ({mark}) {ref['raw_path']}: "
                f"{short(ref['evidence_excerpt'])}"
            )
    if run["answer"]:
        lines += ["", "answer:", run["answer"]]
    return lines
