"""The exact-run trace, a session's runs, feedback and the case library."""

from __future__ import annotations

import orjson
from flask import Blueprint, Response

from diagnosis_graph import END
from diagnosis_graph.workflow.aiops import AIOPS_TRACE_VERSION, aiops_mermaid
from diagnosis_graph.workflow.trace import route_edges

from ..services.evidence_view import evidence_view
from .context import services
from .contract import operation
from .models import FeedbackRequest, PageQuery, RunQuery
from .responses import (
    AlertRoute,
    Case,
    CaseList,
    Graph,
    Invocation,
    RunEvidence,
    RunList,
    RunSummary,
    Step,
    Trace,
    dump_rows,
)

bp = Blueprint("runs", __name__, url_prefix="/api")


@bp.get("/diagnosis/<session_id>/trace")
@operation(query=RunQuery, response=Trace, errors=(404,))
def trace(session_id: str, query: RunQuery) -> Response:
    """Everything about one run of this session; another session's run is 404 like any other.

    The stored JSON documents of steps and invocations are spliced into the response as the
    text they are stored as (orjson fragments): a 1,000-step trace is several megabytes, and
    decoding it only to encode it again would dominate the request.
    """
    found = services().records.trace(session_id, query.run_id, raw_json=True)
    head = Trace.model_validate(
        {"session": found.session, "run": found.run, "steps": [], "tool_invocations": []}
    ).model_dump(by_alias=True)
    head["steps"] = dump_rows(Step, found.steps, raw=orjson.Fragment)
    head["toolInvocations"] = dump_rows(Invocation, found.invocations, raw=orjson.Fragment)
    body = {"code": 200, "message": "success", "data": head}
    return Response(orjson.dumps(body), mimetype="application/json")


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
@operation(query=PageQuery, response=RunList, errors=(404,))
def runs(session_id: str, query: PageQuery) -> RunList:
    """The session's runs, newest first."""
    rows = services().records.runs(session_id, query.limit, query.offset)
    return RunList.model_validate(
        {"session_id": session_id, "runs": rows, "limit": query.limit, "offset": query.offset}
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
@operation(query=PageQuery, response=CaseList)
def cases(query: PageQuery) -> CaseList:
    """The case library, newest first."""
    rows, total = services().records.cases(query.limit, query.offset)
    return CaseList.model_validate(
        {"cases": rows, "total": total, "limit": query.limit, "offset": query.offset}
    )


@bp.get("/cases/<run_id>")
@operation(response=Case, errors=(404,))
def case(run_id: str) -> Case:
    """One case of the library."""
    return Case.model_validate(services().records.case(run_id))
