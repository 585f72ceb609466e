"""The exact-run trace, a session's runs, feedback and the case library."""

from __future__ import annotations

from typing import Any

import orjson
from flask import Blueprint, Response, request
from flask.typing import ResponseReturnValue

from diagnosis_graph import END
from diagnosis_graph.workflow.aiops import AIOPS_TRACE_VERSION, aiops_mermaid
from diagnosis_graph.workflow.trace import route_edges

from ..services.records import FEEDBACK
from . import serializers
from .context import services
from .errors import ApiError, ok
from .requests import json_body, page, pick, valid_choice, valid_id, valid_text

bp = Blueprint("runs", __name__, url_prefix="/api")


def run_ref(session_id: str) -> str:
    """The ``runId`` query parameter, with both ids validated (400 otherwise)."""
    valid_id(session_id, "sessionId")
    run_id = valid_id(request.args.get("runId"), "runId")
    assert run_id is not None
    return run_id


@bp.get("/diagnosis/<session_id>/trace")
def trace(session_id: str) -> ResponseReturnValue:
    """Everything about one run of this session; another session's run is 404 like any other.

    The stored JSON documents of steps and invocations are spliced into the response as the
    text they are stored as (orjson fragments): a 1,000-step trace is several megabytes, and
    decoding it only to encode it again would dominate the request.
    """
    found = services().records.trace(session_id, run_ref(session_id), raw_json=True)
    data = {
        "session": serializers.session(found.session) if found.session else None,
        "run": serializers.run_detail(found.run),
        "steps": [serializers.step(s, _fragment) for s in found.steps],
        "toolInvocations": [serializers.invocation(i, _fragment) for i in found.invocations],
    }
    body = orjson.dumps({"code": 200, "message": "success", "data": data})
    return Response(body, mimetype="application/json")


def _fragment(text: Any) -> orjson.Fragment:
    return orjson.Fragment(text)


@bp.get("/diagnosis/<session_id>/graph")
def graph(session_id: str) -> ResponseReturnValue:
    """The run's graph as Mermaid with the route it took highlighted.

    A chat run draws the diagnosis graph; an AIOps run (trace ``aiops-stategraph-v1``) draws
    the supervisor graph, and ``alerts`` lists each alert's route through its nested diagnosis
    graph.
    """
    run_id = run_ref(session_id)
    run = services().records.run(session_id, run_id)
    trace = run["orchestration_trace"]
    if not trace:
        return ok({"runId": run_id, "flow": run["flow"], "mermaid": None, "route": []})
    edges = route_edges(trace)
    data = {"runId": run_id, "flow": run["flow"], "route": _route(edges)}
    if trace.get("version") == AIOPS_TRACE_VERSION:
        data["mermaid"] = aiops_mermaid(edges)
        data["alerts"] = [
            {
                "alertId": alert.get("alert_id"),
                "alertName": alert.get("alert_name"),
                "route": _route(route_edges(alert.get("trace") or {})),
            }
            for alert in trace.get("alerts") or []
        ]
    else:
        data["mermaid"] = services().diagnoser.graph.to_mermaid(edges)
    return ok(data)


def _route(edges: list[tuple[str, str]]) -> list[str]:
    """The node executions of a route, in order (START and END left out)."""
    return [edges[0][1], *(to for _, to in edges[1:] if to != END)] if edges else []


@bp.get("/diagnosis/<session_id>/runs")
def runs(session_id: str) -> ResponseReturnValue:
    """The session's runs, newest first."""
    valid_id(session_id, "sessionId")
    limit, offset = page()
    rows = services().records.runs(session_id, limit, offset)
    return ok(
        {
            "sessionId": session_id,
            "runs": [serializers.run_summary(r) for r in rows],
            "limit": limit,
            "offset": offset,
        }
    )


@bp.post("/feedback")
def feedback() -> ResponseReturnValue:
    """Rate a run; ``useful`` puts it in the case library, ``not_useful`` takes it out."""
    body = json_body()
    session_id = valid_id(pick(body, "sessionId", "SessionId", "Id", "id"), "sessionId")
    run_id = valid_id(pick(body, "runId", "RunId"), "runId")
    if pick(body, "feedback", "Feedback") is None:
        raise ApiError(400, "feedback is required")
    value = valid_choice(pick(body, "feedback", "Feedback"), "feedback", FEEDBACK, "")
    comment = valid_text(pick(body, "comment", "Comment"), "comment", 2000, required=False)
    assert session_id is not None and run_id is not None
    run = services().records.feedback(session_id, run_id, value, comment)
    return ok(serializers.run_summary(run))


@bp.get("/cases")
def cases() -> ResponseReturnValue:
    """The case library, newest first."""
    limit, offset = page()
    rows, total = services().records.cases(limit, offset)
    return ok(
        {
            "cases": [serializers.case(r) for r in rows],
            "total": total,
            "limit": limit,
            "offset": offset,
        }
    )


@bp.get("/cases/<run_id>")
def case(run_id: str) -> ResponseReturnValue:
    """One case of the library."""
    valid_id(run_id, "runId")
    return ok(serializers.case(services().records.case(run_id)))
