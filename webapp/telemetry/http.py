"""HTTP access of the telemetry backends (httpx + tenacity): transport errors, timeouts and 5xx
answers are retried with back-off; every failure is a :class:`TelemetryError` for the model."""

from __future__ import annotations

import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from .port import TelemetryError


@dataclass(frozen=True)
class HttpOptions:
    """Where one backend lives and how to authenticate to it."""

    url: str
    bearer_token: str | None = field(default=None, repr=False)
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    tls_verify: bool = True
    ca_bundle: str | None = None
    timeout_seconds: float = 10.0
    attempts: int = 3
    headers: Mapping[str, str] = field(default_factory=dict)


class _Transient(Exception):
    """A 5xx answer worth another try."""

    def __init__(self, response: httpx.Response) -> None:
        super().__init__(response.status_code)
        self.response = response


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, (_Transient, httpx.TransportError))


class HttpSource:
    """A JSON-over-HTTP API with timeouts, bounded retries and readable errors."""

    def __init__(self, system: str, options: HttpOptions) -> None:
        self.system = system
        self.options = options
        self.url = options.url.rstrip("/")
        headers = dict(options.headers)
        if options.bearer_token:
            headers["Authorization"] = f"Bearer {options.bearer_token}"
        verify: ssl.SSLContext | bool = options.tls_verify
        if options.tls_verify and options.ca_bundle:
            verify = ssl.create_default_context(cafile=options.ca_bundle)
        self._client = httpx.Client(
            base_url=self.url,
            timeout=options.timeout_seconds,
            headers=headers,
            auth=httpx.BasicAuth(options.username, options.password or "")
            if options.username
            else None,
            verify=verify,
        )

    def get_data(self, path: str, params: Any = None) -> Any:
        """GET ``path`` of a Prometheus-style API (Prometheus, Loki): the ``data`` of a
        ``{"status": "success", "data": ...}`` answer."""
        body = self.request("GET", path, params=params)
        if not isinstance(body, dict) or body.get("status") != "success" or "data" not in body:
            raise TelemetryError(
                f"{self.system} answered {path} with an unexpected body: {str(body)[:200]}"
            )
        return body["data"]

    def request(self, method: str, path: str, attempts: int | None = None, **kwargs: Any) -> Any:
        """One call, retried on transient failures; the JSON body or a TelemetryError."""
        retrying = Retrying(
            stop=stop_after_attempt(max(1, attempts or self.options.attempts)),
            wait=wait_exponential(multiplier=0.2, max=2.0),
            retry=retry_if_exception(_retryable),
            reraise=True,
        )
        try:
            response = retrying(self._once, method, path, **kwargs)
        except _Transient as exc:
            raise TelemetryError(self._status_message(exc.response)) from None
        except httpx.TimeoutException:
            raise TelemetryError(
                f"{self.system} at {self.url} did not answer within "
                f"{self.options.timeout_seconds:g} s ({self.options.attempts} attempt(s))"
            ) from None
        except httpx.TransportError as exc:
            raise TelemetryError(
                f"{self.system} at {self.url} is unreachable ({type(exc).__name__}: {exc})"
            ) from None
        try:
            return response.json()
        except ValueError:
            raise TelemetryError(
                f"{self.system} answered {path} with a body that is not JSON: "
                f"{response.text[:200]!r}"
            ) from None

    def _once(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        response = self._client.request(method, path, **kwargs)
        if response.status_code >= 500:
            raise _Transient(response)
        if response.status_code >= 400:
            raise TelemetryError(self._status_message(response))
        return response

    def _status_message(self, response: httpx.Response) -> str:
        code = response.status_code
        if code in (401, 403):
            return (
                f"{self.system} at {self.url} rejected the credentials (HTTP {code}); check its "
                "bearer token or username/password settings"
            )
        detail = _error_detail(response)
        if code >= 500:
            return (
                f"{self.system} at {self.url} failed with HTTP {code} after "
                f"{self.options.attempts} attempt(s): {detail}"
            )
        return f"{self.system} refused the query (HTTP {code}): {detail}"

    def probe(self, path: str, *version: str) -> dict[str, Any]:
        """Reachability, version (the answer's field at the keys ``version``) and latency of
        one cheap call (for ``/readyz``), never raising."""
        started = time.perf_counter()
        try:
            found = self.request("GET", path, attempts=1)  # readiness answers quickly
            error = None
        except TelemetryError as exc:
            found, error = None, str(exc)
        for key in version:
            found = found.get(key) if isinstance(found, dict) else None
        return {
            "system": self.system,
            "url": self.url,
            "reachable": error is None,
            "version": found,
            "latencyMs": round((time.perf_counter() - started) * 1000, 1),
            "error": error,
        }

    def close(self) -> None:
        """Release the connection pool."""
        self._client.close()


def _error_detail(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:200] or response.reason_phrase
    if isinstance(body, dict):
        for key in ("error", "message", "reason"):
            if body.get(key):
                return str(body[key])[:300]
    return str(body)[:200]
