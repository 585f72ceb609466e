"""The exact-run trace (streamed, and paged), a session's runs, feedback and the case library."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
from flask import Blueprint, Response
from peewee import Database

from diagnosis_graph import END
from diagnosis_graph.workflow.aiops import AIOPS_TRACE_VERSION, aiops_mermaid
from diagnosis_graph.workflow.trace import route_edges

from ..services.evidence_view import evidence_view
from ..services.reads import (
    Columns,
    InputForm,
    Listing,
    Page,
    RunFilter,
    invocation_columns,
    step_columns,
)
from .context import services
from .contract import operation
from .errors import NotFound
from .models import (
    CasesQuery,
    FeedbackRequest,
    RunQuery,
    SessionRunsQuery,
    StepPageQuery,
    StepQuery,
    TracePageQuery,
    TraceQuery,
)
from .responses import (
    AlertRoute,
    Case,
    CaseList,
    Graph,
    Invocation,
    InvocationPage,
    ResponseModel,
    RunEvidence,
    RunList,
    RunSummary,
    Step,
    StepPage,
    Trace,
)

bp = Blueprint("runs", __name__, url_prefix="/api")


@bp.get("/diagnosis/<session_id>/trace")
@operation(query=TraceQuery, response=Trace, errors=(404,))
def trace(session_id: str, query: TraceQuery) -> Response:
    """Everything about one run of this session; another session's run is 404 like any other.

    Streamed: the run and its session first, then the steps and the invocations read in
    batches of 500 rows (memory is one batch, whatever the run's size). Their stored JSON
    documents are spliced in as the text they are stored as (orjson fragments), never decoded
    only to be encoded again. ``/steps`` and ``/invocations`` page the same rows. Each step's
    ``modelInput`` is the whole conversation the model was sent (``inputs=full``) or, with
    ``inputs=stored``, what the step stores: its new ``messages`` and, when it continues an
    earlier step, ``continues: {step_index, messages}`` - that step's first ``messages``
    (rebuilt) messages come before these. The stored form is linear in the run's length and
    sent as stored, without decoding a single input. With ``inputs=none`` every ``modelInput``
    is null and the inputs are not read at all (most of a trace's bytes): the form for listing
    a long run's steps, each step's input then read on its own (``/steps/<stepIndex>``).
    """
    found = services()
    run = found.records.run(session_id, query.run_id)  # 404 before anything is sent
    head = Trace.model_validate(
        {
            "session": found.records.session(session_id),
            "run": run,
            "steps": [],
            "tool_invocations": [],
        }
    ).model_dump(by_alias=True)
    del head["steps"], head["toolInvocations"]
    body = _trace_body(head, found.database, query.run_id, query.inputs)
    return Response(body, mimetype="application/json")


def _trace_body(
    head: dict[str, Any], database: Database, run_id: str, inputs: InputForm
) -> Iterator[bytes]:
    """The trace envelope as JSON text, a batch of rows per chunk.

    The body is sent after the request has ended (its connection is back in the pool by
    then), so it holds a connection of its own for as long as it streams: taken at its first
    chunk, given back when it ends or is closed (the client went away). A body never started
    takes none.
    """
    opening = orjson.dumps({"code": 200, "message": "success", "data": head})
    with database.connection_context():
        listing = Listing(database)
        yield opening[:-2] + b',"steps":['
        steps = listing.stream_steps(run_id, inputs=inputs)
        yield from _json_rows(Step, step_columns(), steps)
        yield b'],"toolInvocations":['
        yield from _json_rows(Invocation, invocation_columns(), listing.stream_invocations(run_id))
        yield b"]}}"


def _json_rows(
    model: type[ResponseModel], columns: Columns, batches: Iterator[list[tuple[Any, ...]]]
) -> Iterator[bytes]:
    """Batches of raw rows with ``columns`` as comma-separated JSON objects of ``model``, one
    chunk per batch (and the comma its own chunk: a batch is megabytes, not copied once more to
    prepend one byte). Stored JSON text goes in as is, as orjson fragments."""
    names, documents = columns
    for number, batch in enumerate(batches):
        if number:
            yield b","
        rows = [
            model.model_validate(
                {
                    n: orjson.Fragment(v) if n in documents else v
                    for n, v in zip(names, row, strict=True)
                }
            ).model_dump(by_alias=True)
            for row in batch
        ]
        yield orjson.dumps(rows)[1:-1]


@bp.get("/diagnosis/<session_id>/runs/<run_id>/steps")
@operation(query=StepPageQuery, response=StepPage, errors=(404,))
def steps(session_id: str, run_id: str, query: StepPageQuery) -> StepPage:
    """A page of the run's steps in ``stepIndex`` order; ``nextCursor`` leads to the next.

    ``inputs`` as for the trace: ``stored`` sends each model input as stored (a page never
    reads steps before it), ``full`` rebuilds it, ``none`` sends null without reading it.
    """
    listing = _run_listing(session_id, run_id)
    page = listing.steps(run_id, query.limit, query.cursor, inputs=query.inputs)
    return StepPage.model_validate(
        {
            "run_id": run_id,
            "steps": page.rows,
            "next_cursor": page.next_cursor,
            "limit": query.limit,
        }
    )


@bp.get("/diagnosis/<session_id>/runs/<run_id>/steps/<int:step_index>")
@operation(query=StepQuery, response=Step, errors=(404,))
def step(session_id: str, run_id: str, step_index: int, query: StepQuery) -> Step:
    """One step of the run, by ``stepIndex``, its model input in full (default) or as stored.

    What the trace viewer reads when a step of a trace listed with ``inputs=none`` is opened:
    rebuilding a continuing step reads only the steps its ``continues`` links lead back to.
    """
    listing = _run_listing(session_id, run_id)
    row = listing.step(run_id, step_index, inputs=query.inputs)
    if row is None:
        raise NotFound(f"run {run_id} has no step {step_index}")
    return Step.model_validate(row)


@bp.get("/diagnosis/<session_id>/runs/<run_id>/invocations")
@operation(query=TracePageQuery, response=InvocationPage, errors=(404,))
def invocations(session_id: str, run_id: str, query: TracePageQuery) -> InvocationPage:
    """A page of the run's tool invocations in creation order."""
    listing = _run_listing(session_id, run_id)
    page = listing.invocations(run_id, query.limit, query.cursor)
    return InvocationPage.model_validate(
        {
            "run_id": run_id,
            "tool_invocations": page.rows,
            "next_cursor": page.next_cursor,
            "limit": query.limit,
        }
    )


def _run_listing(session_id: str, run_id: str) -> Listing:
    """The list queries, once the run is known to be this session's (404 otherwise)."""
    found = services()
    found.records.run(session_id, run_id)
    return found.listing


@bp.get("/diagnosis/<session_id>/evidence")
@operation(query=RunQuery, response=RunEvidence, errors=(404,))
def evidence(session_id: str, query: RunQuery) -> RunEvidence:
    """The run's cited evidence as the pages draw it: charts, log-pattern tables, the window.

    Read from the recorded tool outputs the evidence cites: each cited metric series with its
    points, cited points and analysed windows (baseline, onset, incident), each cited
    `log_patterns` output as rows, each evidence item with its source, and the question's
    resolved time window.
    """
    run, invocations = services().records.invocations(session_id, query.run_id)
    return RunEvidence.model_validate(evidence_view(run, invocations))


@bp.get("/diagnosis/<session_id>/graph")
@operation(query=RunQuery, response=Graph, errors=(404,))
def graph(session_id: str, query: RunQuery) -> Graph:
    """The run's graph as Mermaid with the route it took highlighted.

    A chat run draws the diagnosis graph; an AIOps run (trace ``aiops-stategraph-v1``) draws
    the supervisor graph, and ``alerts`` lists each alert's route through its nested diagnosis
    graph. ``mermaid`` is null for runs that did not go through a graph.
    """
    run = services().records.run(session_id, query.run_id)
    trace = run["orchestration_trace"]
    if not trace:
        return Graph(run_id=query.run_id, flow=run["flow"], mermaid=None, route=[])
    edges = route_edges(trace)
    if trace.get("version") == AIOPS_TRACE_VERSION:
        alerts = [
            AlertRoute(
                alert_id=alert.get("alert_id"),
                alert_name=alert.get("alert_name"),
                route=_route(route_edges(alert.get("trace") or {})),
            )
            for alert in trace.get("alerts") or []
        ]
        return Graph(
            run_id=query.run_id,
            flow=run["flow"],
            mermaid=aiops_mermaid(edges),
            route=_route(edges),
            alerts=alerts,
        )
    mermaid = services().diagnoser.graph.to_mermaid(edges)
    return Graph(run_id=query.run_id, flow=run["flow"], mermaid=mermaid, route=_route(edges))


def _route(edges: list[tuple[str, str]]) -> list[str]:
    """The node executions of a route, in order (START and END left out)."""
    return [edges[0][1], *(to for _, to in edges[1:] if to != END)] if edges else []


@bp.get("/diagnosis/<session_id>/runs")
@operation(query=SessionRunsQuery, response=RunList, errors=(404,))
def runs(session_id: str, query: SessionRunsQuery) -> RunList:
    """The session's runs, newest first: keyset pages by ``cursor`` (``nextCursor``), or by
    ``offset`` as before."""
    found = services()
    if found.records.session(session_id) is None:
        raise NotFound(f"session {session_id} not found")
    listing, filters = found.listing, RunFilter(session_id=session_id)
    if query.offset and not query.cursor:
        rows = found.records.runs(session_id, query.limit, query.offset)
        page = Page(rows, None)
    else:
        page = listing.runs(filters, query.limit, query.cursor)
    return RunList.model_validate(
        {
            "session_id": session_id,
            "runs": page.rows,
            "limit": query.limit,
            "offset": query.offset,
            "next_cursor": page.next_cursor,
        }
    )


@bp.post("/feedback")
@operation(body=FeedbackRequest, response=RunSummary, errors=(404, 409))
def feedback(body: FeedbackRequest) -> RunSummary:
    """Rate a run; ``useful`` puts it in the case library, ``not_useful`` takes it out.

    Idempotent: the same feedback again is 200 with the run unchanged, also when sent
    concurrently. Feedback never changes the run's status.
    """
    run = services().records.feedback(body.session_id, body.run_id, body.feedback, body.comment)
    return RunSummary.model_validate(run)


@bp.get("/cases")
@operation(query=CasesQuery, response=CaseList)
def cases(query: CasesQuery) -> CaseList:
    """The case library, newest first: keyset pages by ``cursor`` (``nextCursor``), or by
    ``offset``; ``text`` filters question and answer."""
    listing = services().listing
    if query.offset and not query.cursor and not query.text:
        page = listing.cases_at(query.limit, query.offset)
    else:
        page = listing.cases(query.limit, query.cursor, query.text)
    return CaseList.model_validate(
        {
            "cases": page.rows,
            "limit": query.limit,
            "offset": query.offset,
            "next_cursor": page.next_cursor,
        }
    )


@bp.get("/cases/<run_id>")
@operation(response=Case, errors=(404,))
def case(run_id: str) -> Case:
    """One case of the library."""
    return Case.model_validate(services().records.case(run_id))
