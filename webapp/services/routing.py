"""``mode=auto``: which flow a question takes.

A question that asks "why", or names an error, latency, an outage, a known service (or a
distinctive part of its name, an alias the backend declares, or a misspelling of one) or an
alert goes to the complex, evidence-verified flow; small talk and knowledge questions ("what
does the runbook say about ...", "how do I ...") go to the simple flow. Chinese questions are
routed the same way: "为什么" / "原因" ask why; "报错", "变慢", "延迟", "告警", "超时" ... are
signals; "文档", "手册", "如何", "什么是" ask for knowledge. A follow-up asking about what the
previous turn's service depends on ("and what about its database?", "那它的数据库呢?") is a
diagnosis too. The choice is stored on the run (``flow``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from ..analysis.language import asks_dependency, refers_back
from ..analysis.names import resolve_services

COMPLEX, SIMPLE = "complex", "simple"
MODES = ("auto", "simple", "complex")

_WHY = re.compile(
    r"\bwhy\b|\bwhat(?:'s| is| was)? (?:causing|caused|behind|wrong|going on|happening|happened)\b"
    r"|\broot cause|为什么|为啥|为何|什么原因|原因是|原因|怎么回事|根因",
    re.IGNORECASE,
)
_SIGNALS = re.compile(
    r"\b(error|errors|5\d\d|latency|slow|slower|sluggish|timeout|timeouts|timing out|down|outage|"
    r"failing|fails|failed|failure|incident|alert|alerts|firing|degraded|spike|crash|crashing|"
    r"exception|unavailable|broken|healthy|p95|p99)\b"
    r"|报错|错误|异常|失败|超时|变慢|很慢|太慢|慢了|延迟|卡顿|宕机|挂了|不可用|故障|告警|报警|警报"
    r"|下降|升高|飙升|激增|崩溃|重启|打不开|无法访问|健康|正常吗|是否正常|有问题|出问题|没问题吗",
    re.IGNORECASE,
)
_KNOWLEDGE = re.compile(
    r"\b(runbooks?|docs?|documentation|knowledge|how (do|to|should)|what (is|are|does)|explain)\b"
    r"|文档|手册|知识库|如何|怎么做|怎样|什么是|解释一下|介绍一下",
    re.IGNORECASE,
)


class FlowRouter:
    """Routes questions using the telemetry's service, alias and alert names."""

    def __init__(
        self,
        services: Callable[[], Sequence[str]],
        alerts: Callable[[], Sequence[str]] = tuple,
        aliases: Callable[[], Mapping[str, Sequence[str]]] = dict,
    ) -> None:
        self.services = services
        self.alerts = alerts
        self.aliases = aliases

    def route(self, question: str, mode: str = "auto") -> str:
        """``complex`` or ``simple`` for ``question`` under ``mode``."""
        if mode in (COMPLEX, SIMPLE):
            return mode
        if _WHY.search(question):
            return COMPLEX
        if _KNOWLEDGE.search(question):
            return SIMPLE
        if _SIGNALS.search(question):
            return COMPLEX
        if refers_back(question) and asks_dependency(question):  # "and its database?"
            return COMPLEX
        if resolve_services(question, self.services(), self.aliases()).services:
            return COMPLEX
        text = question.lower()
        if any(alert.lower() in text for alert in self.alerts()):
            return COMPLEX
        return SIMPLE
