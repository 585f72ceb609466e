"""``/readyz``'s view of the telemetry backends: reachable, version, latency per backend."""

from __future__ import annotations

from typing import Any

from .composite import distinct
from .port import TelemetryBackend

SIGNALS = ("metrics", "logs", "alerts", "runbooks")


def telemetry_readiness(backend: TelemetryBackend) -> list[dict[str, Any]]:
    """One entry per distinct configured backend, with the signals it serves (a backend that
    cannot be probed, such as a bundled dataset, is reachable)."""
    signals = getattr(backend, "signals", None)
    by_signal = {s: getattr(signals, s) if signals else backend for s in SIGNALS}
    found: list[dict[str, Any]] = []
    for source in distinct(*by_signal.values()):
        probe = getattr(source, "probe", None)
        entry = probe() if probe else {"system": source.name, "reachable": True}
        roles = [s for s, b in by_signal.items() if b is source]
        found.append({"backend": source.name, "signals": roles, **entry})
    return found
