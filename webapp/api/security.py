"""Browser security: response headers on everything, and no state change from another origin.

Headers (every response, pages and API alike): a Content-Security-Policy that allows only this
origin's scripts, styles, images (plus ``data:`` images) and connections, no plugins, no
framing (``frame-ancestors 'none'``, and ``X-Frame-Options: DENY`` for old browsers),
``X-Content-Type-Options: nosniff`` and ``Referrer-Policy: same-origin``.

Cross-origin requests: a browser says where a request comes from, in ``Sec-Fetch-Site``
(every current browser) or at least in ``Origin``. A state-changing request (any method but
GET, HEAD, OPTIONS) is refused with 403 when ``Sec-Fetch-Site`` is anything but
``same-origin`` or ``none`` (typed by the user), or, without that header, when ``Origin`` names
another host than the request's. A request with neither header does not come from a web page
(curl, scripts, Alertmanager) and is let through: it is not what cross-site request forgery
is. This is the scheme of Go's ``net/http.CrossOriginProtection``; it needs no token, so the
pages send nothing special, and it holds with or without ``API_KEY`` (a ``no-cors`` form
upload carries no bearer key, but neither does it need one when the key is unset).
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
