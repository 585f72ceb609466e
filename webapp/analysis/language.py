"""The words that say what a question asks: whether it refers back, asks about a dependency,
asks what is wrong, or states that something fails. Its language is the product's
(``diagnosis_graph.workflow.render.language_of``): Chinese when it carries Chinese.
"""

from __future__ import annotations

import re

#: Words by which a question points back at what the previous turn was about.
_REFERS_BACK = re.compile(
    r"\b(it|its|it's|that service|this service|the same service|same one|that one|they|their|"
    r"them)\b|\b(and|what|how) about\b|它|这个服务|那个服务|该服务|同一个服务|那个|这个",
    re.IGNORECASE,
)
#: Words naming what a service depends on ("its database", "它的缓存").
_DEPENDENCY = re.compile(
    r"\b(database|db|datastore|store|cache|queue|broker|topic|dependency|dependencies|"
    r"upstream|downstream|backend)s?\b|数据库|缓存|队列|依赖|下游|上游|存储",
    re.IGNORECASE,
)


def refers_back(text: str) -> bool:
    """True when ``text`` refers to something named earlier ("it", "that service", "它")."""
    return _REFERS_BACK.search(text) is not None


def asks_dependency(text: str) -> bool:
    """True when ``text`` asks about a dependency ("its database", "它的数据库")."""
    return _DEPENDENCY.search(text) is not None


#: Words asking what is wrong (beyond listing alerts): "what is going on?", "出了什么问题?".
_WHAT_IS_WRONG = re.compile(
    r"\bwhy\b|\bwhat(?:'s| is| was| has)? (?:going on|wrong|happening|happened|broke|broken|"
    r"the (?:cause|problem|issue))\b|\broot cause\b|\bcaus(?:e|ed|ing)\b"
    r"|出了什么问题|什么问题|怎么回事|什么原因|为什么|原因",
    re.IGNORECASE,
)


def asks_what_is_wrong(text: str) -> bool:
    """True when ``text`` asks what is wrong or why ("what is going on?", "为什么")."""
    return _WHAT_IS_WRONG.search(text) is not None


#: Words stating that something already fails ("why is X failing", "can't log in", "won't
#: start"), as opposed to asking whether it is healthy ("is it broken?", see ``_ASKS_WHETHER``).
_STATES_FAILURE = re.compile(
    r"\b(fail(?:s|ing|ed|ure)?|broken|broke|down|crash(?:es|ing|ed)?|erroring|errors?|"
    r"timing out|times out|timeouts?|slow(?:er)?|stuck|stopped|outage|unavailable|"
    r"not working|can(?:'|’)?t|cannot|won(?:'|’)?t|isn(?:'|’)?t|doesn(?:'|’)?t|don(?:'|’)?t)\b"
    r"|失败|报错|错误|超时|变慢|很慢|太慢|慢了|宕机|挂了|不可用|故障|崩溃|打不开|无法|不了|不上|收不到",
    re.IGNORECASE,
)


#: A clause that asks whether something holds ("is it broken?", "吗?") states nothing.
_ASKS_WHETHER = re.compile(
    r"^\s*(is|are|was|were|has|have|does|do|did|can|could|should|any)\b|[吗么]\s*[?？]?\s*$",
    re.IGNORECASE,
)
_CLAUSES = re.compile(r"\s[-–—]+\s|[,;:!?？，。；：]+\s*|\.\s")


def states_failure(text: str) -> bool:
    """True when a clause of ``text`` says something is failing ("why is X failing?", "couriers
    can't log in") rather than asking whether it is: an answer that finds nothing must then not
    call it healthy."""
    return any(
        _STATES_FAILURE.search(clause) and not _ASKS_WHETHER.search(clause)
        for clause in _CLAUSES.split(text)
    )
