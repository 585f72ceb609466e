"""Browser security: response headers on everything, and no state change from another origin.

Every response gets a same-origin Content-Security-Policy (no framing), ``X-Frame-Options:
DENY``, ``X-Content-Type-Options: nosniff`` and ``Referrer-Policy: same-origin``. A
state-changing request (not GET, HEAD, OPTIONS) is 403 when ``Sec-Fetch-Site`` is other than
``same-origin`` or ``none``, or, without it, when ``Origin`` names another host; a request with
neither header does not come from a web page (curl, Alertmanager) and is let through.
"""

from __future__ import annotations

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
#: The trace page draws its route graph with the vendored Mermaid, which styles the SVG it
#: builds with ``<style>`` elements and ``style`` attributes (d3). Inline *styles* are allowed
#: on that page alone; scripts, images and connections stay as strict as everywhere else
#: (inline CSS cannot run code, and ``img-src``/``font-src`` stop it from loading anything).
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
