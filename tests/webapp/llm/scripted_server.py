"""A scripted OpenAI-compatible HTTP server for contract tests, on 127.0.0.1 and a free port.

It records every request (path, headers, parsed JSON body) and answers each one with the next
scripted response (status, headers, JSON or raw bytes, optional delay). When the queue is empty
it asks ``responder`` (a function of the request, for servers that behave like a real one), else
answers with ``default`` if set, else with a 599 that no client treats as success, so a test
that scripted too few responses fails loudly instead of hanging.

Streaming as real servers do it: a 200 chat completion answering a request with
``"stream": true`` is sent as server-sent events (content in pieces, tool-call deltas, the finish
reason, usage when ``stream_options.include_usage`` asked for it, then ``[DONE]``), one event
every ``interval`` seconds. ``disconnects`` counts streams the client closed before the end.
``GET /v1/models`` answers with ``models`` (a 404 when it is None).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class ScriptedResponse:
    """One canned answer: a JSON body (``json``) or exact bytes (``raw``), after ``delay`` s.

    ``build``, when set, computes the JSON body from the request's JSON body instead - for a
    scripted model whose answer must quote what the client sent (invocation ids of tool results).
    """

    status: int = 200
    json: Any = None
    raw: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    content_type: str = "application/json"
    build: Callable[[Any], Any] | None = None
    #: Seconds between two server-sent events when the answer is streamed.
    interval: float = 0.0

    def body(self, request: Any = None) -> bytes:
        """The exact bytes to send."""
        if self.raw is not None:
            return self.raw
        if self.build is not None:
            return json.dumps(self.build(request)).encode("utf-8")
        return json.dumps(self.json if self.json is not None else {}).encode("utf-8")


@dataclass(frozen=True)
class RecordedRequest:
    """What the client sent: method, path, headers (case-insensitive lookup) and JSON body."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any

    def header(self, name: str) -> str | None:
        """Return a header value regardless of the case the client used."""
        wanted = name.lower()
        return next((v for k, v in self.headers.items() if k.lower() == wanted), None)


_UNSCRIPTED = ScriptedResponse(
    status=599, json={"error": {"message": "scripted server: no response queued"}}
)


