"""Tool specs, argument validation, and the per-agent tool box that records every call: a
failure is answered as data (status ERROR), a refused call is recorded as BLOCKED."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import best_match

from diagnosis_graph.workflow.ports import BLOCKED, ERROR, SUCCESS

from ..persistence.audit import Audit, InvocationDraft
from ..telemetry import TelemetryError
from ..telemetry.common import parse_timestamp

log = logging.getLogger(__name__)


class ToolError(Exception):
    """A tool could not answer; the message is shown to the model (as is a TelemetryError's)."""


class ArgumentError(ValueError):
    """Arguments do not satisfy the tool's JSON schema."""


#: The longest window a telemetry or analysis tool reads.
MAX_WINDOW = timedelta(days=7)


def parse_time(name: str, value: str | None) -> datetime | None:
    """The argument ``name``, an ISO-8601 timestamp (``Z`` or offset; naive means UTC), as
    aware UTC; None when it is not given."""
    if value is None:
        return None
    parsed = parse_timestamp(value)
    if parsed is None:
        raise ToolError(
            f"{name}={value!r} is not an ISO-8601 timestamp (e.g. 2026-11-30T10:00:00Z)"
        )
    return parsed.astimezone(timezone.utc)


def checked_window(start: datetime, end: datetime) -> tuple[datetime, datetime]:
    """``(start, end)``, or a ToolError when it is empty or longer than ``MAX_WINDOW``."""
    if start >= end:
        raise ToolError(
            f"start ({start:%Y-%m-%dT%H:%M:%SZ}) must be before end ({end:%Y-%m-%dT%H:%M:%SZ})"
        )
    if end - start > MAX_WINDOW:
        raise ToolError("the window may span at most 7 days")
    return start, end


@dataclass(frozen=True)
class ToolOutput:
    """A tool's raw output and, for retrieval tools, what was retrieved."""

    raw_output: Any
    retrieval_details: Any = None
    #: ``json.dumps(raw_output, ensure_ascii=False)`` when the tool has it already.
    raw_json: str | None = field(default=None, compare=False, repr=False)


#: Source roles: telemetry says what happened; reference (runbooks, uploaded
#: documents) says what to do - it backs recommendations, never a conclusion.
TELEMETRY, REFERENCE = "telemetry", "reference"
ROLES = (TELEMETRY, REFERENCE)


@dataclass(frozen=True)
class ToolSpec:
    """A tool: name, description, JSON-schema parameters, the function that runs it, its role
    (``telemetry`` or ``reference`` evidence), and ``detail``: catalog text sent after the
    description to a planning model only."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    handler: Callable[[dict[str, Any]], ToolOutput]
    role: str
    detail: str = ""

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"tool {self.name!r}: role must be one of {ROLES}, not {self.role!r}")

    def definition(self, detail: bool = True) -> dict[str, Any]:
        """The chat-completions ``tools`` entry (with the ``detail`` text, or without)."""
        description = f"{self.description} {self.detail}" if detail and self.detail else ""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": description or self.description,
                "parameters": dict(self.parameters),
            },
        }


def object_schema(*required: str, **properties: Any) -> dict[str, Any]:
    """The JSON schema of an object of ``properties`` only, ``required`` among them."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    schema["additionalProperties"] = False
    return schema


def validate_arguments(schema: Mapping[str, Any], arguments: Any) -> dict[str, Any]:
    """Check ``arguments`` against the tool's JSON schema (``jsonschema``); a null argument is
    one not given; the schema's defaults fill the arguments not given."""
    if not isinstance(arguments, dict):
        raise ArgumentError("arguments must be a JSON object")
    given = {name: value for name, value in arguments.items() if value is not None}
    validator = validators.validator_for(schema, default=Draft202012Validator)(schema)
    try:
        error = best_match(validator.iter_errors(given))
    except Exception as exc:  # the schema itself is broken (an MCP server's): refuse the call
        raise ArgumentError(f"the tool's schema cannot be checked: {exc}"[:500]) from None
    if error is not None:
        where = ".".join(map(str, error.absolute_path))
        raise ArgumentError((f"{where}: " if where else "") + error.message[:500])
    properties: Mapping[str, Any] = schema.get("properties", {})
    defaults = {name: rules["default"] for name, rules in properties.items() if "default" in rules}
    return {**defaults, **given}


@dataclass(frozen=True)
class ToolCallResult:
    """The outcome of one tool call as the agent loop sees it."""

    invocation_id: str
    status: str
    content: str
    #: The tool's raw output when it succeeded (what the model is shown a projection of).
    output: Any = None


class ToolBox:
    """The tools one agent execution may use, recording every call against the current run."""

    def __init__(
        self, specs: Sequence[ToolSpec], recorder: Audit, agent_name: str, *, detail: bool = True
    ):
        self.specs = {spec.name: spec for spec in specs}
        self.recorder = recorder
        self.agent_name = agent_name
        self.detail = detail

    def definitions(self) -> list[dict[str, Any]]:
        """The ``tools`` list sent to the model (each tool's ``detail`` when ``detail``)."""
        return [spec.definition(self.detail) for spec in self.specs.values()]

    def call(self, name: str, raw_arguments: str, step_id: int | None) -> ToolCallResult:
        """Validate and run one call; unknown tools and bad arguments are BLOCKED."""
        spec = self.specs.get(name)
        try:
            if spec is None:
                raise ArgumentError(f"unknown tool {name!r}; available: {sorted(self.specs)}")
            arguments = validate_arguments(spec.parameters, json.loads(raw_arguments or "{}"))
        except json.JSONDecodeError as exc:
            return self.block(
                name, raw_arguments, f"arguments are not valid JSON: {exc.msg}", step_id
            )
        except ArgumentError as exc:
            return self.block(name, raw_arguments, str(exc), step_id)
        started = time.perf_counter()
        try:
            output = spec.handler(arguments)
        except (ToolError, TelemetryError) as exc:
            return self._record(name, arguments, started, step_id, ERROR, str(exc))
        except Exception as exc:  # a broken backend must not kill the agent loop
            log.exception("tool %s failed", name)
            message = f"{name} failed: {type(exc).__name__}"
            return self._record(name, arguments, started, step_id, ERROR, message)
        return self._record(name, arguments, started, step_id, output=output)

    def block(
        self, name: str, raw_arguments: Any, reason: str, step_id: int | None
    ) -> ToolCallResult:
        """Record a refused call (status BLOCKED) and tell the model why."""
        arguments = _loads_or_text(raw_arguments)
        return self._record(name, arguments, time.perf_counter(), step_id, BLOCKED, reason)

    def _record(
        self,
        name: str,
        arguments: Any,
        started: float,
        step_id: int | None,
        status: str = SUCCESS,
        error: str | None = None,
        output: ToolOutput | None = None,
    ) -> ToolCallResult:
        """Record the call; ``output`` when it succeeded, else ``error`` is its output."""
        output = output or ToolOutput({"error": error})
        duration_ms = int((time.perf_counter() - started) * 1000)
        invocation_id = self.recorder.record(
            InvocationDraft(
                self.agent_name,
                name,
                arguments,
                output.raw_output,
                status,
                error,
                duration_ms,
                step_id,
                output.retrieval_details,
            )
        )
        message: dict[str, Any] = {"invocation_id": invocation_id, "tool": name}
        if status != SUCCESS:
            message.update(status=status, error=error)
            return ToolCallResult(invocation_id, status, json.dumps(message, ensure_ascii=False))
        # what json.dumps(message with its "result") writes, embedding the output's own JSON
        head = json.dumps(message, ensure_ascii=False)[:-1]
        raw = output.raw_json or json.dumps(output.raw_output, ensure_ascii=False)
        return ToolCallResult(
            invocation_id, status, f'{head}, "result": {raw}}}', output.raw_output
        )


def tool_roles(specs: Sequence[ToolSpec]) -> dict[str, str]:
    """``{tool name: role}`` for the gatekeeper's source roles."""
    return {spec.name: spec.role for spec in specs}


def _loads_or_text(raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return {"_raw": raw[:2000]}
