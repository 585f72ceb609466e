"""Access to the app's services from a request."""

from __future__ import annotations

from flask import current_app

from ..container import Services


def services() -> Services:
    """The services of the current app."""
    found: Services = current_app.extensions["diagnosis"]
    return found