class ScriptedOpenAIServer:
    """Replays queued responses to chat-completions requests and records the requests."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.default: ScriptedResponse | None = None
        self.responder: Callable[[RecordedRequest], ScriptedResponse] | None = None
        self.models: list[str] | None = None
        self.disconnects = 0
        self.streams_finished = 0
        self._queue: deque[ScriptedResponse] = deque()
        self._lock = threading.Lock()
        # Set on stop so delayed handlers give up at once instead of holding the test open.
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        # A short poll interval so shutdown() returns quickly at the end of each test.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        """The ``/v1`` base URL to hand to the client."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def script(self, *responses: ScriptedResponse) -> None:
        """Queue responses, answered in order."""
        with self._lock:
            self._queue.extend(responses)

    def start(self) -> None:
        """Start serving in a background thread."""
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and release the port."""
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _next(self, request: RecordedRequest) -> ScriptedResponse:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            return self.responder(request)
        return self.default or _UNSCRIPTED

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        """The chat-completions requests only (not the models list)."""
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                data = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(data) if data else None
                except ValueError:
                    body = data
                recorded = RecordedRequest("POST", self.path, dict(self.headers.items()), body)
                scripted = server._next(recorded)
                if scripted.build is not None:  # the answer is computed from the request
                    scripted = replace(scripted, json=scripted.build(body), build=None)
                if _wants_stream(body) and _is_completion(scripted):
                    self._stream(scripted, body)
                else:
                    self._reply(scripted)

            def do_GET(self) -> None:
                recorded = RecordedRequest("GET", self.path, dict(self.headers.items()), None)
                with server._lock:
                    server.requests.append(recorded)
                if self.path.endswith("/models") and server.models is not None:
                    data = [
                        {"id": m, "object": "model", "owned_by": "local"} for m in server.models
                    ]
                    self._reply(ScriptedResponse(json={"object": "list", "data": data}))
                else:
                    self._reply(ScriptedResponse(status=404, json=error_body("not found")))

            def _stream(self, scripted: ScriptedResponse, request: Any) -> None:
                if scripted.delay and server._stopping.wait(scripted.delay):
                    return
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Cache-Control", "no-cache")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    for event in sse_events(scripted.json, request):
                        self.wfile.write(b"data: " + event.encode("utf-8") + b"\n\n")
                        self.wfile.flush()
                        if scripted.interval and server._stopping.wait(scripted.interval):
                            return
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                    server.streams_finished += 1
                except (BrokenPipeError, ConnectionResetError):
                    # The client closed the stream: a real server stops generating here.
                    with server._lock:
                        server.disconnects += 1
                self.close_connection = True

            def _reply(self, scripted: ScriptedResponse, request: Any = None) -> None:
                if scripted.delay and server._stopping.wait(scripted.delay):
                    return
                payload = scripted.body(request)
                try:
                    self.send_response(scripted.status)
                    self.send_header("Content-Type", scripted.content_type)
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in scripted.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    # The client gave up (a timeout test); nothing left to tell it.
                    pass

            def log_message(self, format: str, *args: Any) -> None:
                # Keep pytest output clean; the test asserts on ``server.requests`` instead.
                pass

        return Handler


def _wants_stream(body: Any) -> bool:
    return isinstance(body, dict) and body.get("stream") is True


def _is_completion(scripted: ScriptedResponse) -> bool:
    body = scripted.json
    return (
        scripted.status == 200
        and scripted.raw is None
        and isinstance(body, dict)
        and body.get("object") == "chat.completion"
    )


def sse_events(body: dict[str, Any], request: Any) -> Iterator[str]:
    """The ``chat.completion.chunk`` events a streaming server sends for ``body``."""
    base = {key: body[key] for key in ("id", "created", "model") if key in body}
    base["object"] = "chat.completion.chunk"
    choice = body["choices"][0]
    message = choice.get("message") or {}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        return json.dumps(
            {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        )

    yield chunk({"role": "assistant", "content": ""})
    content = message.get("content")
    if isinstance(content, str) and content:
        step = max(1, len(content) // 3)
        for start in range(0, len(content), step):
            yield chunk({"content": content[start : start + step]})
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function") or {}
        arguments = function.get("arguments")
        head = {"index": index, "id": call.get("id"), "type": "function"}
        yield chunk({"tool_calls": [{**head, "function": {"name": function.get("name")}}]})
        if isinstance(arguments, str) and arguments:
            half = len(arguments) // 2
            for piece in (arguments[:half], arguments[half:]):
                if piece:
                    yield chunk(
                        {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
                    )
        elif arguments is not None:
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]})
    if message.get("refusal"):
        yield chunk({"refusal": message["refusal"]})
    yield chunk({}, choice.get("finish_reason") or "stop")
    options = request.get("stream_options") if isinstance(request, dict) else None
    if body.get("usage") and isinstance(options, dict) and options.get("include_usage"):
        yield json.dumps({**base, "choices": [], "usage": body["usage"]})


def serve() -> Iterator[ScriptedOpenAIServer]:
    """Yield a started server and stop it afterwards (wrap with ``pytest.fixture``)."""
    server = ScriptedOpenAIServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def completion(
    content: str | None = None,
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str = "stop",
    refusal: str | None = None,
    model: str = "scripted-model",
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    """Build a chat.completion body the way OpenAI-compatible servers send it."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    if refusal is not None:
        message["refusal"] = refusal
    body: dict[str, Any] = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    }
    if usage is not None:
        body["usage"] = usage
    return body


def tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """Build one function tool call as it appears in an assistant message."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def error_body(message: str, *, type_: str = "invalid_request_error") -> dict[str, Any]:
    """Build the OpenAI error envelope."""
    return {"error": {"message": message, "type": type_, "param": None, "code": None}}
