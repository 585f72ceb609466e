"""The bundled demo dataset: a small e-commerce system with incident scenarios.

``DemoTelemetryBackend`` serves the committed data in ``webapp/demo/data``;
``python -m webapp.demo.generate`` rebuilds it; ``scenario_records`` is the ground truth that
tests compare diagnoses against.
"""

from __future__ import annotations

from webapp.demo.backend import DEFAULT_DATA_DIR, DemoTelemetryBackend
from webapp.demo.scenarios import scenario_records

__all__ = ["DEFAULT_DATA_DIR", "DemoTelemetryBackend", "scenario_records"]
