"""The bundled demo dataset (``webapp/demo/data``, rebuilt by ``make demo-data``)."""

from __future__ import annotations

from webapp.demo.backend import DEFAULT_DATA_DIR, DemoTelemetryBackend

__all__ = ["DEFAULT_DATA_DIR", "DemoTelemetryBackend"]
