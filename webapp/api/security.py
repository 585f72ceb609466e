"""Browser security: response headers on everything, and no state change from another origin.

A state-changing request is 403 when ``Sec-Fetch-Site`` is other than ``same-origin`` or
``none``, or, without it, when ``Origin`` names another host; a request with neither header
(curl, Alertmanager) is let through. Bearer tokens are checked here too.
"""

from __future__ import annotations

import hmac
from urllib.parse import urlsplit

from flask import Flask, Response, request

from .errors import ApiError

_POLICY = (
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
)
CONTENT_SECURITY_POLICY = "; ".join(_POLICY)
#: The trace page's Mermaid graph styles its SVG inline: inline styles (not scripts) are
#: allowed on that page alone.
GRAPH_PAGE_POLICY = CONTENT_SECURITY_POLICY.replace(
    "style-src 'self'", "style-src 'self' 'unsafe-inline'"
)
HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
ALLOWED_FETCH_SITES = frozenset({"same-origin", "none"})


def cross_origin() -> str | None:
    """Why the current request comes from another origin, or None when it does not."""
    site = request.headers.get("Sec-Fetch-Site")
    if site is not None:
        return None if site.lower() in ALLOWED_FETCH_SITES else f"Sec-Fetch-Site: {site}"
    origin = request.headers.get("Origin")
    if origin is None:
        return None
    if origin == "null" or urlsplit(origin).netloc.lower() != request.host.lower():
        return f"Origin: {origin}"
    return None


def require_bearer(key: str, realm: str) -> None:
    """401 unless the request carries ``Authorization: Bearer <key>``."""
    header = request.headers.get("Authorization", "")
    token = header[7:] if header.lower().startswith("bearer ") else ""
    if not hmac.compare_digest(token.encode(), key.encode()):
        challenge = {"WWW-Authenticate": f'Bearer realm="{realm}"'}
        raise ApiError(401, "missing or wrong bearer token", challenge)


def install_security(app: Flask) -> None:
    """Refuse cross-origin state changes and add the headers to every response."""

    @app.before_request
    def refuse_cross_origin() -> None:
        if request.method in SAFE_METHODS:
            return
        reason = cross_origin()
        if reason is not None:
            raise ApiError(
                403, f"cross-origin {request.method} refused ({reason}): use this site's pages"
            )

    @app.after_request
    def security_headers(response: Response) -> Response:
        for name, value in HEADERS.items():
            response.headers.setdefault(name, value)
        return response
