"""Runs exported as GenAI-convention spans: the SDK's in-memory exporter, and OTLP/HTTP to a
receiver this test runs on 127.0.0.1."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from peewee import Database

from webapp.demo.backend import DemoTelemetryBackend
from webapp.persistence.models import AgentStep, ToolInvocation

from .conftest import app_for, free_port, services_for

QUESTION = "Why is payment-service slow since 10:00?"


def test_a_run_is_one_invoke_agent_span_with_chat_and_execute_tool_children(
    database: Database, demo_backend: DemoTelemetryBackend, tmp_path: Path
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    services = services_for(database, demo_backend, tmp_path, tracer_provider=provider)
    data = app_for(services).test_client().post("/api/chat", json={"Question": QUESTION}).json
    run_id, session_id = data["data"]["runId"], data["data"]["sessionId"]
    spans = exporter.get_finished_spans()
    roots = [s for s in spans if s.name.startswith("invoke_agent")]
    assert len(roots) == 1
    root = roots[0]
    assert root.attributes is not None
    assert root.attributes["diagnosis.run_id"] == run_id
    assert root.attributes["diagnosis.session_id"] == session_id
    assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
    chats = [s for s in spans if s.name.startswith("chat ")]
    tools = [s for s in spans if s.name.startswith("execute_tool ")]
    with database.connection_context():
        steps = list(AgentStep.select().where(AgentStep.run_id == run_id))
        invocations = ToolInvocation.select().where(ToolInvocation.run_id == run_id).count()
    assert len(chats) == len(steps) and len(tools) == invocations > 0
    for span in chats + tools:
        assert span.parent is not None and span.parent.span_id == root.context.span_id
        assert span.context.trace_id == root.context.trace_id
    model = steps[0].model
    assert chats[0].name == f"chat {model}"
    assert chats[0].attributes is not None
    assert chats[0].attributes["gen_ai.request.model"] == model
    tokens = [dict(s.attributes or {}).get("gen_ai.usage.input_tokens") for s in chats]
    assert sum(int(str(t)) for t in tokens) == sum(s.prompt_tokens for s in steps)
    assert all(s.attributes and "gen_ai.usage.output_tokens" in s.attributes for s in chats)
    assert tools[0].attributes is not None and tools[0].name == (
        "execute_tool " + str(tools[0].attributes["gen_ai.tool.name"])
    )


class Receiver:
    """An OTLP/HTTP trace receiver: decodes every ``POST /v1/traces`` it is sent."""

    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        received = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.path == "/v1/traces":
                    message = ExportTraceServiceRequest()
                    message.ParseFromString(body)
                    received.append(message)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.port = free_port()
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def spans(self) -> list[Any]:
        return [
            span
            for request in self.requests
            for resource in request.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.server.shutdown()


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
def test_with_an_otlp_endpoint_set_runs_reach_the_collector_over_http(
    database: Database, demo_backend: DemoTelemetryBackend, tmp_path: Path, receiver: Receiver
) -> None:
    services = services_for(
        database,
        demo_backend,
        tmp_path,
        otel_exporter_otlp_endpoint=f"http://127.0.0.1:{receiver.port}",
        otel_service_name="diagnosis-test",
    )
    data = app_for(services).test_client().post("/api/chat", json={"Question": QUESTION}).json
    services.telemetry.shutdown()  # flushes the batch
    spans = receiver.spans()
    names = {span.name for span in spans}
    assert "invoke_agent diagnosis" in names
    assert any(n.startswith("chat ") for n in names)
    assert any(n.startswith("execute_tool ") for n in names)
    root = next(s for s in spans if s.name == "invoke_agent diagnosis")
    attributes = {a.key: a.value.string_value for a in root.attributes}
    assert attributes["diagnosis.run_id"] == data["data"]["runId"]
    service = {
        a.key: a.value.string_value
        for a in receiver.requests[0].resource_spans[0].resource.attributes
    }
    assert service["service.name"] == "diagnosis-test"


def test_without_an_endpoint_nothing_is_exported(
    database: Database, demo_backend: DemoTelemetryBackend, tmp_path: Path
) -> None:
    services = services_for(database, demo_backend, tmp_path)
    assert services.telemetry is None and services.runner is not None
    assert services.runner.telemetry is None
