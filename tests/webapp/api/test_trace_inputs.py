"""The trace with each step's model input as stored (``inputs=stored``) or left out
(``inputs=none``), and one step read on its own, on every backend.

A run is recorded the way the app records one (``SqlAudit``: a step stores its new messages and
a ``continues`` link), with agents interleaved so a link reaches back across other agents'
steps. Rebuilding the stored form on the client must give exactly the full form's steps; the
``none`` form is the full form with every ``modelInput`` null, and each step read by its index
is the full form's step.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask.testing import FlaskClient
from peewee import Database

from tests.webapp.llm.fake_model import ScriptedModel, answer, calls
from webapp.llm.react import Budget, run_react
from webapp.persistence.context import run_scope
from webapp.persistence.runs import CHAT, RunStore
from webapp.persistence.sql_audit import SqlAudit
from webapp.persistence.step_inputs import CONTINUES, rebuild_inputs
from webapp.tools.registry import ToolBox

from ..persistence.test_run_footprint import TOOLS
from .openapi_check import assert_documented
from .test_lists_api import walk

TRACE = "/api/diagnosis/sess-r/trace?runId=run-r"
STEPS = "/api/diagnosis/sess-r/runs/run-r/steps"
SYSTEM = {"role": "system", "content": "You diagnose incidents. Be brief."}


def size(steps: list[dict[str, Any]]) -> int:
    return sum(len(json.dumps(step["modelInput"])) for step in steps)


def agent_run(audit: SqlAudit, model: ScriptedModel, agent: str, question: str) -> None:
    """One agent's ReAct execution: a tool round per scripted call, then its answer."""
    messages = [SYSTEM, {"role": "user", "content": question}]
    toolbox = ToolBox(TOOLS, audit, agent)
    run_react(model, audit, agent, messages, toolbox, budget=Budget(max_rounds=8))


@pytest.fixture
def recorded(database: Database) -> list[dict[str, Any]]:
    """A run of 11 steps: planner, executor (4 rounds), verifier, executor again (a new
    conversation sharing the system prompt), composer. Returns what each model call was sent."""
    runs = RunStore(database, 3600)
    runs.ensure_session("sess-r", "why?")
    runs.create_run("run-r", "sess-r", CHAT, "complex", "why?")
    audit = SqlAudit(database)
    model = ScriptedModel([])
    script = [
        ("planner", "plan it ünï", 0),
        ("executor", "gather evidence", 4),
        ("verifier", "check the claims", 0),
        ("executor", "gather more", 2),
        ("composer", "write the answer", 0),
    ]
    with run_scope("sess-r", "run-r"):
        for agent, question, rounds in script:
            model.replies = [calls(("lookup", {"n": n})) for n in range(rounds)]
            model.replies.append(answer({"agent": agent}))
            agent_run(audit, model, agent, question)
        audit.flush()
    return model.requests


def test_rebuilding_the_stored_inputs_gives_exactly_the_full_trace(
    client: FlaskClient, recorded: list[dict[str, Any]]
) -> None:
    full_response = client.get(TRACE)
    stored_response = client.get(TRACE + "&inputs=stored")
    assert_documented(stored_response, "GET", "/api/diagnosis/<sessionId>/trace")
    full = json.loads(full_response.get_data())["data"]
    stored = json.loads(stored_response.get_data())["data"]
    assert [s["modelInput"]["messages"] for s in full["steps"]] == [r["messages"] for r in recorded]
    links = [s["modelInput"].get(CONTINUES) for s in stored["steps"]]
    # every executor round continues the step before it up to that step's last assistant
    # message (an earlier tool result is summarised from the next round on); the second
    # executor conversation continues the first one's last step by its shared system prompt
    # only, across 2 steps
    assert links[2] == {"step_index": 1, "messages": 2}
    assert links[3:6] == [{"step_index": i, "messages": 2 * i - 1} for i in range(2, 5)]
    assert links[7] == {"step_index": 5, "messages": 1}
    assert [i for i, link in enumerate(links) if link is None] == [0, 1, 6, 10]
    # a continuation stores only the messages after the ones it shares with the step it names
    for link, kept, whole in zip(links, stored["steps"], full["steps"], strict=True):
        shared = link["messages"] if link else 0
        assert len(kept["modelInput"]["messages"]) == len(whole["modelInput"]["messages"]) - shared
    assert size(stored["steps"]) < size(full["steps"])
    assert {k: v for k, v in stored.items() if k != "steps"} == {
        k: v for k, v in full.items() if k != "steps"
    }
    rebuild_inputs(stored["steps"], "modelInput", "stepIndex")
    assert stored["steps"] == full["steps"]


