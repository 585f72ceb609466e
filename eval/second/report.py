"""The second generator's tables (by question kind, by mechanism) and its JSON figures."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

from eval.second.run import Result


def _row(results: Sequence[Result]) -> dict[str, Any]:
    n = len(results)
    correct = sum(r.verdict.correct for r in results)
    right = [r for r in results if r.verdict.correct and r.case.expect.outcome == "incident"]
    return {
        "n": n,
        "correct": correct,
        "accuracy": round(correct / n, 3) if n else 0.0,
        "false_healthy": sum(r.verdict.false_healthy for r in results),
        "right_incidents": len(right),
        "complete": sum(r.verdict.complete for r in right),
        "fallback": sum(r.fallback for r in results),
    }


def _group(results: Sequence[Result], key: Callable[[Result], str]) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[Result]] = {}
    for result in results:
        groups.setdefault(key(result), []).append(result)
    return {name: _row(groups[name]) for name in sorted(groups)}


def _mechanism(result: Result) -> str:
    expect = result.case.expect
    if expect.outcome != "incident":
        return expect.outcome
    return "+".join(sorted(t.mechanism for t in expect.truths))


def summary(results: Sequence[Result], model: str) -> dict[str, Any]:
    """The second generator's figures for one model."""
    overall = _row(results)
    latencies = [ms for r in results for ms in r.latencies_ms]
    right = overall["right_incidents"]
    return {
        "model": model,
        "worlds": sorted({r.case.world for r in results}),
        "questions": overall["n"],
        "correct": overall["correct"],
        "accuracy": overall["accuracy"],
        "false_healthy": overall["false_healthy"],
        "right_incidents": right,
        "complete": overall["complete"],
        "completeness": round(overall["complete"] / right, 3) if right else 0.0,
        "fallback_rate": round(overall["fallback"] / overall["n"], 3) if overall["n"] else 0.0,
        "median_latency_ms": round(statistics.median(latencies), 1) if latencies else None,
        "by_kind": _group(results, lambda r: r.case.kind),
        "by_mechanism": _group(results, _mechanism),
    }


def _table(title: str, rows: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        f"{title:<34} {'n':>4} {'correct':>8} {'acc':>6} {'false-healthy':>14} "
        f"{'complete':>9} {'fallback':>9}"
    ]
    for name, row in rows.items():
        complete = f"{row['complete']}/{row['right_incidents']}" if row["right_incidents"] else "-"
        lines.append(
            f"{name:<34} {row['n']:>4} {row['correct']:>8} {row['accuracy'] * 100:>5.0f}% "
            f"{row['false_healthy']:>14} {complete:>9} {row['fallback']:>9}"
        )
    return lines


def render(document: dict[str, Any]) -> str:
    """The second generator's tables and totals line."""
    lines = [
        "second generator (eval.second): systems, mechanisms, log styles and questions of its own",
        "",
        *_table("by question kind", document["by_kind"]),
        "",
        *_table("by mechanism (or expected outcome)", document["by_mechanism"]),
        "",
        f"{document['model']} on the second generator: {document['correct']}/"
        f"{document['questions']} correct ({document['accuracy'] * 100:.1f}%), complete "
        f"{document['complete']}/{document['right_incidents']} right incident answers "
        f"({document['completeness'] * 100:.1f}%), false-healthy {document['false_healthy']}, "
        f"fallback {document['fallback_rate'] * 100:.1f}%, median "
        f"{document['median_latency_ms']} ms per turn, worlds {', '.join(document['worlds'])}",
    ]
    return "\n".join(lines)


def failures(results: Sequence[Result]) -> list[str]:
    """A line per wrong answer: case, kind, question, why, the answer's first sentence."""
    lines = []
    for result in results:
        if result.verdict.correct:
            continue
        body = [
            x
            for x in (result.answer or "").splitlines()
            if x.strip() and not x.startswith(("#", "**"))
        ]
        lines.append(
            f"{result.case.id} [{result.case.kind}/{_mechanism(result)}] "
            f"{' / '.join(result.case.turns)!r}: {result.verdict.reason} | "
            f"{(body or ['(no answer)'])[0][:140]}"
        )
    return lines
