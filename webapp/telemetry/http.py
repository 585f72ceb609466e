"""HTTP access of the telemetry backends (httpx + tenacity): transport errors, timeouts and 5xx
answers are retried with back-off; every failure is a :class:`TelemetryError` for the model."""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field
from typing import Any

import httpx
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from .partial import timed_probe
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


class _Transient(TelemetryError):
    """A 5xx answer worth another try."""


class HttpSource:
    """A JSON-over-HTTP API with timeouts, bounded retries and readable errors."""

    def __init__(self, system: str, options: HttpOptions) -> None:
        self.system = system
        self.options = options
        self.url = options.url.rstrip("/")
        headers = (
            {"Authorization": f"Bearer {options.bearer_token}"} if options.bearer_token else {}
        )
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
            retry=retry_if_exception_type((_Transient, httpx.TransportError)),
            reraise=True,
        )
        try:
            response = retrying(self._once, method, path, **kwargs)
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
        if response.status_code >= 400:
            error = _Transient if response.status_code >= 500 else TelemetryError
            raise error(self._status_message(response))
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
        # one attempt: readiness answers quickly
        return timed_probe(
            self.system, self.url, lambda: self.request("GET", path, attempts=1), *version
        )


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
