"""The composer's invalid-output rules: citations, roles, grounding, summary."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from . import contracts as c
from . import grounding
from .gatekeeper import TELEMETRY, EvidenceItem, VerifiedClaim, check_binding
from .outcomes import Verdict
from .ports import InvocationRecord
from .prose import sentences

MAX_SUMMARY_SENTENCES = 3
#: Share of a summary sentence's content words that must come from what it restates.
RESTATEMENT_SHARE = 1 / 2

_CITATION = re.compile(r"\[(?:[A-Za-z0-9]+-)?E\d+\]")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}|[\u3400-\u4dbf\u4e00-\u9fff]")
_NEUTRAL_WORDS = (
    "the and are was were has have had its for from with that this than then into onto "
    "which while when where what who why how not but also very more most less all any "
    "each been being over under after before since until about around between during "
    "likely probably possibly apparently appears seems shows showed show indicates "
    "cause caused causes causing root because due led leads result resulting reason "
    "evidence verified diagnosis summary incident issue problem started began begin "
    "there their them they our your one two both same other others"
)
_NEUTRAL_CJK = "的了是在和与及其因为所以导致可能原因显示表明证据问题开始"
_NEUTRAL = frozenset(_NEUTRAL_WORDS.split(" ")) | frozenset(_NEUTRAL_CJK)


def _stem(word: str) -> str:
    word = word.lower().strip("'-")
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> list[str]:
    """Stemmed content words of ``text`` (no stop or connective words)."""
    return [_stem(w) for w in _WORD.findall(text) if w.lower().strip("'-") not in _NEUTRAL]


class AnswerRules:
    """Checks one ``composer_output`` against the verified evidence and the verifier's view."""

    def __init__(
        self,
        evidence: Sequence[EvidenceItem],
        records: Sequence[InvocationRecord],
        claims: Sequence[VerifiedClaim],
        *,
        catalog: Sequence[str] = (),
        offset_minutes: int = 0,
        question: str = "",
    ) -> None:
        self.roles = {e["evidence_id"]: e["role"] for e in evidence}
        self.instructions = {e["evidence_id"] for e in evidence if e.get("instruction_like")}
        self.excerpts = {e["evidence_id"]: e["evidence_excerpt"] for e in evidence}
        by_id = {r.invocation_id: r for r in records}
        checked = {e["evidence_id"]: check_binding(e, by_id).context for e in evidence}
        self.contexts = {i: context for i, context in checked.items() if context is not None}
        self.statements = {cl["claim_id"]: cl["statement"] for cl in claims}
        self.catalog = catalog
        self.offset = offset_minutes
        self.question = grounding.context_of(question, None, None)

    def _ungrounded(
        self, text: str, ids: Iterable[str], context: grounding.Context | None = None
    ) -> list[str]:
        """The tokens of ``text`` not in the evidence ``ids`` (or ``context``), citations aside."""
        if context is None:
            context = grounding.Context.merge(self.contexts[e] for e in ids if e in self.contexts)
        plain = _CITATION.sub(" ", text)
        return grounding.ungrounded_tokens(plain, context, self.catalog, self.offset)

    def problem(
        self, output: c.ComposerOutput, supported: set[str], effective: str | None
    ) -> str | None:
        """Why ``output`` is invalid, or None when every rule holds."""
        if effective == Verdict.FAIL.value and output.conclusions:
            return "the verifier's verdict is FAIL: the answer may state no conclusion"
        for conclusion in output.conclusions:
            if problem := self._conclusion(conclusion, supported):
                return problem
        for recommendation in output.recommendations:
            unknown = [e for e in recommendation.evidence_ids if e not in self.roles]
            if unknown:
                return f"recommendation cites evidence that was not verified: {unknown}"
            if tokens := self._ungrounded(recommendation.text, recommendation.evidence_ids):
                return f"recommendation {grounding.describe(tokens)}"
        problem = self._limitations(output.limitations)
        return problem or (self._summary(output) if output.conclusions else None)

    def _limitations(self, limitations: Sequence[str]) -> str | None:
        context = grounding.Context.merge([self.question, *self.contexts.values()])
        for limitation in limitations:
            if tokens := self._ungrounded(limitation, (), context):
                return f"limitation {grounding.describe(tokens)} (nor in the question)"
        return None

    def _conclusion(self, conclusion: c.Conclusion, supported: set[str]) -> str | None:
        unknown = [e for e in conclusion.evidence_ids if e not in self.roles]
        if unknown:
            return f"conclusion cites evidence that was not verified: {unknown}"
        unsupported = [cid for cid in conclusion.claim_ids if cid not in supported]
        if unsupported:
            return f"conclusion cites claims the verifier did not support: {unsupported}"
        if not any(self.roles[e] == TELEMETRY for e in conclusion.evidence_ids):
            return (
                "conclusion cites no telemetry evidence: reference evidence (runbooks, "
                "documents) backs recommendations only"
            )
        if all(e in self.instructions for e in conclusion.evidence_ids):
            return "conclusion rests only on tool output that reads like an instruction"
        if tokens := self._ungrounded(conclusion.statement, conclusion.evidence_ids):
            return f"conclusion {grounding.describe(tokens)}"
        return None

    def _summary(self, output: c.ComposerOutput) -> str | None:
        parts = sentences(_CITATION.sub(" ", output.summary))
        if len(parts) > MAX_SUMMARY_SENTENCES:
            return f"the summary has {len(parts)} sentences; at most {MAX_SUMMARY_SENTENCES}"
        ids = [e for conclusion in output.conclusions for e in conclusion.evidence_ids]
        if tokens := self._ungrounded(output.summary, ids):
            return f"summary {grounding.describe(tokens)}"
        material = " ".join(
            [x.statement for x in output.conclusions]
            + [self.statements.get(cid, "") for x in output.conclusions for cid in x.claim_ids]
            + [self.excerpts[e] for e in ids]
        )
        known = set(content_words(material))
        for sentence in parts:
            words = content_words(sentence)
            novel = [w for w in words if w not in known]
            if words and len(words) - len(novel) < RESTATEMENT_SHARE * len(words):
                return (
                    f"the summary sentence {sentence[:80]!r} does not restate the conclusions "
                    f"(new words: {', '.join(repr(w) for w in novel[:5])})"
                )
        return None
