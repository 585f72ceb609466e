"""Assemble a streamed chat completion, and abandon it when its time is up.

Requests are streamed so that an abandoned call really ends: closing the response drops the
connection, and a server generating token by token stops for a client that went away.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
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
    """A streamed tool call (flat: no ``function`` level)."""

    id: str | None = None
    name: str = ""
    arguments: str | None = None


def collect(stream: Any, *, deadline: float, clock: Callable[[], float]) -> Assembled:
    """Read ``stream`` to its end, or close it and raise a timeout once ``deadline`` passes."""
    content: list[str] = []
    refusal: list[str] = []
    calls: dict[int, _Call] = {}
    out = Assembled()
    try:
        for chunk in stream:
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
    out.tool_calls = [call for _, call in sorted(calls.items())]
    return out


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
        if arguments is not None and arguments != "":
            # Some servers send the arguments as an object in one piece.
            text = arguments if isinstance(arguments, str) else json.dumps(arguments)
            call.arguments = (call.arguments or "") + text
