"""Recorded behaviours of real OpenAI-compatible servers, replayed by the scripted server.

Each emulation answers like the real server did for the request shapes the product sends:

* llama-cpp-python 0.3.36 (``--chat_format gemma``): ``json_schema`` is a 500 validation error
  (the exact body below, from ``shared/fixtures/llamacpp-0.3.36-json-schema-rejected.txt``);
  ``json_object`` with a ``schema`` is accepted and constrains the output; system and tool
  messages are dropped by the chat template and ``tools``/``tool_choice`` ignored, silently.
* vLLM without ``--enable-auto-tool-choice``: ``json_schema`` works (guided decoding); a request
  with ``tools`` and automatic tool choice is a 400 naming the flags.
* Ollama's OpenAI endpoint: ``json_schema`` works; tool calls come in one piece with their id.

``brain`` decides the content the "model" writes, from the messages the server kept, so a test
can check what a model would actually see.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .scripted_server import RecordedRequest, ScriptedResponse, completion, error_body, tool_call

#: The body llama-cpp-python 0.3.36 answers a ``json_schema`` request with (HTTP 500).
LLAMACPP_JSON_SCHEMA_REJECTED = (
    "1 validation error:\n"
    "  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}"
)
VLLM_AUTO_TOOLS_REJECTED = (
    '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
)

#: What the model writes, given the messages the server kept and the request body.
Brain = Callable[[list[dict[str, Any]], dict[str, Any]], str]
USAGE = {"prompt_tokens": 50, "completion_tokens": 7, "total_tokens": 57}


def llamacpp(brain: Brain) -> Callable[[RecordedRequest], ScriptedResponse]:
    """llama-cpp-python's server with the gemma chat format (module docstring)."""

    def respond(request: RecordedRequest) -> ScriptedResponse:
        body = request.body
        fmt = body.get("response_format") or {}
        if fmt.get("type") not in (None, "text", "json_object"):
            return ScriptedResponse(
                status=500,
                json=error_body(LLAMACPP_JSON_SCHEMA_REJECTED, type_="internal_server_error"),
            )
        kept = [m for m in body["messages"] if m.get("role") in ("user", "assistant")]
        content = brain(kept, body)  # tools ignored: never any tool_calls
        return ScriptedResponse(json=completion(content, model="gemma3-270m", usage=None))

    return respond


def vllm(brain: Brain) -> Callable[[RecordedRequest], ScriptedResponse]:
    """vLLM started without a tool-call parser (module docstring)."""

    def respond(request: RecordedRequest) -> ScriptedResponse:
        body = request.body
        if body.get("tools") and body.get("tool_choice", "auto") == "auto":
            error = {
                "object": "error",
                "message": VLLM_AUTO_TOOLS_REJECTED,
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            }
            return ScriptedResponse(status=400, json=error)
        content = brain(list(body["messages"]), body)
        return ScriptedResponse(json=completion(content, model="Qwen/Qwen2.5-0.5B", usage=USAGE))

    return respond


def ollama(
    brain: Brain, tool_plan: list[tuple[str, dict[str, Any]]]
) -> Callable[[RecordedRequest], ScriptedResponse]:
    """Ollama's ``/v1`` endpoint: native tools; calls ``tool_plan`` in order, then ``brain``."""
    remaining = list(tool_plan)

    def respond(request: RecordedRequest) -> ScriptedResponse:
        body = request.body
        if body.get("tools") and remaining and body.get("tool_choice") != "none":
            name, arguments = remaining.pop(0)
            call = tool_call(f"call_{len(remaining)}", name, json.dumps(arguments))
            return ScriptedResponse(
                json=completion(
                    "",
                    tool_calls=[call],
                    finish_reason="tool_calls",
                    model="llama3.2:3b",
                    usage=USAGE,
                )
            )
        content = brain(list(body["messages"]), body)
        return ScriptedResponse(json=completion(content, model="llama3.2:3b", usage=USAGE))

    return respond
