"""Assemble a streamed chat completion, and abandon it when its time is up.

Requests are streamed (``stream=True``) so that an abandoned call really ends: when the
attempt's deadline passes between two chunks, the response is closed, which closes the HTTP
connection, and servers that generate token by token (llama.cpp, vLLM, Ollama) stop generating
for a client that went away. A non-streamed request would leave the server busy for as long as
the generation takes, queueing every later request behind it.

Deltas are assembled the way the chat-completions stream defines them: ``content`` pieces are
concatenated; ``tool_calls`` pieces are grouped by ``index`` (the id and name arrive once, the
arguments in pieces); ``finish_reason`` and ``usage`` come with the last chunks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import openai


@dataclass
class Assembled:
    """The completion a stream added up to."""

    content: str | None = None
    tool_calls: list[Any] = field(default_factory=list)
    finish_reason: str | None = None
    refusal: str | None = None
    model: str | None = None
    usage: Any = None
    chunks: int = 0


@dataclass
class _Call:
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


def collect(stream: Any, *, deadline: float, clock: Callable[[], float]) -> Assembled:
    """Read ``stream`` to its end, or close it and raise a timeout once ``deadline`` passes."""
    content: list[str] = []
    refusal: list[str] = []
    calls: dict[int, _Call] = {}
    out = Assembled()
    try:
        for chunk in _chunks(stream):
            out.chunks += 1
            out.model = getattr(chunk, "model", None) or out.model
            out.usage = getattr(chunk, "usage", None) or out.usage
            for choice in getattr(chunk, "choices", None) or []:
                if getattr(choice, "index", 0) not in (0, None):
                    continue
                out.finish_reason = getattr(choice, "finish_reason", None) or out.finish_reason
                _add_delta(getattr(choice, "delta", None), content, refusal, calls)
            if clock() >= deadline:
                raise openai.APITimeoutError(request=stream.response.request)
    finally:
        # Closing an unfinished response drops the connection: the server stops generating.
        stream.close()
    out.content = "".join(content) or None
    out.refusal = "".join(refusal) if refusal else None
    out.tool_calls = [
        SimpleNamespace(
            id=call.id,
            function=SimpleNamespace(name=call.name, arguments="".join(call.arguments) or None),
        )
        for _, call in sorted(calls.items())
    ]
    return out


def _chunks(stream: Iterable[Any]) -> Iterable[Any]:
    yield from stream


def _add_delta(delta: Any, content: list[str], refusal: list[str], calls: dict[int, _Call]) -> None:
    if delta is None:
        return
    text = getattr(delta, "content", None)
    if isinstance(text, str):
        content.append(text)
    refused = getattr(delta, "refusal", None)
    if isinstance(refused, str):
        refusal.append(refused)
    for position, piece in enumerate(getattr(delta, "tool_calls", None) or []):
        index = getattr(piece, "index", None)
        call = calls.setdefault(index if isinstance(index, int) else position, _Call())
        call.id = getattr(piece, "id", None) or call.id
        function = getattr(piece, "function", None)
        name = getattr(function, "name", None)
        if isinstance(name, str) and name and name != call.name:
            call.name += name
        arguments = getattr(function, "arguments", None)
        if isinstance(arguments, str):
            call.arguments.append(arguments)
        elif arguments is not None:
            # Some servers send the arguments as an object in one piece.
            call.arguments.append(json.dumps(arguments))
