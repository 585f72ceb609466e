"""The exact-run trace, a run's evidence and graph, a session's runs, feedback and cases."""

from __future__ import annotations

from flask import Blueprint

from diagnosis_graph import END
from diagnosis_graph.workflow.aiops.graph import AIOPS_TRACE_VERSION, aiops_mermaid
from diagnosis_graph.workflow.trace import route_edges

from ..container import services
from ..services.evidence_view import evidence_view
from ..services.reads import RunFilter
from .contract import operation
from .errors import NotFound
from .models import CasesQuery, CursorQuery, FeedbackRequest, RunQuery, TraceQuery
from .responses import (
    AlertRoute,
    Case,
    CaseList,
    Graph,
    RunEvidence,
    RunPage,
    RunSummary,
    Step,
    Trace,
    paged,
)

bp = Blueprint("runs", __name__, url_prefix="/api")


@bp.get("/diagnosis/<session_id>/trace")
@operation(query=TraceQuery, response=Trace, errors=(404,))
def trace(session_id: str, query: TraceQuery) -> Trace:
    """Everything about one run of this session; another session's run is 404 like any other.

    Each step's ``modelInput`` is the whole conversation the model was sent; with
    ``inputs=none`` every ``modelInput`` is null and not read (most of a trace's bytes): the
    form for listing a long run's steps, each step's input then read from
    ``/runs/<runId>/steps/<stepIndex>``.
    """
    found = services().records.trace(session_id, query.run_id, inputs=query.inputs == "full")
    return Trace.model_validate(
        {
            "session": found.session,
            "run": found.run,
            "steps": found.steps,
            "tool_invocations": found.invocations,
        }
    )


@bp.get("/diagnosis/<session_id>/runs/<run_id>/steps/<int:step_index>")
@operation(response=Step, errors=(404,))
def step(session_id: str, run_id: str, step_index: int) -> Step:
    """One step of the run, by ``stepIndex``, with its model input: what the trace viewer
    reads when a step of a trace listed with ``inputs=none`` is opened."""
    found = services()
    found.records.run(session_id, run_id)  # 404 for another session's run
    row = found.listing.step(run_id, step_index)
    if row is None:
        raise NotFound(f"run {run_id} has no step {step_index}")
    return Step.model_validate(row)


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
    trace = run["orchestration_trace"] or {}
    edges = route_edges(trace) if trace else []
    mermaid, alerts = None, None
    if trace.get("version") == AIOPS_TRACE_VERSION:
        mermaid = aiops_mermaid(edges)
        alerts = [
            AlertRoute(
                alert_id=alert.get("alert_id"),
                alert_name=alert.get("alert_name"),
                route=_route(route_edges(alert.get("trace") or {})),
            )
            for alert in trace.get("alerts") or []
        ]
    elif trace:
        mermaid = services().diagnoser.graph.to_mermaid(edges)
    route = _route(edges)
    return Graph(run_id=query.run_id, flow=run["flow"], mermaid=mermaid, route=route, alerts=alerts)


def _route(edges: list[tuple[str, str]]) -> list[str]:
    """The node executions of a route, in order (START and END left out)."""
    return [edges[0][1], *(to for _, to in edges[1:] if to != END)] if edges else []


@bp.get("/diagnosis/<session_id>/runs")
@operation(query=CursorQuery, response=RunPage, errors=(404,))
def runs(session_id: str, query: CursorQuery) -> RunPage:
    """The session's runs, newest first: keyset pages by ``cursor`` (``nextCursor``)."""
    found = services()
    if found.records.session(session_id) is None:
        raise NotFound(f"session {session_id} not found")
    filters = RunFilter(session_id=session_id)
    page = found.listing.runs(filters, query.limit, query.cursor)
    return paged(RunPage, "runs", page)


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
    page = services().listing.cases(query.limit, query.cursor, query.text, query.offset)
    return paged(CaseList, "cases", page)


@bp.get("/cases/<run_id>")
@operation(response=Case, errors=(404,))
def case(run_id: str) -> Case:
    """One case of the library."""
    return Case.model_validate(services().records.case(run_id))
