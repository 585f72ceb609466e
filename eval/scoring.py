"""Deterministic scoring of an answer against a case's expected outcome.

The eval owns its vocabulary (product code never sees it): a cause category is recognised by
words any competent write-up of that mechanism uses, in English or Chinese. Only the answer's
conclusion is read: the echoed question and everything from the evidence list on (raw tool
excerpts, runbook next steps) are cut off, so quoting a runbook is not naming a cause.

Rules (written down in docs/evaluation.md):

* incident: every expected culprit (name or declared alias) is named and its category matched;
  when the headline (first line) names a cause category, it must be an expected one (a wrong
  headline is not rescued by a hedge in the body); nothing is called healthy (else it is a
  *false healthy*); an answer that matches more than three categories, or names more than
  three services beyond the expected ones, is a shotgun and wrong.
* healthy: the service is said to be fine and no cause category is matched.
* unknown: the service is said to be unknown (or a correction is offered), it is not called
  healthy and no cause is given.
* alerts: every firing alert is listed by name.
* recorded (a replayed run without an expected outcome): the headline is the recorded one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from eval.questions import Case

CATEGORIES: dict[str, re.Pattern[str]] = {
    key: re.compile(pattern, re.IGNORECASE)
    for key, pattern in {
        "db_pool_exhaustion": r"connection pool|pool (is )?(exhaust|saturat|full)|handle limit|"
        r"no (free|idle) (connections?|handles?)|slow (quer|statement)|lock (wait|contention)|"
        r"long[- ]running (transaction|query)|blocking (session|query|transaction)|"
        r"连接池|慢查询|锁等待",
        "downstream_timeout": r"time[ds]? ?out|deadline|\bgc\b|garbage collect|stop-the-world|"
        r"collector pause|heap|超时|垃圾回收",
        "cache_eviction": r"evict|cache (hit|miss)|hit (ratio|rate)|least[- ]recently[- ]used|"
        r"\blru\b|maxmemory|(cache|store) (is )?(full|at capacity)|"
        r"keys (dropped|discarded|removed)|"
        r"缓存(命中|淘汰|满)|驱逐",
        "bad_deploy": r"deploy|release|rollout|rolled out|roll(ed)?[- ]?back|new (build|version)|"
        r"regression|发布|部署|上线|回滚",
        "disk_full": r"disk (is )?full|disk space|no space|(filesystem|volume|storage) "
        r"(is )?(full|exhausted|capacity)|out of (disk|space)|磁盘|存储空间",
        "cert_expiry": r"certificate|\bcerts?\b|x509|\btls\b|\bssl\b|handshake|证书",
        "cpu_saturation": r"\bcpu\b|processor|runaway|batch job|cpu[- ]bound|compute[- ]bound|"
        r"处理器|批处理",
        "memory_leak": r"memory leak|\bleak|out of memory|\boom|heap space|内存泄漏|内存溢出|内存",
        "queue_lag": r"consumer lag|\blag\b|lagging|backlog|behind (the )?(topic|queue|head)|"
        r"rebalanc|fall(s|ing)? behind|membership churn|消费(延迟|积压)|积压",
    }.items()
}
_HEALTHY = re.compile(
    r"no evidence of a problem|\b(is|looks|appears|seems) (to be )?healthy|"
    r"no (significant |notable )?(anomal(y|ies)|issues?|problems?) (were |was )?"
    r"(found|detected|seen)|nothing (looks |is )?(wrong|abnormal)|没有(发现)?(任何)?(问题|异常)|"
    r"运行正常|一切正常|没有证据",
    re.IGNORECASE,
)
_UNKNOWN = re.compile(
    r"unknown service|not a known service|no (such )?service|(isn'?t|is not|wasn'?t|was not) "
    r"(a )?(known|monitored)? ?service|no telemetry|not found|did you mean|"
    r"don'?t (know|have) (a|any)? ?service|未知(的)?服务|没有(找到)?.{0,12}服务|不存在|找不到",
    re.IGNORECASE,
)
_CUT = re.compile(r"^#{2,4} (evidence|recommended|证据|建议)", re.IGNORECASE | re.MULTILINE)
# Quoted text (log lines, runbook titles in quotes) is the data speaking, not the answer.
# Markdown backslash escapes (the renderer escapes ``_`` ``*`` ``[`` ...): the reader sees the
# character itself.
_ESCAPE = re.compile(r"\\([\\`*_\[\]!|~#{}()<>+.-])")
_QUOTED = re.compile(r'"[^"\n]{3,}"|“[^”\n]{3,}”|`[^`\n]{3,}`')
SHOTGUN_CATEGORIES = 3
SHOTGUN_EXTRA_SERVICES = 3


@dataclass(frozen=True)
class Verdict:
    """The score of one answer."""

    correct: bool
    false_healthy: bool
    reason: str


def conclusion(answer: str, turns: Sequence[str]) -> str:
    """The part of ``answer`` that concludes, in its own words.

    Cut: the echoed question, everything from the evidence list on, and quoted text (a log
    line that says "certificate has expired" is the data talking, not the answer naming the
    cause; a quoted runbook title likewise).
    """
    answer = _ESCAPE.sub(r"\1", answer)  # read as rendered: "feed\\_svc" shows as "feed_svc"
    cut = _CUT.search(answer)
    text = answer[: cut.start()] if cut else answer
    lines = [line for line in text.splitlines() if not line.startswith("**Question:**")]
    text = "\n".join(lines)
    for turn in turns:
        text = text.replace(turn, " ")
    return _QUOTED.sub('"…"', text)


def mentioned(text: str, name: str) -> bool:
    """Whether ``name`` occurs as a whole name (Chinese aliases: as a substring)."""
    if re.search(r"[\u4e00-\u9fff]", name):
        return name in text
    pattern = rf"(?<![a-z0-9_-]){re.escape(name.lower())}(?![a-z0-9_-])"
    return re.search(pattern, text.lower()) is not None


def categories(text: str) -> set[str]:
    """Every cause category whose vocabulary ``text`` uses."""
    return {key for key, pattern in CATEGORIES.items() if pattern.search(text)}


def score(case: Case, answer: str | None, aliases: Mapping[str, Sequence[str]]) -> Verdict:
    """Score ``answer`` (None: the run failed) for ``case``."""
    if not answer:
        return Verdict(False, False, "no answer")
    text = conclusion(answer, case.turns)
    expected = case.expected
    found = categories(text)
    healthy = _HEALTHY.search(text) is not None
    if expected.outcome == "incident":
        return _incident(case, text, found, healthy, aliases)
    if expected.outcome == "healthy":
        if not healthy:
            return Verdict(False, False, "not called healthy")
        return Verdict(not found, False, f"cause given: {sorted(found)}" if found else "ok")
    if expected.outcome == "recorded":
        headline = answer.strip().splitlines()[0] if answer.strip() else ""
        same = headline == expected.service
        return Verdict(same, False, "ok" if same else f"headline changed: {headline[:80]}")
    if expected.outcome == "unknown":
        if _UNKNOWN.search(text) is None:
            return Verdict(False, False, "not said to be unknown")
        if healthy or found:
            return Verdict(False, False, "unknown service given a status or a cause")
        return Verdict(True, False, "ok")
    missing = [name for name in expected.alerts if not mentioned(text, name)]
    return Verdict(not missing, False, f"alerts missing: {missing}" if missing else "ok")


def _headline(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line
    return ""


def _named(text: str, service: str, aliases: Mapping[str, Sequence[str]]) -> bool:
    return any(mentioned(text, name) for name in (service, *aliases.get(service, ())))


def _incident(
    case: Case,
    text: str,
    found: set[str],
    healthy: bool,
    aliases: Mapping[str, Sequence[str]],
) -> Verdict:
    if healthy:
        return Verdict(False, True, "called healthy")
    for culprit, family in case.expected.causes:
        if not _named(text, culprit, aliases):
            return Verdict(False, False, f"culprit {culprit} not named")
        if family not in found:
            return Verdict(False, False, f"{family} not recognised (found {sorted(found)})")
    headline = categories(_headline(text))
    wrong = {family for _, family in case.expected.causes} - headline
    if headline and wrong == {family for _, family in case.expected.causes}:
        return Verdict(False, False, f"headline names another cause: {sorted(headline)}")
    if len(found) > SHOTGUN_CATEGORIES:
        return Verdict(False, False, f"shotgun: {sorted(found)}")
    named = [s for s in aliases if _named(text, s, {})]
    expected = {culprit for culprit, _ in case.expected.causes}
    extra = [s for s in named if s not in expected]
    if len(extra) > SHOTGUN_EXTRA_SERVICES + len(expected):
        return Verdict(False, False, f"shotgun: names {len(named)} services")
    return Verdict(True, False, "ok")
