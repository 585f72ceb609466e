"""Telemetry backends behind one port (:mod:`.port`); only ``webapp.wiring`` constructs them."""

from __future__ import annotations

from .port import TelemetryBackend, TelemetryError

__all__ = ["TelemetryBackend", "TelemetryError"]
