"""What an OpenAI-compatible endpoint can do, found by probing it once, and its last outcome.

Each capability is True (works), False (refused or ignored) or None (unknown: the probe could
not tell). ``/readyz`` reports them (:meth:`Capabilities.as_dict`).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import openai

from . import formats
from .errors import classify_error, is_format_rejection, names_field

RETRY_PROBE_SECONDS = 60.0
PROBE_MAX_TOKENS = 48
_PROBE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}
_PROBE_JSON = [
    {"role": "user", "content": 'Reply with the JSON object {"ok": true} and nothing else.'}
]
_PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "report_status",
        "description": "Report that the service is up.",
        "parameters": _PROBE_SCHEMA,
    },
}
_PROBE_TOOL_MESSAGES = [
    {"role": "user", "content": "Call the report_status tool with ok set to true."}
]


@dataclass
class Capabilities:
    """Probe results, the mode in force, run-time downgrades and the last call's outcome."""

    setting: str = formats.AUTO
    probed_at: float | None = None
    probe_error: str | None = None
    models: list[str] | None = None
    json_schema: bool | None = None
    json_object_schema: bool | None = None
    tool_calls: bool | None = None
    stream_usage: bool = True
    downgrades: list[str] = field(default_factory=list)
    last_call: dict[str, Any] | None = None
    _mode: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def mode(self) -> str:
        """The structured-output mode requests use now."""
        if self.setting != formats.AUTO:
            return self.setting
        if self._mode is not None:
            return self._mode
        if self.json_schema is False:
            return formats.JSON_OBJECT_SCHEMA if self.json_object_schema else formats.JSON_OBJECT
        return formats.JSON_SCHEMA

    @property
    def adaptive(self) -> bool:
        """True when the mode may be stepped down (``LLM_RESPONSE_FORMAT=auto``)."""
        return self.setting == formats.AUTO

    @property
    def native_tools(self) -> bool:
        """False only when the probe saw tool requests answered without tool calls."""
        return self.tool_calls is not False

    def downgrade(self, rejected: str, reason: str) -> str | None:
        """Step down from ``rejected`` (auto only); the new mode, or None when none is left."""
        with self._lock:
            if not self.adaptive:
                return None
            lower = formats.next_mode(rejected)
            if lower is None:
                return None
            if self.mode == rejected:
                self._mode = lower
                self.downgrades.append(f"{rejected} -> {lower}: {reason}")
                if rejected == formats.JSON_SCHEMA:
                    self.json_schema = False
                elif rejected == formats.JSON_OBJECT_SCHEMA:
                    self.json_object_schema = False
            return self.mode

    def saw_tools_ignored(self) -> None:
        """A tool request came back as plain content that is not the expected output."""
        with self._lock:
            if self.tool_calls is None:
                self.tool_calls = False

    def record_call(
        self, outcome: str, *, kind: str | None = None, detail: str | None = None
    ) -> None:
        """Remember how the last model call ended."""
        self.last_call = {
            "outcome": outcome,
            "kind": kind,
            "detail": detail,
            "at": time.time(),
        }

    def needs_probe(self, now: float) -> bool:
        """True before the first probe and after a probe that could not reach the endpoint."""
        if self.probed_at is None:
            return True
        return self.probe_error is not None and now - self.probed_at >= RETRY_PROBE_SECONDS

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape ``/readyz`` reports."""
        return {
            "setting": self.setting,
            "mode": self.mode,
            "probed": self.probed_at is not None,
            "probeError": self.probe_error,
            "models": self.models,
            "jsonSchema": self.json_schema,
            "jsonObjectSchema": self.json_object_schema,
            "toolCalls": self.tool_calls,
            "nativeTools": self.native_tools,
            "downgrades": list(self.downgrades),
            "lastCall": dict(self.last_call) if self.last_call else None,
        }


def probe(
    client: openai.OpenAI, model: str, caps: Capabilities, *, timeout: float, secret: str
) -> None:
    """Fill what ``caps`` does not know yet from at most four small requests, one attempt each:
    the models list, a ``json_schema`` request, a ``json_object`` request carrying the schema
    (only when ``json_schema`` was refused) and a request offering one tool."""
    caps.probe_error = None
    try:
        if caps.models is None:
            try:
                caps.models = [m.id for m in client.models.list(timeout=timeout)]
            except openai.APIStatusError:
                caps.models = []  # many servers do not serve /models; not an error by itself
        if caps.adaptive and caps.json_schema is None:
            schema = formats.response_format_for("probe", _PROBE_SCHEMA)
            caps.json_schema = _json_probe(client, model, timeout, schema)
        if caps.adaptive and caps.json_schema is False and caps.json_object_schema is None:
            object_schema = {"type": "json_object", "schema": _PROBE_SCHEMA}
            caps.json_object_schema = _json_probe(client, model, timeout, object_schema)
        if caps.tool_calls is None:
            tools = {"messages": _PROBE_TOOL_MESSAGES, "tools": [_PROBE_TOOL]}
            message = _ask(client, model, timeout, lambda e: names_field(e, "tool"), tools)
            caps.tool_calls = bool(getattr(message, "tool_calls", None))
    except openai.OpenAIError as exc:
        # Unreachable, auth, rate limited, too slow: what is unknown stays unknown, the cause is
        # reported; an unreachable endpoint fails on the models list already (one timeout).
        caps.probe_error = str(classify_error(exc, secret=secret))


def _json_probe(
    client: openai.OpenAI, model: str, timeout: float, response_format: dict[str, Any]
) -> bool:
    fields = {"messages": _PROBE_JSON, "response_format": response_format}
    content = getattr(_ask(client, model, timeout, is_format_rejection, fields), "content", None)
    try:
        return isinstance(json.loads(content if isinstance(content, str) else ""), dict)
    except json.JSONDecodeError:
        return False


def _ask(
    client: openai.OpenAI,
    model: str,
    timeout: float,
    rejected: Callable[[openai.APIStatusError], bool],
    fields: dict[str, Any],
) -> object:
    """The reply's message, or None when the server answered with an error ``rejected`` names."""
    request = {"model": model, "max_tokens": PROBE_MAX_TOKENS, "temperature": 0, **fields}
    try:
        reply = client.chat.completions.create(**request, timeout=timeout)
    except openai.APIStatusError as exc:
        if rejected(exc):
            return None
        raise
    choices = getattr(reply, "choices", None) or []
    return getattr(choices[0], "message", None) if choices else None
