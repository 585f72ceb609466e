"""The bundled demo dataset: a small e-commerce system with incident scenarios.

``DemoTelemetryBackend`` serves the committed data in ``webapp/demo/data``;
``python -m demo.generate`` (outside the app) rebuilds it.
"""

from __future__ import annotations

from webapp.demo.backend import DEFAULT_DATA_DIR, DemoTelemetryBackend

__all__ = ["DEFAULT_DATA_DIR", "DemoTelemetryBackend"]