@pytest.mark.parametrize("limit", [1, 4, 11])
def test_stored_step_pages_rebuild_to_the_full_pages(
    client: FlaskClient, recorded: list[dict[str, Any]], limit: int
) -> None:
    first = client.get(f"{STEPS}?limit={limit}&inputs=stored")
    assert_documented(first, "GET", "/api/diagnosis/<sessionId>/runs/<runId>/steps")
    stored = walk(client, f"{STEPS}?inputs=stored", "steps", limit)
    full = walk(client, STEPS, "steps", limit)
    assert any(CONTINUES in s["modelInput"] for s in stored)
    assert all(CONTINUES not in s["modelInput"] for s in full)
    rebuild_inputs(stored, "modelInput", "stepIndex")
    assert stored == full
    assert [s["modelInput"]["messages"] for s in full] == [r["messages"] for r in recorded]


@pytest.mark.parametrize(
    "query",
    ["inputs=compact", "inputs=STORED", "inputs=", "inputs=stored%00", "inputs=" + "s" * 5000],
)
def test_an_unknown_inputs_form_is_400_naming_the_accepted_ones(
    client: FlaskClient, recorded: list[dict[str, Any]], query: str
) -> None:
    for url in (f"{TRACE}&{query}", f"{STEPS}?{query}"):
        response = client.get(url)
        assert_documented(response, "GET", url)
        assert response.status_code == 400, url
        assert response.json["message"] == "inputs must be one of: full, stored, none", url


def test_the_stored_form_of_another_sessions_run_is_404(
    client: FlaskClient, recorded: list[dict[str, Any]], database: Database
) -> None:
    RunStore(database, 3600).ensure_session("sess-x", "other")
    for url in (
        "/api/diagnosis/sess-x/trace?runId=run-r&inputs=stored",
        "/api/diagnosis/sess-x/runs/run-r/steps?inputs=stored",
        "/api/diagnosis/sess-x/trace?runId=run-r&inputs=none",
        "/api/diagnosis/sess-x/runs/run-r/steps?inputs=none",
        "/api/diagnosis/sess-x/runs/run-r/steps/0",
    ):
        assert client.get(url).status_code == 404, url


def without_inputs(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [step | {"modelInput": None} for step in steps]


def test_the_none_form_is_the_full_trace_with_every_input_null(
    client: FlaskClient, recorded: list[dict[str, Any]]
) -> None:
    response = client.get(TRACE + "&inputs=none")
    assert_documented(response, "GET", "/api/diagnosis/<sessionId>/trace")
    full = json.loads(client.get(TRACE).get_data())["data"]
    bare = json.loads(response.get_data())["data"]
    assert len(bare["steps"]) == len(recorded) == 11
    assert all(step["modelInput"] is None for step in bare["steps"])
    assert all(step["modelInput"] is not None for step in full["steps"])
    assert bare == full | {"steps": without_inputs(full["steps"])}
    assert len(response.get_data()) < len(client.get(TRACE + "&inputs=stored").get_data())


@pytest.mark.parametrize("limit", [1, 4, 11])
def test_none_step_pages_are_the_full_pages_without_inputs(
    client: FlaskClient, recorded: list[dict[str, Any]], limit: int
) -> None:
    first = client.get(f"{STEPS}?limit={limit}&inputs=none")
    assert_documented(first, "GET", "/api/diagnosis/<sessionId>/runs/<runId>/steps")
    bare = walk(client, f"{STEPS}?inputs=none", "steps", limit)
    full = walk(client, STEPS, "steps", limit)
    assert [s["stepIndex"] for s in bare] == list(range(11))
    assert bare == without_inputs(full)


def test_each_step_read_on_its_own_is_the_traces_step(
    client: FlaskClient, recorded: list[dict[str, Any]]
) -> None:
    """What the viewer fetches when a step is opened: the full input (rebuilt from the links
    back, across other agents' steps) by default, the stored one on request."""
    full = json.loads(client.get(TRACE).get_data())["data"]["steps"]
    stored = json.loads(client.get(TRACE + "&inputs=stored").get_data())["data"]["steps"]
    for index in range(len(recorded)):
        url = f"{STEPS}/{index}"
        response = client.get(url)
        assert_documented(
            response, "GET", "/api/diagnosis/<sessionId>/runs/<runId>/steps/<stepIndex>"
        )
        assert response.json["data"] == full[index], index
        assert response.json["data"]["modelInput"]["messages"] == recorded[index]["messages"]
        assert client.get(url + "?inputs=stored").json["data"] == stored[index], index
        assert client.get(url + "?inputs=none").json["data"] == full[index] | {"modelInput": None}


@pytest.mark.parametrize(
    ("suffix", "status"),
    [("/11", 404), ("/99999", 404), ("/-1", 404), ("/x", 404), ("/2147483648", 400)],
)
def test_a_step_the_run_does_not_have_is_404(
    client: FlaskClient, recorded: list[dict[str, Any]], suffix: str, status: int
) -> None:
    response = client.get(STEPS + suffix)
    assert response.status_code == status
    if status == 400:
        assert_documented(
            response, "GET", "/api/diagnosis/<sessionId>/runs/<runId>/steps/<stepIndex>"
        )
        assert "stepIndex" in response.json["message"]
