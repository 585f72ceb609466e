"""OpenTelemetry export of runs as GenAI-convention spans (off unless configured).

With ``OTEL_EXPORTER_OTLP_ENDPOINT`` set, every run executed here is exported over OTLP/HTTP:
``invoke_agent <agent>`` per run (session and run ids, flow; ERROR when it FAILED), ``chat
<model>`` per model step (model, token usage, agent, status) and ``execute_tool <name>`` per
tool invocation (status, invocation id), recorded where the audit rows are written
(:class:`TracingAudit`). Message contents are not exported.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from ..persistence.audit import InvocationDraft, StepEnd, StepStart

SCOPE = "webapp.execution"
PROVIDER = "openai"


def otlp_provider(endpoint: str, service_name: str) -> TracerProvider:
    """A tracer provider exporting over OTLP/HTTP to ``endpoint`` (batched)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    exporter = OTLPSpanExporter(endpoint=endpoint.rstrip("/") + "/v1/traces")
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


class RunTelemetry:
    """Opens the root span of each run; hands out the tracer for its model and tool spans."""

    def __init__(self, provider: TracerProvider) -> None:
        self.provider = provider
        self.tracer: Tracer = provider.get_tracer(SCOPE)

    @contextmanager
    def run(self, *, agent: str, session_id: str, run_id: str, flow: str) -> Iterator[Span]:
        """The ``invoke_agent`` span, current for the block (children attach to it)."""
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": agent,
            "gen_ai.conversation.id": session_id,
            "diagnosis.run_id": run_id,
            "diagnosis.session_id": session_id,
            "diagnosis.flow": flow,
        }
        with self.tracer.start_as_current_span(
            f"invoke_agent {agent}", kind=SpanKind.INTERNAL, attributes=attributes
        ) as span:
            yield span

    @staticmethod
    def finish(span: Span, status: str, error: str | None) -> None:
        """Record the run's final status on its span."""
        span.set_attribute("diagnosis.status", status)
        if status != "SUCCESS":
            span.set_status(Status(StatusCode.ERROR, error or status))

    def shutdown(self) -> None:
        """Flush pending spans and stop exporting."""
        self.provider.shutdown()


class TracingAudit:
    """An audit store that also records ``chat`` and ``execute_tool`` spans."""

    def __init__(self, inner: Any, tracer: Tracer) -> None:
        self.inner = inner
        self.tracer = tracer
        self._open: dict[int, Span] = {}
        self._lock = threading.Lock()

    def before_model(self, start: StepStart) -> int:
        """Note the call, and open its ``chat <model>`` span."""
        ticket = int(self.inner.before_model(start))
        span = self.tracer.start_span(
            f"chat {start.model}",
            kind=SpanKind.CLIENT,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": PROVIDER,
                "gen_ai.request.model": start.model,
                "gen_ai.agent.name": start.agent_name,
            },
        )
        with self._lock:
            self._open[ticket] = span
        return ticket

    def after_model(self, ticket: int, end: StepEnd) -> int:
        """Write the step, and close its span with the token usage."""
        with self._lock:
            span = self._open.pop(ticket, None)
        try:
            return int(self.inner.after_model(ticket, end))
        finally:
            if span is not None:
                span.set_attribute("gen_ai.usage.input_tokens", end.prompt_tokens)
                span.set_attribute("gen_ai.usage.output_tokens", end.completion_tokens)
                span.set_attribute("diagnosis.step_status", end.status)
                if end.status != "SUCCESS":
                    span.set_status(Status(StatusCode.ERROR, (end.error or end.status)[:200]))
                span.end()

    def record(self, draft: InvocationDraft) -> str:
        """Write the invocation, and an ``execute_tool <name>`` span covering its duration."""
        invocation_id = str(self.inner.record(draft))
        now = time.time_ns()
        span = self.tracer.start_span(
            f"execute_tool {draft.tool_name}",
            kind=SpanKind.INTERNAL,
            start_time=now - draft.duration_ms * 1_000_000,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": draft.tool_name,
                "gen_ai.tool.call.id": invocation_id,
                "gen_ai.agent.name": draft.agent_name,
                "diagnosis.tool_status": draft.status,
            },
        )
        if draft.status != "SUCCESS":
            span.set_status(Status(StatusCode.ERROR, (draft.error_message or draft.status)[:200]))
        span.end(end_time=now)
        return invocation_id

    def __getattr__(self, name: str) -> Any:
        """The rest of the audit store, delegated."""
        return getattr(self.inner, name)
