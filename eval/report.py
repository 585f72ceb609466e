"""The eval's output: a table by incident family and by question kind, and one JSON line."""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from eval.runner import CaseResult

JSON_KEYS = (
    "model",
    "fixtures",
    "questions",
    "correct",
    "accuracy",
    "false_healthy",
    "false_healthy_rate",
    "fallback_rate",
    "ungrounded_claims",
    "median_latency_ms",
    "by_family",
    "by_kind",
)


def _row(results: Sequence[CaseResult]) -> dict[str, Any]:
    n = len(results)
    correct = sum(r.verdict.correct for r in results)
    return {
        "n": n,
        "correct": correct,
        "accuracy": round(correct / n, 3) if n else 0.0,
        "false_healthy": sum(r.verdict.false_healthy for r in results),
        "fallback": sum(r.fallback for r in results),
    }


def _group(
    results: Sequence[CaseResult], key: Callable[[CaseResult], str]
) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[CaseResult]] = {}
    for result in results:
        groups.setdefault(key(result), []).append(result)
    return {name: _row(groups[name]) for name in sorted(groups)}


def summary(results: Sequence[CaseResult], model: str) -> dict[str, Any]:
    """The JSON line's document."""
    overall = _row(results)
    latencies = [ms for r in results for ms in r.latencies_ms]
    reported = [r.ungrounded for r in results if r.ungrounded is not None]
    incidents = [r for r in results if r.case.expected.outcome == "incident"]
    return {
        "model": model,
        "fixtures": sorted({r.case.world for r in results}),
        "questions": overall["n"],
        "correct": overall["correct"],
        "accuracy": overall["accuracy"],
        "false_healthy": overall["false_healthy"],
        "false_healthy_rate": round(overall["false_healthy"] / len(incidents), 3)
        if incidents
        else 0.0,
        "fallback_rate": round(overall["fallback"] / overall["n"], 3) if overall["n"] else 0.0,
        "ungrounded_claims": sum(reported) if reported else "n/a",
        "median_latency_ms": round(statistics.median(latencies), 1) if latencies else None,
        "by_family": _group(results, lambda r: r.case.expected.family),
        "by_kind": _group(results, lambda r: r.case.kind),
    }


def _table(title: str, rows: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        f"{title:<22} {'n':>4} {'correct':>8} {'acc':>6} {'false-healthy':>14} {'fallback':>9}"
    ]
    for name, row in rows.items():
        lines.append(
            f"{name:<22} {row['n']:>4} {row['correct']:>8} {row['accuracy'] * 100:>5.0f}% "
            f"{row['false_healthy']:>14} {row['fallback']:>9}"
        )
    return lines


def render(document: dict[str, Any]) -> str:
    """The human-readable tables and the totals line."""
    lines = [
        *_table("by incident family", document["by_family"]),
        "",
        *_table("by question kind", document["by_kind"]),
        "",
        f"{document['model']}: {document['correct']}/{document['questions']} correct "
        f"({document['accuracy'] * 100:.1f}%), false-healthy {document['false_healthy']} "
        f"({document['false_healthy_rate'] * 100:.1f}% of incident questions), fallback "
        f"{document['fallback_rate'] * 100:.1f}%, ungrounded claims "
        f"{document['ungrounded_claims']}, median {document['median_latency_ms']} ms "
        f"per turn, fixtures {', '.join(document['fixtures'])}",
    ]
    return "\n".join(lines)


def json_line(document: dict[str, Any]) -> str:
    """The document as one compact JSON line."""
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"), sort_keys=False)


class Answered(Protocol):
    """A case's final answer, whichever generator asked it."""

    case: Any
    flow: str
    fallback: bool
    answer: str | None


def answer_lines(results: Sequence[Answered], model: str) -> list[str]:
    """A JSON line per case: model, case id, flow, fallback and the final answer."""
    return [
        json.dumps(
            {
                "model": model,
                "case": r.case.id,
                "flow": r.flow,
                "fallback": r.fallback,
                "answer": r.answer,
            },
            ensure_ascii=False,
        )
        for r in results
    ]


def failures(results: Sequence[CaseResult], limit: int = 40) -> list[str]:
    """A line per wrong answer: case, kind, question, why, the answer's first line."""
    lines = []
    for result in [r for r in results if not r.verdict.correct][:limit]:
        headline = (result.answer or "").strip().splitlines()[:1] or ["(no answer)"]
        lines.append(
            f"{result.case.id} [{result.case.kind}/{result.case.expected.family}] "
            f"{' / '.join(result.case.turns)!r}: {result.verdict.reason} | {headline[0][:120]}"
        )
    return lines
