"""Claim kinds as data: one template per kind renders a claim's statement and reads it back.

The offline executor writes every claim through :func:`render`; the offline verifier and
composer read statements back through :func:`read`, which tries each kind's template (turned
into a regular expression once: every ``{field}`` a lazy group, every other character literal).
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
    """One kind of claim: its name, its statement template and whether it is critical."""

    name: str
    template: str
    critical: bool = True
    #: The role the claim plays in the answer: ``symptom``, ``cause``, ``origin``, ``link``,
    #: ``change``, ``steady``, ``reference`` or ``step``.
    role: str = "symptom"
    fields: tuple[str, ...] = field(init=False, default=())

    def __post_init__(self) -> None:
        names = tuple(dict.fromkeys(f for _, f, _, _ in Formatter().parse(self.template) if f))
        object.__setattr__(self, "fields", names)

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """The template as an anchored regular expression, one named group per field."""
        parts, seen = [], set()
        for literal, name, _, _ in Formatter().parse(self.template):
            parts.append(re.escape(literal))
            if name:  # a field used twice must hold the same text both times
                parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>.+?)")
                seen.add(name)
        return re.compile("^" + "".join(parts) + "$", re.DOTALL)

    def render(self, **values: object) -> str:
        """The statement for ``values`` (every field of the template, nothing else)."""
        missing = set(self.fields) - set(values)
        if missing:
            raise ValueError(f"claim kind {self.name}: missing fields {sorted(missing)}")
        return self.template.format(**{k: clean(str(v)) for k, v in values.items()})

    def read(self, statement: str) -> dict[str, str] | None:
        """The field values of ``statement``, or None when it is not of this kind."""
        match = self.pattern.match(statement)
        return match.groupdict() if match else None


def clean(value: str) -> str:
    """A field value that cannot end a quoted field early or break a line."""
    return " ".join(value.replace('"', "'").split())


#: A signal of ``service`` that moved significantly (a ``detect_anomalies`` finding).
MOVED = ClaimKind(
    "moved",
    "{service} {signal} went {direction} at {onset}: median {incident} against a baseline "
    "median of {baseline} ({change}, robust z {z})",
)
#: A log message shape new (or surging) since the onset (a ``log_patterns`` pattern).
NEW_LOGS = ClaimKind(
    "new_logs",
    "{service} logged {count} lines of a message first seen at {first_seen} and new since "
    'its onset, such as "{example}"',
)
#: A log line of ``service`` naming another known service (what the data says it depends on).
NAMES = ClaimKind(
    "names", '{service} log lines name {dependency}: "{excerpt}"', role="link", critical=False
)
#: The asked service's trouble leads to ``culprit``: a named dependency whose trouble began
#: with it (the cascade's origin).
ORIGIN = ClaimKind(
    "origin",
    "{victim} leads to {culprit}, whose {signal} moved at {onset}, as {victim}'s trouble "
    "began at {victim_onset}",
    role="origin",
)
#: The evidence of ``culprit`` matches a cause kind (a row of ``causes.CAUSE_KINDS``).
CAUSE = ClaimKind(
    "cause", "{culprit} shows the signs of {mechanism} (seen in {signals})", role="cause"
)
#: A rare log line just before or at the onset (a deploy, a job, a client that connected).
EVENT = ClaimKind(
    "event", '{service} logged at {time}, as its trouble began: "{message}"', role="change"
)
#: Nothing of ``service`` moved significantly in the window.
STEADY = ClaimKind(
    "steady",
    "{service} showed no significant change in any of its {count} signals from {start} to {end}",
    role="steady",
)
#: A runbook that describes the cause kind (reference: supports, never concludes).
RUNBOOK = ClaimKind(
    "runbook", 'The runbook "{title}" covers this kind of failure', role="reference", critical=False
)
#: One action step of that runbook.
STEP = ClaimKind("step", "The runbook recommends: {step}", role="step", critical=False)

KINDS: tuple[ClaimKind, ...] = (
    MOVED,
    NEW_LOGS,
    NAMES,
    ORIGIN,
    CAUSE,
    EVENT,
    STEADY,
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
