"""``/readyz``'s view of the telemetry backends: reachable, version, latency per backend."""

from __future__ import annotations

from typing import Any

from .port import TelemetryBackend

SIGNALS = ["metrics", "logs", "alerts", "runbooks"]


def telemetry_readiness(backend: TelemetryBackend) -> list[dict[str, Any]]:
    """One entry per distinct configured backend (a bundled dataset is always reachable)."""
    probes = getattr(backend, "probes", None)
    if probes is not None:
        found: list[dict[str, Any]] = probes()
        return found
    probe = getattr(backend, "probe", None)
    entry = probe() if probe else {"system": backend.name, "reachable": True}
    return [{"backend": backend.name, "signals": SIGNALS, **entry}]
