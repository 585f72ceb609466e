"""Claim kinds as data: one template per kind and language renders a claim's statement and
:func:`read` reads it back (a statement no template reads is a real model's free text).

In the Chinese templates every field stands between spaces or ASCII punctuation, so a number,
time or name stays one token for grounding. Fields never hold a double quote or a line break.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from string import Formatter
from typing import Any

#: Every claim kind, in the order they are defined (``read`` tries them in turn).
KINDS: list[ClaimKind] = []


@dataclass(frozen=True)
class ClaimKind:
    """One kind of claim: its name, its statement templates and whether it is critical."""

    name: str
    template: str
    zh: str = ""  # the Chinese statement, with the same fields
    critical: bool = True
    fields: tuple[str, ...] = field(init=False, default=())

    def __post_init__(self) -> None:
        names = _fields(self.template)
        object.__setattr__(self, "fields", names)
        if self.zh and set(_fields(self.zh)) != set(names):
            raise ValueError(f"claim kind {self.name}: the zh template has other fields")
        KINDS.append(self)

    @property
    def templates(self) -> dict[str, str]:
        """The statement template of each language (``en`` always, ``zh`` when written)."""
        return {"en": self.template, **({"zh": self.zh} if self.zh else {})}

    @cached_property
    def _readers(self) -> tuple[tuple[re.Pattern[str], tuple[str, ...]], ...]:
        """Each template as an anchored pattern, with its literal texts longest first: a
        statement lacking one is not tried (lazy groups fail slowly)."""
        readers = []
        for template in self.templates.values():
            literals = [part[0] for part in Formatter().parse(template) if part[0]]
            readers.append((_pattern(template), tuple(sorted(literals, key=len, reverse=True))))
        return tuple(readers)

    def render(self, language: str = "en", **values: object) -> str:
        """The statement for ``values`` (every field) in ``language`` (else English)."""
        missing = set(self.fields) - set(values)
        if missing:
            raise ValueError(f"claim kind {self.name}: missing fields {sorted(missing)}")
        template = self.templates.get(language, self.template)
        return template.format(**{k: clean(str(v)) for k, v in values.items()})

    def read(self, statement: str) -> dict[str, str] | None:
        """The field values of ``statement`` (in any language), or None when not of this kind."""
        for pattern, literals in self._readers:
            if all(text in statement for text in literals) and (match := pattern.match(statement)):
                return match.groupdict()
        return None


def _fields(template: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(f for _, f, _, _ in Formatter().parse(template) if f))


def _pattern(template: str) -> re.Pattern[str]:
    parts, seen = [], set()
    for literal, name, _, _ in Formatter().parse(template):
        parts.append(re.escape(literal))
        if name:  # a field used twice must hold the same text both times
            parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>.+?)")
            seen.add(name)
    return re.compile("^" + "".join(parts) + "$", re.DOTALL)


#: How a signal's ``direction`` reads in each language.
DIRECTIONS = {"zh": {"up": "上升", "down": "下降"}}


def direction(value: str, language: str) -> str:
    """``up`` / ``down`` in ``language`` (as given when it has no word for it)."""
    return DIRECTIONS.get(language, {}).get(value, value)


def clean(value: str) -> str:
    """A field value that cannot end a quoted field early or break a line."""
    return " ".join(value.replace('"', "'").split())


#: A signal of ``service`` that moved significantly (a ``detect_anomalies`` finding).
MOVED = ClaimKind(
    "moved",
    "{service} {signal} went {direction} at {onset}: median {incident} (peak {peak}) against a "
    "baseline median of {baseline} ({change}, robust z {z})",
    "{service} 的 {signal} 自 {onset} 起 {direction}: 中位数 {incident} (峰值 {peak}), 基线中位数 "
    "{baseline} ({change}, 稳健 z 值 {z})",
)
#: A log message shape new (or surging) since the onset (a ``log_patterns`` pattern).
NEW_LOGS = ClaimKind(
    "new_logs",
    "{service} logged {count} lines of a message first seen at {first_seen} and new since "
    'its onset, such as "{example}"',
    '{service} 记录了 {count} 行自 {first_seen} 首次出现、异常开始后才有的日志, 例如 "{example}"',
)
#: A log line of ``service`` naming another known service (what the data says it depends on).
NAMES = ClaimKind(
    "names",
    '{service} log lines name {dependency}: "{excerpt}"',
    '{service} 的日志提到了 {dependency}: "{excerpt}"',
    critical=False,
)
#: The asked service's trouble leads to ``culprit``, a named dependency (the cascade's origin).
ORIGIN = ClaimKind(
    "origin",
    "{victim} leads to {culprit}, whose {signal} moved at {onset}, as {victim}'s trouble "
    "began at {victim_onset}",
    "{victim} 的问题指向 {culprit}: 其 {signal} 于 {onset} 变化, 而 {victim} 的问题始于 "
    "{victim_onset}",
)
#: The same, for a ``culprit`` no line of the victim names: the link rests on timing alone.
ORIGIN_TIMING = ClaimKind(
    "origin_timing",
    "{victim} may depend on {culprit}: no log line names it, but its {signal} moved at {onset}, "
    "as {victim}'s trouble began at {victim_onset}",
    "{victim} 可能依赖 {culprit}: 没有日志提到它, 但其 {signal} 于 {onset} 变化, 而 {victim} "
    "的问题始于 {victim_onset}",
)
#: The evidence of ``culprit`` matches a cause kind (a row of ``causes.CAUSE_KINDS``).
CAUSE = ClaimKind(
    "cause",
    "{culprit} shows the signs of {mechanism} (seen in {signals})",
    "{culprit} 显示出 {mechanism} 的迹象 (见于 {signals})",
)
#: A rare log line just before or at the onset (a deploy, a job, a client that connected).
EVENT = ClaimKind(
    "event",
    '{service} logged at {time}, as its trouble began: "{message}"',
    '{service} 在问题开始时 ({time}) 记录了: "{message}"',
)
#: Nothing of ``service`` moved significantly in the window.
STEADY = ClaimKind(
    "steady",
    "{service} showed no significant change in any of its {count} signals from {start} to {end}",
    "{service} 的 {count} 个信号从 {start} 到 {end} 均无显著变化",
)
#: A count of work done that moved while nothing else did: it follows traffic, no symptom.
TRAFFIC = ClaimKind(
    "traffic",
    "{service} {signal} went {direction} at {onset} from a baseline median of {baseline} to a "
    "peak of {peak}, alone: a count of work done, which follows traffic",
    "{service} 的 {signal} 自 {onset} 起 {direction}, 从基线中位数 {baseline} 到峰值 {peak}, "
    "且只有它变化: 这是工作量的计数, 随流量变化",
)
#: The value of a metric at the time a question asks about (a ``query_metrics`` point).
VALUE = ClaimKind(
    "value",
    "{service} {signal} read {value} at {time}, the point nearest the time asked",
    "{service} 的 {signal} 在 {time} 的读数为 {value} (最接近所问时间的点)",
)
#: A runbook that describes the cause kind (reference: supports, never concludes).
RUNBOOK = ClaimKind(
    "runbook",
    'The runbook "{title}" covers this kind of failure',
    '运行手册 "{title}" 涵盖这类故障',
    critical=False,
)
#: One action step of that runbook.
STEP = ClaimKind("step", "The runbook recommends: {step}", "运行手册建议: {step}", critical=False)


def read(statement: str) -> tuple[ClaimKind, dict[str, str]] | None:
    """The kind and fields of ``statement``: the first kind whose template reads it."""
    for kind in KINDS:
        values = kind.read(statement)
        if values is not None:
            return kind, values
    return None


def next_number(claims: list[dict[str, Any]]) -> int:
    """The number after the highest ``C<n>`` claim id of ``claims``."""
    numbers = [int(c["claim_id"][1:]) for c in claims if re.fullmatch(r"C\d+", c["claim_id"])]
    return max(numbers, default=0) + 1


class ClaimWriter:
    """Numbers claims, each bound to exact leaves, skipping a statement already written."""

    def __init__(self, first: int = 1, language: str = "en") -> None:
        self.language = language
        self.claims: list[dict[str, Any]] = []
        self.next = first
        self.written: set[str] = set()

    def add(self, kind: ClaimKind, bindings: list[tuple[str, str, Any]], **fields: object) -> None:
        """Add a claim of ``kind`` bound to ``(invocation_id, raw_path, excerpt)`` triples."""
        statement = kind.render(self.language, **fields)
        if statement not in self.written and bindings:
            self.append(statement, bindings, kind.critical)

    def append(
        self, statement: str, bindings: list[tuple[str, str, Any]], critical: bool = True
    ) -> None:
        """Add a claim with this statement, whether or not it was written before."""
        self.written.add(statement)
        self.claims.append(
            {
                "claim_id": f"C{self.next}",
                "statement": statement,
                "critical": critical,
                "bindings": [
                    {"source_invocation_id": i, "raw_path": p, "evidence_excerpt": _text(e)}
                    for i, p, e in bindings
                ],
            }
        )
        self.next += 1


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
