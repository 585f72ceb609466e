"""``mode=auto``: which flow a question takes (SPEC section 9).

A question that asks "why", or names an error, latency, an outage, a known service (or a
distinctive part of its name) or an alert goes to the complex, evidence-verified flow; small talk
and knowledge questions ("what does the runbook say about ...", "how do I ...") go to the simple
flow. The choice is stored on the run (``flow``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

COMPLEX, SIMPLE = "complex", "simple"
MODES = ("auto", "simple", "complex")

_SIGNALS = re.compile(
    r"\b(why|error|errors|5\d\d|latency|slow|slower|timeout|timeouts|timing out|down|outage|"
    r"failing|fails|failed|failure|incident|alert|alerts|firing|degraded|spike|crash|crashing|"
    r"exception|unavailable|broken|healthy|p95|p99)\b",
    re.IGNORECASE,
)
_KNOWLEDGE = re.compile(
    r"\b(runbooks?|docs?|documentation|knowledge|how (do|to|should)|what (is|are|does)|explain)\b",
    re.IGNORECASE,
)
_GENERIC_PARTS = {"service", "svc", "api", "app", "server", "worker", "main", "primary"}


class FlowRouter:
    """Routes questions using the telemetry's service and alert names."""

    def __init__(
        self, services: Callable[[], Sequence[str]], alerts: Callable[[], Sequence[str]] = tuple
    ) -> None:
        self.services = services
        self.alerts = alerts

    def route(self, question: str, mode: str = "auto") -> str:
        """``complex`` or ``simple`` for ``question`` under ``mode``."""
        if mode in (COMPLEX, SIMPLE):
            return mode
        text = question.lower()
        if re.search(r"\bwhy\b", text):
            return COMPLEX
        if _KNOWLEDGE.search(text):
            return SIMPLE
        if _SIGNALS.search(text):
            return COMPLEX
        words = set(re.findall(r"[a-z0-9]+", text))
        for name in self.services():
            parts = {
                p
                for p in re.findall(r"[a-z0-9]+", name.lower())
                if p not in _GENERIC_PARTS and len(p) > 2
            }
            if name.lower() in text or parts & words:
                return COMPLEX
        if any(alert.lower() in text for alert in self.alerts()):
            return COMPLEX
        return SIMPLE
