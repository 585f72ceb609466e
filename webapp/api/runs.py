"""The exact-run trace, a session's runs, feedback and the case library."""

from __future__ import annotations

import orjson
from flask import Blueprint, Response

from diagnosis_graph import END
from diagnosis_graph.workflow.trace import route_edges

from .context import services
from .contract import operation
from .models import FeedbackRequest, PageQuery, RunQuery
from .responses import (
    Case,
    CaseList,
    Graph,
    Invocation,
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


@bp.get("/diagnosis/<session_id>/graph")
@operation(query=RunQuery, response=Graph, errors=(404,))
def graph(session_id: str, query: RunQuery) -> Graph:
    """The diagnosis graph as Mermaid with the route this run took highlighted.

    ``mermaid`` is null for runs that did not go through the graph.
    """
    run = services().records.run(session_id, query.run_id)
    trace = run["orchestration_trace"]
    if not trace:
        return Graph(run_id=query.run_id, flow=run["flow"], mermaid=None, route=[])
    edges = route_edges(trace)
    route = [edges[0][1], *(to for _, to in edges[1:] if to != END)] if edges else []
    mermaid = services().diagnoser.graph.to_mermaid(edges)
    return Graph(run_id=query.run_id, flow=run["flow"], mermaid=mermaid, route=route)


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
