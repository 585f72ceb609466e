"""Our MCP client drives real MCP servers started by the tests: ``mcp-server-time`` from PyPI,
whose output a scripted model (the OpenAI SDK over real HTTP) cites and the gatekeeper verifies;
and a server that crashes mid-call, hangs, or cannot start - a failed tool call and a named
failure in the answer, never a 500."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from webapp import create_app
from webapp.config import Settings
from webapp.demo.backend import DemoTelemetryBackend
from webapp.diagnosis import Diagnoser
from webapp.llm.openai_client import OpenAIChatClient
from webapp.persistence.memory_audit import MemoryAudit
from webapp.tools.doc_tracker import RetrievedDocTracker
from webapp.tools.mcp_client import McpServer, McpTools, load_servers
from webapp.wiring import build_services, knowledge_for

from ..llm.scripted_server import (
    RecordedRequest,
    ScriptedOpenAIServer,
    ScriptedResponse,
    completion,
    serve,
    tool_call,
)

TIME = McpServer("time", "telemetry", sys.executable, ("-m", "mcp_server_time"))
CRASHING = Path(__file__).with_name("crashing_server.py")


@pytest.fixture
def model_server() -> Iterator[ScriptedOpenAIServer]:
    yield from serve()


def chat_model(server: ScriptedOpenAIServer) -> OpenAIChatClient:
    return OpenAIChatClient(
        api_key="sk-test",
        model="gpt-test",
        base_url=server.base_url,
        max_attempts=1,
        response_format="json_schema",
    )


def tool_results(body: Any) -> dict[str, dict[str, Any]]:
    """Tool name -> the tool message the executor read (invocation id, tool, result)."""
    found = {}
    for message in body["messages"]:
        if message["role"] == "tool":
            content = json.loads(message["content"])
            found[content["tool"]] = content
    return found


def payload(body: Any) -> dict[str, Any]:
    user = next(m for m in body["messages"] if m["role"] == "user")
    found: dict[str, Any] = json.loads(user["content"])
    return found


def scripted_model(calls: list[tuple[str, dict[str, Any]]], claims: Any) -> Any:
    """A model answering each agent by its schema name: the plan and the tool calls ``calls``,
    then ``claims(tool results)``, a verifier that supports them and a composer citing them."""

    def respond(request: RecordedRequest) -> ScriptedResponse:
        body = request.body
        schema = body["response_format"]["json_schema"]["name"]
        if schema == "planner_plan":
            queries = [{"tool": name, "arguments": args} for name, args in calls]
            plan = {"summary": "ask the tool servers", "hypotheses": ["-"], "queries": queries}
            return ScriptedResponse(json=completion(json.dumps(plan)))
        if schema == "executor_evidence_v2" and not tool_results(body):
            made = [tool_call(f"c{n}", name, json.dumps(a)) for n, (name, a) in enumerate(calls)]
            return ScriptedResponse(
                json=completion(None, tool_calls=made, finish_reason="tool_calls")
            )
        if schema == "executor_evidence_v2":
            return ScriptedResponse(json=completion(json.dumps(claims(tool_results(body)))))
        if schema == "verifier_output":
            assessed = [
                {"claim_id": c["claim_id"], "supported": True, "reason": "shown"}
                for c in payload(body)["claims"]
            ]
            verdict = {"verdict": "PASS", "claim_assessments": assessed, "critical_gaps": []}
            return ScriptedResponse(json=completion(json.dumps(verdict)))
        evidence = [e["evidence_id"] for e in payload(body)["evidence"]]
        statement = payload(body)["claims"][0]["statement"]
        composed = {
            "summary": statement + ".",
            "conclusions": [
                {"statement": statement, "claim_ids": ["C1"], "evidence_ids": evidence}
            ],
            "limitations": [],
            "recommendations": [],
        }
        return ScriptedResponse(json=completion(json.dumps(composed)))

    return respond


def evidence(statement: str, invocation_id: str, path: str, excerpt: str) -> dict[str, Any]:
    return {
        "version": "executor_evidence_v2",
        "claims": [
            {
                "claim_id": "C1",
                "statement": statement,
                "critical": True,
                "bindings": [
                    {
                        "source_invocation_id": invocation_id,
                        "raw_path": path,
                        "evidence_excerpt": excerpt,
                    }
                ],
            }
        ],
        "summary": "scripted",
    }


def test_a_scripted_model_cites_mcp_server_time_and_the_citation_verifies(
    model_server: ScriptedOpenAIServer,
) -> None:
    def cite(results: dict[str, Any]) -> dict[str, Any]:
        told = results["time_get_current_time"]
        day = told["result"]["day_of_week"]
        return evidence(f"In Europe/Paris it is {day}", told["invocation_id"], "$.day_of_week", day)

    calls = [("time_get_current_time", {"timezone": "Europe/Paris"})]
    model_server.responder = scripted_model(calls, cite)
    backend = DemoTelemetryBackend()
    audit = MemoryAudit()
    diagnoser = Diagnoser(
        model=chat_model(model_server),
        backend=backend,
        knowledge=knowledge_for(backend),
        audit=audit,
        tracker=RetrievedDocTracker(),
        external=McpTools([TIME], timeout_seconds=60),
    )
    result = diagnoser.diagnose("What day is it in Europe/Paris?", session_id="s-mcp")

    gate = result.self_evaluation["rule_evaluation"]["gatekeeper"]
    assert gate["verdict"] == "PASS", gate
    assert not result.run.degraded and result.answer is not None
    called = list(audit.invocations_for_run(result.run_id))
    assert [(r.tool_name, r.status) for r in called] == [("time_get_current_time", "SUCCESS")]
    day = called[0].raw_output["day_of_week"]
    assert f"In Europe/Paris it is {day}" in result.answer and "[E1]" in result.answer
    executor = next(r for r in model_server.chat_requests if r.body.get("tools"))
    tools = {t["function"]["name"] for t in executor.body["tools"]}
    assert {"time_get_current_time", "time_convert_time", "query_logs"} <= tools


def write_servers(tmp_path: Path) -> Path:
    path = tmp_path / "mcp.toml"
    path.write_text(
        "[mcpServers.crashy]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(CRASHING))}]\n"
        'role = "telemetry"\n\n'
        "[mcpServers.broken]\n"
        f'command = "{tmp_path / "no-such-server"}"\n'
    )
    return path


def test_a_server_that_crashes_or_hangs_mid_call_is_a_failed_tool_call_never_a_500(
    model_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    calls = [("crashy_crash", {"text": "x"}), ("crashy_hang", {})]
    model_server.responder = scripted_model(calls, lambda results: evidence("-", "inv-0", "$", "-"))
    settings = Settings.from_env(
        {"MCP_SERVERS": str(write_servers(tmp_path)), "MCP_TIMEOUT_SECONDS": "5"},
        overrides={
            "database_url": f"sqlite:///{tmp_path / 'app.db'}",
            "knowledge_db": str(tmp_path / "k.db"),
        },
    )
    assert [s.name for s in settings.mcp_server_list()] == ["crashy", "broken"]
    client = create_app(services=build_services(settings, model=chat_model(model_server)))
    chat = client.test_client().post(
        "/api/chat", json={"question": "Why is payment-service slow?", "mode": "complex"}
    )
    assert chat.status_code == 200, chat.json
    data = chat.json["data"]
    trace = client.test_client().get(
        f"/api/diagnosis/{data['sessionId']}/trace?runId={data['runId']}"
    )
    calls_made = {c["toolName"]: c for c in trace.json["data"]["toolInvocations"]}
    crash, hang = calls_made["crashy_crash"], calls_made["crashy_hang"]
    assert crash["status"] == "ERROR" and "MCP server crashy" in crash["rawOutput"]["error"]
    assert hang["status"] == "ERROR" and "did not answer within 5 s" in hang["rawOutput"]["error"]
    assert data["degraded"] is True
    assert "MCP server broken" in data["answer"] and "MCP server crashy" in data["answer"]


def test_a_bad_server_list_is_refused_at_start_naming_the_server(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"x": {"command": "a", "url": "http://b"}}}))
    with pytest.raises(ValueError, match="server 'x': give either a command or a url"):
        load_servers(path)
    path.write_text(json.dumps({"mcpServers": {"x": {"url": "http://b/mcp", "role": "cause"}}}))
    with pytest.raises(ValueError, match="role must be one of telemetry, reference"):
        Settings.from_env({"MCP_SERVERS": str(path)})


def test_a_server_list_without_the_sdk_installed_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"x": {"url": "http://b/mcp"}}}))
    monkeypatch.setitem(sys.modules, "mcp", None)  # as if the optional extra were not installed
    monkeypatch.delitem(sys.modules, "webapp.tools.mcp_client")
    with pytest.raises(ValueError, match=r"MCP_SERVERS needs the MCP SDK .*make mcp"):
        Settings.from_env({"MCP_SERVERS": str(path)})
