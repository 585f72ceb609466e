"""Reading a chat-completions request the way the offline model needs it: the payload in the
user message, the tool definitions and the tool results already in the conversation.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ...tools.catalog import ALIASES_MARKER, METRICS_MARKER
from ..types import Message


def schema_name(response_format: dict[str, Any] | None) -> str | None:
    """The contract the caller wants, named by its ``json_schema`` ``response_format`` (the
    agents always send one; None: plain chat)."""
    if response_format and response_format.get("type") == "json_schema":
        return str(response_format["json_schema"]["name"])
    return None


def payload(messages: Sequence[Message]) -> dict[str, Any]:
    """The JSON payload of the first user message ({} when it is plain text)."""
    users = (str(m.get("content") or "") for m in messages if m.get("role") == "user")
    return _payload(next(users, ""))


@lru_cache(maxsize=1)  # parsed once per conversation: every round sends the same message
def _payload(content: str) -> dict[str, Any]:
    return _json(content) or {}


@dataclass(frozen=True, eq=False)  # identity is equality: results are cached per object
class Done:
    """A tool call already made in this conversation and what came back."""

    tool: str
    arguments: dict[str, Any]
    invocation_id: str
    status: str
    result: Any

    @property
    def output(self) -> dict[str, Any]:
        """The result when it is a JSON object, else {}."""
        return self.result if isinstance(self.result, dict) else {}


#: How many parsed tool messages, and results as first read, are kept.
READ_CACHE = 512


def tool_results(messages: Sequence[Message]) -> list[Done]:
    """Every tool call of the conversation paired with its result message."""
    calls: dict[str, tuple[str, str]] = {}
    done: list[Done] = []
    for message in messages:
        for asked in message.get("tool_calls") or []:
            function = asked["function"]
            calls[asked["id"]] = (function["name"], function.get("arguments") or "{}")
        if message.get("role") == "tool" and message.get("tool_call_id") in calls:
            name, arguments = calls[message["tool_call_id"]]
            done.append(_remembered(_read(name, arguments, str(message.get("content") or "{}"))))
    return done


#: Each result as the model first read it, by invocation id, least recently read first: the
#: ReAct loop shows earlier rounds' results as summaries (``compact.summary_message``).
_SEEN: OrderedDict[str, Done] = OrderedDict()
_SEEN_LOCK = threading.Lock()


def _remembered(read: Done) -> Done:
    """``read``, or what its invocation said when it was read whole."""
    if not read.invocation_id or read.status != "SUCCESS":
        return read
    with _SEEN_LOCK:
        if read.result is None:
            read = _SEEN.get(read.invocation_id, read)
        _SEEN[read.invocation_id] = read
        _SEEN.move_to_end(read.invocation_id)
        if len(_SEEN) > READ_CACHE:
            _SEEN.popitem(last=False)
    return read


@lru_cache(maxsize=READ_CACHE)  # every round re-reads the whole conversation
def _read(name: str, arguments_text: str, content: str) -> Done:
    """One tool call and its result message, parsed (the parsed values are only ever read)."""
    arguments, body = _json(arguments_text) or {}, _json(content) or {}
    status = str(body.get("status", "SUCCESS"))
    return Done(name, arguments, str(body.get("invocation_id", "")), status, body.get("result"))


def _json(text: str) -> dict[str, Any] | None:
    """``text`` parsed as a JSON object (None when it is not one)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def call(tool: str, purpose: str = "", /, **arguments: Any) -> dict[str, Any]:
    """A tool call as plans and follow-up rounds write it (a plan's with its ``purpose``)."""
    return {"tool": tool, "arguments": arguments, **({"purpose": purpose} if purpose else {})}


def tool_rounds(messages: Sequence[Message]) -> int:
    """How many assistant turns asked for tools so far."""
    return sum(1 for m in messages if m.get("role") == "assistant" and m.get("tool_calls"))


class Catalog:
    """What the tool definitions say: tool names, services, metrics per service."""

    def __init__(self, tools: Sequence[dict[str, Any]] | None) -> None:
        self.tools: dict[str, dict[str, Any]] = {}
        for tool in tools or []:
            function = tool.get("function", tool)
            self.tools[str(function.get("name"))] = function

    def _enum(self, tool: str, parameter: str) -> list[str]:
        properties = self.tools.get(tool, {}).get("parameters", {}).get("properties", {})
        return [str(v) for v in properties.get(parameter, {}).get("enum", [])]

    @property
    def services(self) -> list[str]:
        """Services the log and metric tools accept."""
        return self._enum("query_logs", "service") or self._enum("query_metrics", "service")

    def _listed(self, tool: str, marker: str) -> dict[str, Any] | None:
        """The JSON object a tool's description lists after ``marker``, if any."""
        description = str(self.tools.get(tool, {}).get("description", ""))
        if marker not in description:
            return None
        return _json(description.split(marker, 1)[1])

    def metrics_of(self, service: str) -> list[str]:
        """Metrics ``service`` has, as the metric tool's description lists them (else none)."""
        listed = self._listed("query_metrics", METRICS_MARKER) or {}
        return [str(m) for m in listed.get(service, [])]

    @property
    def aliases(self) -> dict[str, list[str]]:
        """Other names of services, when the query_logs description lists them; else {}."""
        listed = self._listed("query_logs", ALIASES_MARKER) or {}
        return {
            str(k): [str(v) for v in values]
            for k, values in listed.items()
            if isinstance(values, list)
        }

    def has(self, tool: str) -> bool:
        """True when the model may call ``tool``."""
        return tool in self.tools
