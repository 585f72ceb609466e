"""Claim kinds as data: one template per kind and language renders a claim's statement and reads
it back.

Each kind has an English template and a Chinese one (``zh``), with the same fields: a claim is
written in the question's language. The offline executor writes every claim through
:meth:`ClaimKind.render`; the offline verifier and composer read statements back through
:func:`read`, which tries each kind's templates (each turned into a regular expression once:
every ``{field}`` a lazy group, every other character literal). In the Chinese templates every
field stands between spaces or ASCII punctuation, never glued to a Chinese character, so a
number, time or service name stays one token for grounding.
A statement no template reads is a free-text claim (a real model's), judged on its excerpts
alone. Fields never hold a double quote or a line break (:func:`render` replaces them), so a
quoted field ends where its closing quote is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from string import Formatter


@dataclass(frozen=True)
class ClaimKind:
    """One kind of claim: its name, its statement templates and whether it is critical."""

    name: str
    template: str
    #: The Chinese statement: the same fields as ``template``.
    zh: str = ""
    critical: bool = True
    #: The role the claim plays in the answer: ``symptom``, ``cause``, ``origin``, ``link``,
    #: ``change``, ``steady``, ``reference`` or ``step``.
    role: str = "symptom"
    fields: tuple[str, ...] = field(init=False, default=())

    def __post_init__(self) -> None:
        names = _fields(self.template)
        object.__setattr__(self, "fields", names)
        if self.zh and set(_fields(self.zh)) != set(names):
            raise ValueError(f"claim kind {self.name}: the zh template has other fields")

    @property
    def templates(self) -> dict[str, str]:
        """The statement template of each language (``en`` always, ``zh`` when written)."""
        return {"en": self.template, **({"zh": self.zh} if self.zh else {})}

    @cached_property
    def patterns(self) -> tuple[re.Pattern[str], ...]:
        """Each template as an anchored regular expression, one named group per field."""
        return tuple(_pattern(template) for template in self.templates.values())

    @cached_property
    def _readers(self) -> tuple[tuple[re.Pattern[str], tuple[str, ...]], ...]:
        """Each pattern with the literal text between its fields: a statement that lacks one
        of them cannot match, so the pattern (whose lazy groups try every split of the
        statement before failing) is not tried on it."""
        return tuple(  # the longest literal first: the likeliest to be missing
            (
                pattern,
                tuple(
                    sorted(
                        (literal for literal, _, _, _ in Formatter().parse(template) if literal),
                        key=len,
                        reverse=True,
                    )
                ),
            )
            for pattern, template in zip(self.patterns, self.templates.values(), strict=True)
        )

    def render(self, language: str = "en", **values: object) -> str:
        """The statement for ``values`` (every field of the template, nothing else), in
        ``language`` (English when the kind has no template in it)."""
        missing = set(self.fields) - set(values)
        if missing:
            raise ValueError(f"claim kind {self.name}: missing fields {sorted(missing)}")
        template = self.templates.get(language, self.template)
        return template.format(**{k: clean(str(v)) for k, v in values.items()})

    def read(self, statement: str) -> dict[str, str] | None:
        """The field values of ``statement`` (in any language), or None when it is not of
        this kind."""
        for pattern, literals in self._readers:
            if literals and literals[0] not in statement:
                continue
            if not all(literal in statement for literal in literals[1:]):
                continue
            match = pattern.match(statement)
            if match:
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
    role="link",
    critical=False,
)
#: The asked service's trouble leads to ``culprit``: a named dependency whose trouble began
#: with it (the cascade's origin).
ORIGIN = ClaimKind(
    "origin",
    "{victim} leads to {culprit}, whose {signal} moved at {onset}, as {victim}'s trouble "
    "began at {victim_onset}",
    "{victim} 的问题指向 {culprit}: 其 {signal} 于 {onset} 变化, 而 {victim} 的问题始于 "
    "{victim_onset}",
    role="origin",
)
#: The same, for a ``culprit`` no line of the victim names: the link rests on timing alone (its
#: trouble began with the victim's), which the statement says.
ORIGIN_TIMING = ClaimKind(
    "origin_timing",
    "{victim} may depend on {culprit}: no log line names it, but its {signal} moved at {onset}, "
    "as {victim}'s trouble began at {victim_onset}",
    "{victim} 可能依赖 {culprit}: 没有日志提到它, 但其 {signal} 于 {onset} 变化, 而 {victim} "
    "的问题始于 {victim_onset}",
    role="origin",
)
#: The evidence of ``culprit`` matches a cause kind (a row of ``causes.CAUSE_KINDS``).
CAUSE = ClaimKind(
    "cause",
    "{culprit} shows the signs of {mechanism} (seen in {signals})",
    "{culprit} 显示出 {mechanism} 的迹象 (见于 {signals})",
    role="cause",
)
#: A rare log line just before or at the onset (a deploy, a job, a client that connected).
EVENT = ClaimKind(
    "event",
    '{service} logged at {time}, as its trouble began: "{message}"',
    '{service} 在问题开始时 ({time}) 记录了: "{message}"',
    role="change",
)
#: Nothing of ``service`` moved significantly in the window.
STEADY = ClaimKind(
    "steady",
    "{service} showed no significant change in any of its {count} signals from {start} to {end}",
    "{service} 的 {count} 个信号从 {start} 到 {end} 均无显著变化",
    role="steady",
)
#: A count of work done that moved while nothing else did: it follows traffic, no symptom.
TRAFFIC = ClaimKind(
    "traffic",
    "{service} {signal} went {direction} at {onset} from a baseline median of {baseline} to a "
    "peak of {peak}, alone: a count of work done, which follows traffic",
    "{service} 的 {signal} 自 {onset} 起 {direction}, 从基线中位数 {baseline} 到峰值 {peak}, "
    "且只有它变化: 这是工作量的计数, 随流量变化",
    role="steady",
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
    role="reference",
    critical=False,
)
#: One action step of that runbook.
STEP = ClaimKind(
    "step", "The runbook recommends: {step}", "运行手册建议: {step}", role="step", critical=False
)

KINDS: tuple[ClaimKind, ...] = (
    MOVED,
    NEW_LOGS,
    NAMES,
    ORIGIN,
    ORIGIN_TIMING,
    CAUSE,
    EVENT,
    STEADY,
    TRAFFIC,
    VALUE,
    RUNBOOK,
    STEP,
)


def read(statement: str) -> tuple[ClaimKind, dict[str, str]] | None:
    """The kind and fields of ``statement``: the first kind whose template reads it."""
    for kind in KINDS:
        values = kind.read(statement)
        if values is not None:
            return kind, values
    return None
