"""``mode=auto``: which flow a question takes (stored on the run as ``flow``).

A question that asks why, asks about a service's state or what to do about it now, names an
error, latency, an outage, a known service (by name, part of it, alias or misspelling) or an
alert, or asks a follow-up about what the previous turn's service depends on, goes to the
complex, evidence-verified flow; small talk and knowledge questions go to the simple flow.
English and Chinese alike.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

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
#: Questions about a service's state or what to do with it now: answered from its telemetry,
#: even when worded like a knowledge question ("what is eating its CPU?").
_STATE = re.compile(
    r"\b(cpu|memory|leak|leaking|heap|oom|gc|disk|saturat\w*|eating|roll(?:ing)? (?:it |\w+ )?back|"
    r"rollback|revert|restart|ok|okay|fine|broke|stopped|stuck|missing|declined|late|"
    r"buffering|paged|can't|cannot|won't|isn't|aren't|don't|doesn't|didn't|not working)\b"
    r"|内存|泄漏|泄露|回滚|重启|磁盘|出了什么问题|什么问题|不了|不上|不到|不出|不显示|不更新|被拒"
    r"|帮忙看看|收不到|登录失败",
    re.IGNORECASE,
)
#: ... unless it asks for documents, a procedure or a definition.
_DOCS = re.compile(
    r"\b(runbooks?|docs?|documentation|knowledge|how (?:do|to|should|can) (?:i|we|you)|"
    r"what (?:is|are) (?:a|an)|explain)\b|文档|手册|知识库|如何|怎么做|什么是",
    re.I,
)
_KNOWLEDGE = re.compile(
    r"\b(runbooks?|docs?|documentation|knowledge|how (do|to|should)|what (is|are|does)|explain)\b"
    r"|文档|手册|知识库|如何|怎么做|怎样|什么是|解释一下|介绍一下",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class FlowRouter:
    """Routes questions using the telemetry's service, alias and alert names."""

    services: Callable[[], Sequence[str]]
    alerts: Callable[[], Sequence[str]] = tuple
    aliases: Callable[[], Mapping[str, Sequence[str]]] = dict

    def route(self, question: str, mode: str = "auto") -> str:
        """``complex`` or ``simple`` for ``question`` under ``mode``."""
        if mode in (COMPLEX, SIMPLE):
            return mode
        if _WHY.search(question):
            return COMPLEX
        if _STATE.search(question) and not _DOCS.search(question):
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
