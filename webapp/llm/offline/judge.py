"""The offline verifier and composer: judge verified claims, then write the answer.

Both read claim statements in the shapes the offline executor writes them (``<service>
<metric> rose from ...``, ``... name <service> as the dependency involved``, ``The symptoms
match the runbook "<title>"``); with a real model these are free text and the judgement is the
model's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from diagnosis_graph.workflow.gatekeeper import normalise

_DEPENDENCY = re.compile(r"name (?P<dep>\S+) as the dependency")
_RUNBOOK = re.compile(r'match the runbook "(?P<title>[^"]+)"')
_RECOMMENDS = re.compile(r"^The runbook recommends: (?P<step>.+)$")
_SHIFT = re.compile(r"^(?P<svc>\S+) (?P<metric>\S+) (?P<dir>rose|fell) from")
_PATTERN = re.compile(r"^(?P<svc>\S+) logged (?P<n>\d+) (?P<level>ERROR|WARN) lines since")
_CHANGE = re.compile(r"^(?P<svc>\S+) logged a change shortly before")
_STEADY = re.compile(r"^(?P<svc>\S+) (?:had \d+ ERROR lines|\S+ stayed between)")


def _supported(claim: dict[str, Any], evidence: dict[str, dict[str, Any]]) -> tuple[bool, str]:
    """A claim is supported when its statement states what its excerpts show."""
    statement = normalise(claim.get("statement", ""))
    excerpts = [
        evidence[e]["evidence_excerpt"] for e in claim.get("evidence_ids", []) if e in evidence
    ]
    if not excerpts:
        return False, "no verified evidence"
    shown = [
        x
        for x in excerpts
        if normalise(x) in statement
        or any(n in statement for n in re.findall(r"-?\d+(?:\.\d+)?", x)[-1:])
    ]
    if not shown:
        return False, "the excerpts do not show what the statement says"
    return True, f"{len(shown)} of {len(excerpts)} excerpts state it directly"


def verify(request: dict[str, Any]) -> dict[str, Any]:
    """``verifier_output`` over the verified projection."""
    evidence = {e["evidence_id"]: e for e in request.get("evidence") or []}
    claims = request.get("claims") or []
    assessments = []
    for claim in claims:
        ok, reason = _supported(claim, evidence)
        assessments.append({"claim_id": claim["claim_id"], "supported": ok, "reason": reason})
    supported = [c for c, a in zip(claims, assessments, strict=True) if a["supported"]]
    gaps = dependency_gaps(supported)
    critical_missing = any(
        c.get("critical") and not a["supported"] for c, a in zip(claims, assessments, strict=True)
    )
    verdict = "FAIL" if not supported else "LOW_CONFID" if gaps or critical_missing else "PASS"
    return {"verdict": verdict, "claim_assessments": assessments, "critical_gaps": gaps}


def dependency_gaps(supported: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A gap per dependency named as involved but without evidence from its own telemetry."""
    about = {
        m.group("svc")
        for c in supported
        for rx in (_SHIFT, _PATTERN, _STEADY)
        if (m := rx.match(c["statement"]))
    }
    gaps = []
    for claim in supported:
        match = _DEPENDENCY.search(claim["statement"])
        if match and match.group("dep") not in about:
            dep = match.group("dep")
            about.add(dep)
            gaps.append(
                {
                    "description": f"The errors point at {dep}, but no evidence from {dep}'s own "
                    f"logs or metrics shows what happened there.",
                    "suggested_tool": "query_logs",
                    "suggested_arguments": {"service": dep},
                }
            )
    return gaps


