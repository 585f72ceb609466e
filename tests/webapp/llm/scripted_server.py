"""A scripted OpenAI-compatible HTTP server for contract tests, on 127.0.0.1 and a free port.

It records every request (path, headers, parsed JSON body) and answers each one with the next
scripted response (status, headers, JSON or raw bytes, optional delay). When the queue is empty
it asks ``responder`` (a function of the request, for servers that behave like a real one), else
answers with ``default`` if set, else with a 599 that no client treats as success, so a test
that scripted too few responses fails loudly instead of hanging.
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
        """The chat-completions requests only."""
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
                self._reply(scripted)

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
