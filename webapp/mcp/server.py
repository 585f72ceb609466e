"""This app's tools and ``diagnose`` for any MCP client (``flask --app webapp mcp``).

A tool call is a run of its own (flow ``tool``) holding one invocation, answered with the
message an executor reads plus the run's ids; ``diagnose`` is a complex chat turn. Transports:
stdio, or streamable HTTP (behind ``Authorization: Bearer <API_KEY>`` when that is set).
"""

from __future__ import annotations

import hmac
import json
from typing import Any

import anyio
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from diagnosis_graph.workflow.ports import SUCCESS

from ..api.requests import ID_PATTERN
from ..container import Services
from ..diagnosis import new_run_id
from ..persistence.runs import FAILED, Finish, new_session_id
from ..services.evidence_view import evidence_view
from ..tools.registry import ToolBox, ToolCallResult, ToolSpec, object_schema

MCP, TOOL_FLOW, AGENT = "MCP", "tool", "mcp"
DIAGNOSE = "diagnose"


class Gateway:
    """Runs the MCP calls: a tool call as a run of its own, ``diagnose`` as a chat turn."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self.specs: dict[str, ToolSpec] = {s.name: s for s in services.diagnoser.tools}
        #: The session every tool-call run of this server joins.
        self.session_id = new_session_id()

    def tools(self) -> list[Tool]:
        """The tools served, with their JSON schemas."""
        served = [
            Tool(name=s.name, description=s.description, input_schema=dict(s.parameters))
            for s in self.specs.values()
        ]
        limit = self.services.settings.max_question_chars
        diagnose = object_schema(
            "question",
            question={"type": "string", "minLength": 1, "maxLength": limit},
            session_id={"type": "string", "pattern": f"^{ID_PATTERN.pattern}$"},
        )
        text = (
            "Diagnose an incident question with evidence: plans, queries telemetry, verifies "
            "every claim against the recorded tool outputs, and returns the rendered answer, "
            "its run id and the verified evidence (invocation id, path, excerpt). Pass the "
            "returned session_id to ask a follow-up."
        )
        return [*served, Tool(name=DIAGNOSE, description=text, input_schema=diagnose)]

    def call(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        """Run one call; failures are results with ``is_error``, never exceptions."""
        if name == DIAGNOSE:
            return self.diagnose(arguments)
        if name not in self.specs:
            return _result({"error": f"unknown tool {name!r}; see tools/list"}, error=True)
        run_id = new_run_id()
        question = f"{name} {json.dumps(arguments, ensure_ascii=False)}"[:4000]
        self.services.chat.runs.open_run(run_id, self.session_id, MCP, TOOL_FLOW, question)
        done: list[ToolCallResult] = []

        def work(_: Any) -> Finish:
            box = ToolBox(list(self.specs.values()), self.services.chat.audit, AGENT)
            done.append(box.call(name, json.dumps(arguments), None))
            if done[0].status == SUCCESS:
                return Finish(SUCCESS, None)
            return Finish(FAILED, None, error_message=json.loads(done[0].content).get("error"))

        finish = self.services.chat.lifecycle.execute(self.session_id, run_id, work)
        if not done:
            return _result({"run_id": run_id, "error": finish.error_message}, error=True)
        message = json.loads(done[0].content)
        message.update(run_id=run_id, session_id=self.session_id)
        return _result(message, error=done[0].status != SUCCESS)

    def diagnose(self, arguments: dict[str, Any]) -> CallToolResult:
        """A complex chat turn; the answer, its ids and the verified evidence it cites."""
        question = arguments.get("question")
        session_id = arguments.get("session_id")
        limit = self.services.settings.max_question_chars
        if not isinstance(question, str) or not question.strip() or len(question) > limit:
            return _result({"error": f"question must be 1-{limit} characters"}, error=True)
        if session_id is not None and not (
            isinstance(session_id, str) and ID_PATTERN.fullmatch(session_id)
        ):
            return _result({"error": f"session_id must match {ID_PATTERN.pattern}"}, error=True)
        outcome = self.services.chat.chat(question, session_id=session_id, mode="complex")
        run, invocations = self.services.records.invocations(outcome.session_id, outcome.run_id)
        return _result(
            {
                "run_id": outcome.run_id,
                "session_id": outcome.session_id,
                "status": outcome.status,
                "degraded": outcome.degraded,
                "answer": outcome.answer,
                "error": outcome.error_message,
                "evidence": evidence_view(run, invocations)["evidence"],
            },
            error=not outcome.success,
        )


def _result(message: dict[str, Any], *, error: bool) -> CallToolResult:
    text = json.dumps(message, ensure_ascii=False, default=str)
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=json.loads(text),
        is_error=error,
    )


def build_server(gateway: Gateway) -> Server[Any]:
    """The low-level SDK server over ``gateway``; blocking calls run in worker threads."""

    async def list_tools(_: Any, __: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=gateway.tools())

    async def call_tool(_: Any, params: CallToolRequestParams) -> CallToolResult:
        arguments = dict(params.arguments or {})
        return await anyio.to_thread.run_sync(gateway.call, params.name, arguments)

    return Server("incident-diagnosis", on_list_tools=list_tools, on_call_tool=call_tool)


def serve_stdio(services: Services) -> None:
    """Serve over this process's stdin and stdout until the client closes them."""
    server = build_server(Gateway(services))

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


class BearerGuard:
    """ASGI middleware: HTTP requests need ``Authorization: Bearer <key>`` (else 401)."""

    def __init__(self, app: ASGIApp, key: str) -> None:
        self.app = app
        self.key = key.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            header = dict(scope["headers"]).get(b"authorization", b"")
            token = header[7:] if header[:7].lower() == b"bearer " else b""
            if not hmac.compare_digest(token, self.key):
                challenge = {"WWW-Authenticate": 'Bearer realm="diagnosis"'}
                body = b'{"error": "missing or wrong bearer token"}'
                await Response(body, 401, challenge, "application/json")(scope, receive, send)
                return
        await self.app(scope, receive, send)


def serve_http(services: Services, host: str, port: int) -> None:
    """Serve streamable HTTP at ``http://host:port/mcp`` (behind ``API_KEY`` when set)."""
    server = build_server(Gateway(services))
    app: ASGIApp = server.streamable_http_app(host=host)
    if services.settings.api_key:
        app = BearerGuard(app, services.settings.api_key)
    uvicorn.run(app, host=host, port=port, log_level="warning")
