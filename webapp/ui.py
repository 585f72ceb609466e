"""The browser UI: static HTML pages whose scripts read everything from the JSON API."""

from __future__ import annotations

from collections.abc import Callable

from flask import Blueprint, current_app, redirect, render_template, url_for
from flask.typing import ResponseReturnValue

from .api.requests import is_id
from .api.security import GRAPH_PAGE_POLICY

bp = Blueprint("ui", __name__)


def _auth_required() -> bool:
    """Whether the API asks for a bearer key (the page then offers to store one)."""
    return bool(current_app.extensions["diagnosis"].settings.api_key)


@bp.get("/trace/<session_id>/<run_id>")
def trace(session_id: str, run_id: str) -> ResponseReturnValue:
    """The trace viewer of one run; an id that can never exist is a 404 page right away."""
    valid = is_id(session_id) and is_id(run_id)
    page = render_template(
        "trace.html",
        session_id=session_id,
        run_id=run_id,
        valid=valid,
        auth_required=_auth_required(),
    )
    # Mermaid styles the route graph inline: this page's policy allows inline styles only.
    return page, 200 if valid else 404, {"Content-Security-Policy": GRAPH_PAGE_POLICY}


#: The pages that are a template and nothing else, by endpoint: the chat (sessions, streamed
#: answers with live progress, feedback, AIOps), every run (filters and keyset pages), the case
#: library (runs marked useful) and the alert inbox (alerts by group, their runs, investigate now).
PAGES = {"chat": "/", "runs": "/runs", "cases": "/cases", "alerts": "/alerts"}


def _page(name: str) -> Callable[[], ResponseReturnValue]:
    return lambda: render_template(f"{name}.html", auth_required=_auth_required())


for _name, _path in PAGES.items():
    bp.add_url_rule(_path, _name, _page(_name), methods=["GET"])


@bp.get("/favicon.ico")
def favicon() -> ResponseReturnValue:
    """Browsers ask for this on any page (the JSON ones too): the SVG icon."""
    return redirect(url_for("static", filename="favicon.svg"), code=308)
