"""Optional rate limiting per client: ``RATE_LIMIT`` (e.g. ``30/minute``) with Flask-Limiter.

Unset (the default), nothing is limited. Set, every ``/api/`` request counts against its
client's budget: the bearer key when one is sent (so one key is one budget wherever it comes
from), else the client address. ``/healthz``, ``/readyz``, ``/openapi.json``, the pages and
static files are never limited. Over the budget the answer is 429 in the usual envelope with
``Retry-After`` (seconds) and ``X-RateLimit-*`` headers. Counters live in Redis when
``REDIS_URL`` is set (shared by every worker and machine) and in process memory otherwise; if
Redis is down, requests are let through (a limiter must not take the API down with it).
"""

from __future__ import annotations

import hashlib

from flask import Flask, request
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address

from ..config import Settings


def client_key() -> str:
    """The budget a request counts against: its bearer key (hashed), else its address."""
    header = request.headers.get("Authorization", "")
    if header.lower().startswith("bearer ") and header[7:].strip():
        return "key:" + hashlib.sha256(header[7:].strip().encode()).hexdigest()[:32]
    return "addr:" + (get_remote_address() or "unknown")


def _exempt() -> bool:
    return not request.path.startswith("/api/")


def install_rate_limit(app: Flask, settings: Settings) -> Limiter | None:
    """Bind a limiter to ``app`` when ``settings.rate_limit`` is set; None otherwise."""
    if not settings.rate_limit:
        return None
    limiter = Limiter(
        client_key,
        app=app,
        default_limits=[settings.rate_limit],
        default_limits_exempt_when=_exempt,
        storage_uri=settings.redis_url or "memory://",
        headers_enabled=True,
        swallow_errors=True,
        key_prefix="diagnosis-rate",
    )
    return limiter
