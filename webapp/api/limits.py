"""Optional rate limiting per client: ``RATE_LIMIT`` (e.g. ``30/minute``) with Flask-Limiter.

Every ``/api/`` request counts against its client's budget: the bearer key when one is sent,
else the client address. Counters live in Redis when ``REDIS_URL`` is set, else in memory; if
Redis is down, requests are let through.
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


def install_rate_limit(app: Flask, settings: Settings) -> None:
    """Bind a limiter to ``app`` when ``settings.rate_limit`` is set."""
    if settings.rate_limit:
        Limiter(
            client_key,
            app=app,
            default_limits=[settings.rate_limit],
            default_limits_exempt_when=_exempt,
            storage_uri=settings.redis_url or "memory://",
            headers_enabled=True,
            swallow_errors=True,
            key_prefix="diagnosis-rate",
        )
