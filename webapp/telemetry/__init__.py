"""Telemetry backends behind one port.

``port`` holds the protocol every backend implements; one module per system implements it:
``prometheus`` (Prometheus and VictoriaMetrics), ``alertmanager``, ``loki``, ``elasticsearch``
(Elasticsearch and OpenSearch), ``logfiles`` (``LOG_DIR``), and ``composite``, which picks a
backend per signal. Only ``webapp.wiring`` constructs them.
"""

from __future__ import annotations

from .port import TelemetryBackend, TelemetryError

__all__ = ["TelemetryBackend", "TelemetryError"]