def compose(request: dict[str, Any]) -> dict[str, Any]:
    """``composer_output`` v2: conclusions that cite supported claims and telemetry evidence.

    The summary restates the conclusions (their statements, at most three); runbook steps become
    recommendations citing the runbook's (reference) evidence. The product renders the Markdown.
    """
    verifier = request.get("verifier") or {}
    claims = [c for c in request.get("claims") or [] if c.get("supported")]
    unsupported = [c for c in request.get("claims") or [] if not c.get("supported")]
    roles = {e["evidence_id"]: e.get("role") for e in request.get("evidence") or []}
    limitations = [f"Not supported by its evidence: {c['statement']}" for c in unsupported]
    limitations += [g["description"] for g in verifier.get("critical_gaps") or []]
    if verifier.get("effective_verdict") == "FAIL" or not claims:
        return _no_conclusion(limitations)
    conclusions = [
        {
            "statement": statement,
            "claim_ids": [c["claim_id"] for c in group],
            "evidence_ids": sorted({e for c in group for e in c["evidence_ids"]}, key=_eid),
        }
        for statement, group in _sections(claims)
    ]
    # Reference evidence (runbooks, documents) never backs a conclusion on its own.
    conclusions = [
        c for c in conclusions if any(roles.get(e) != "reference" for e in c["evidence_ids"])
    ]
    if not conclusions:
        return _no_conclusion(limitations)
    recommendations = [
        {"text": m.group("step"), "evidence_ids": list(c["evidence_ids"])}
        for c in claims
        if (m := _RECOMMENDS.match(c["statement"]))
    ] or [{"text": GENERIC_STEP, "evidence_ids": []}]
    return {
        "summary": " ".join(str(c["statement"]) for c in conclusions[:3]),
        "conclusions": conclusions,
        "limitations": limitations,
        "recommendations": recommendations,
    }


GENERIC_STEP = (
    "Check the services named above around the onset time and compare with the last known good "
    "state."
)
NO_CONCLUSION_STEPS = (
    "Widen the time window or name the affected service explicitly, then ask again.",
    "Check the service's error logs and latency dashboards by hand.",
)


def _eid(evidence_id: str) -> int:
    return int(evidence_id[1:]) if evidence_id[1:].isdigit() else 0


def _primary(claims: Sequence[dict[str, Any]]) -> str | None:
    return next(
        (
            m.group("svc")
            for c in claims
            for rx in (_SHIFT, _PATTERN, _STEADY)
            if (m := rx.match(c["statement"]))
        ),
        None,
    )


def _runbook_title(claims: Sequence[dict[str, Any]]) -> str | None:
    return next((m.group("title") for c in claims if (m := _RUNBOOK.search(c["statement"]))), None)


def _sections(claims: Sequence[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    primary, title = _primary(claims), _runbook_title(claims)
    symptom = [
        c for c in claims if (m := _SHIFT.match(c["statement"])) and m.group("svc") == primary
    ]
    steady = [c for c in claims if _STEADY.match(c["statement"])]
    runbook = [c for c in claims if _RUNBOOK.search(c["statement"])]
    cause = [
        c
        for c in claims
        if c not in symptom
        and c not in steady
        and c not in runbook
        and not _RECOMMENDS.match(c["statement"])
    ]
    if steady and not symptom and not cause:
        return [
            (
                f"No evidence of a problem with {primary}: no new errors, and its key metrics "
                f"stayed within their usual range.",
                steady,
            )
        ]
    sections: list[tuple[str, list[dict[str, Any]]]] = []
    if symptom:
        moved = ", ".join(
            f"{m.group('metric')} {m.group('dir')}"
            for c in symptom
            if (m := _SHIFT.match(c["statement"]))
        )
        sections.append((f"{primary} degraded: {moved}.", symptom))
    others = sorted(
        {
            m.group("svc")
            for c in cause
            for rx in (_SHIFT, _PATTERN, _CHANGE)
            if (m := rx.match(c["statement"])) and m.group("svc") != primary
        }
    )
    changed = any(_CHANGE.match(c["statement"]) for c in cause)
    if cause or runbook:
        what = f"Likely cause: {title}" if title else "What the evidence points at"
        where = f"; the trail leads to {', '.join(others)}" if others else ""
        when = "; a change was rolled out just before the errors began" if changed else ""
        sections.append((f"{what}{where}{when}.", cause + runbook))
    return sections


def _no_conclusion(limitations: list[str]) -> dict[str, Any]:
    return {
        "summary": "The verified evidence does not support a conclusion.",
        "conclusions": [],
        "limitations": limitations or ["No claim was supported."],
        "recommendations": [{"text": step, "evidence_ids": []} for step in NO_CONCLUSION_STEPS],
    }
