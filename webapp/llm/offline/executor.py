"""The offline executor: run the plan, follow what the outputs point at, bind claims to them.

Rounds (each a model call in the ReAct loop): 1) the plan's queries; 2) follow-ups the outputs
suggest - metrics whose names share words with the new log patterns, the log lines around the
onset (looking for a change), and the runbooks for the pattern; 3) the final evidence JSON.
Claims state only what an output shows and bind to the exact path and text that shows it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import timedelta
from functools import cache
from typing import Any

from .analysis import Pattern, Shift, change_events, linked_metrics, metric_shift, new_patterns
from .conversation import Catalog, Done
from .question import iso, parse_time
from .window import investigation_window

MAX_FOLLOW_UP_ROUNDS = 2
_ACTION_SECTION = re.compile(r"mitigat|remediat|fix|action|resolution|recover", re.I)


class Investigation:
    """What the tool results of one executor conversation show."""

    def __init__(self, request: dict[str, Any], catalog: Catalog, done: Sequence[Done]) -> None:
        self.request = request
        self.catalog = catalog
        self.done = [d for d in done if d.status == "SUCCESS"]
        self.window = investigation_window(request, done)
        self.split = iso(self.window.split)
        self.services = _ordered(
            d.arguments.get("service")
            for d in self.done
            if d.tool in ("query_logs", "query_metrics")
        )

    def _logs(self, service: str, level: str, *, after: bool) -> Done | None:
        for d in self.done:
            args = d.arguments
            if (
                d.tool == "query_logs"
                and args.get("service") == service
                and args.get("level") == level
            ):
                starts_at_split = args.get("start") == self.split
                if starts_at_split == after and args.get("end") != args.get("start"):
                    return d
        return None

    @cache  # noqa: B019 - an Investigation lives for one model call
    def patterns(self, service: str) -> list[Pattern]:
        """The two most frequent new ERROR patterns and new WARN patterns of ``service``."""
        found = []
        for level in ("ERROR", "WARN"):
            after = self._logs(service, level, after=True)
            if after is not None:
                found += new_patterns(after, self._logs(service, level, after=False))[:2]
        return found

    @cache  # noqa: B019
    def shifts(self, service: str) -> list[Shift]:
        """Metrics of ``service`` that moved across the split."""
        found = []
        for d in self.done:
            if d.tool == "query_metrics" and d.arguments.get("service") == service:
                shift = metric_shift(d, self.split)
                if shift is not None:
                    found.append(shift)
        return found

    def onset(self, service: str) -> str:
        """When the trouble began: the earliest metric onset, else the question's split."""
        onsets = [s.onset_time for s in self.shifts(service) if s.onset_time]
        return min(onsets) if onsets else self.split

    def dependencies(self, service: str) -> list[tuple[Pattern, str]]:
        """Other known services that ``service``'s new patterns name."""
        found: dict[str, Pattern] = {}
        for pattern in self.patterns(service):
            for other in self.catalog.services:
                if other != service and other.lower() in pattern.example.lower():
                    found.setdefault(other, pattern)
        return [(pattern, other) for other, pattern in found.items()]

    def follow_ups(self) -> list[dict[str, Any]]:
        """Queries the results so far call for, minus those already made."""
        wanted: list[dict[str, Any]] = []
        for service in self.services:
            patterns = self.patterns(service)
            texts = [p.example for p in patterns]
            for metric in linked_metrics(texts, self.catalog.metrics_of(service))[:3]:
                wanted.append(
                    {
                        "tool": "query_metrics",
                        "arguments": {
                            "service": service,
                            "metric": metric,
                            "start": iso(self.window.before()[0]),
                            "end": iso(self.window.end),
                        },
                    }
                )
            full = self.request.get("mode") != "EVIDENCE_GAP_ONLY"
            if patterns and full and service == self.services[0]:
                onset = parse_time(self.onset(service)) or self.window.split
                wanted.append(
                    {
                        "tool": "query_logs",
                        "arguments": {
                            "service": service,
                            "level": "INFO",
                            "start": iso(onset - timedelta(minutes=3)),
                            "end": iso(onset + timedelta(minutes=1)),
                            "limit": 200,
                        },
                    }
                )
                query = _knowledge_query(patterns[0], self.shifts(service))
                wanted.append(
                    {"tool": "lookup_knowledge", "arguments": {"query": query, "top_k": 5}}
                )
        title = self.runbook_title()
        if title and self.runbook_actions() is None:
            wanted.append(
                {
                    "tool": "lookup_knowledge",
                    "arguments": {"query": f"{title} mitigation remediation", "top_k": 3},
                }
            )
        made = [(d.tool, d.arguments) for d in self.done]
        return [
            w
            for w in wanted
            if (w["tool"], w["arguments"]) not in made and self.catalog.has(w["tool"])
        ]

    def _knowledge(self) -> list[tuple[Done, list[dict[str, Any]]]]:
        return [
            (d, list((d.result or {}).get("documents") or []))
            for d in self.done
            if d.tool == "lookup_knowledge" and (d.result or {}).get("documents")
        ]

    def runbook_title(self) -> str | None:
        """The title of the best runbook of the first lookup that found one."""
        for _, documents in self._knowledge():
            return str(documents[0].get("title", "")).split(" > ")[0] or None
        return None

    def runbook_actions(self) -> tuple[Done, int, list[str]] | None:
        """The action steps of that runbook, from whichever lookup returned them."""
        title = self.runbook_title()
        for done, documents in self._knowledge():
            for index, doc in enumerate(documents):
                heading = str(doc.get("title", ""))
                if heading.split(" > ")[0] == title and _ACTION_SECTION.search(heading):
                    steps = [
                        line.strip()[2:].strip()
                        for line in str(doc.get("content", "")).splitlines()
                        if re.match(r"\s*[-*]\s", line)
                    ]
                    if steps:
                        return done, index, steps
        return None


def _ordered(values: Any) -> list[str]:
    seen: list[str] = []
    for value in values:
        if value and value not in seen:
            seen.append(value)
    return seen


def _knowledge_query(pattern: Pattern, shifts: Sequence[Shift]) -> str:
    words = re.findall(r"[A-Za-z][A-Za-z]{2,}", pattern.template)
    symptom = " ".join(f"{s.metric.replace('_', ' ')} {s.direction}" for s in shifts[:2])
    return " ".join(dict.fromkeys(words[:24])) + " " + symptom


class ClaimWriter:
    """Numbers claims and keeps their statements in the shapes the verifier and composer read."""

    def __init__(self, first: int = 1) -> None:
        self.claims: list[dict[str, Any]] = []
        self.next = first

    def add(
        self, statement: str, bindings: list[tuple[str, str, Any]], critical: bool = True
    ) -> None:
        """Add a claim bound to ``(invocation_id, raw_path, excerpt)`` triples."""
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
    return (
        value
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    )


def _fmt(value: float) -> str:
    # The same text the gatekeeper renders the value as, so the statement quotes it exactly.
    return json.dumps(value)


def write_claims(inv: Investigation, writer: ClaimWriter) -> None:
    """Claims for every service the results cover, in the order they were investigated."""
    for service in inv.services:
        shifts, patterns = inv.shifts(service), inv.patterns(service)
        for shift in shifts:
            _shift_claim(service, shift, writer)
        for pattern in patterns:
            bindings: list[tuple[str, str, Any]] = [
                (
                    pattern.invocation_id,
                    f"$.records[{pattern.record_index}].message",
                    pattern.example,
                ),
                (pattern.invocation_id, "$.total", pattern.total_after),
            ]
            if pattern.before_invocation_id:
                bindings.append((pattern.before_invocation_id, "$.total", pattern.total_before))
            writer.add(
                f"{service} logged {pattern.total_after} {pattern.level} lines since {inv.split} "
                f"(vs {pattern.total_before} in the hour before); a new one reads: "
                f'"{pattern.example}"',
                bindings,
            )
        for pattern, other in inv.dependencies(service):
            excerpt = _around(pattern.example, other)
            writer.add(
                f"{service}'s new {pattern.level} lines name {other} as the dependency "
                f'involved: "{excerpt}"',
                [(pattern.invocation_id, f"$.records[{pattern.record_index}].message", excerpt)],
            )
        _change_claims(inv, service, patterns, writer)
        if not shifts and not patterns:
            _healthy_claims(inv, service, writer)
    _runbook_claims(inv, writer)


def _shift_claim(service: str, shift: Shift, writer: ClaimWriter) -> None:
    """``<service> <metric> rose from <v> <unit> at <t> to <peak> <unit>, starting around <t>``.

    Every number and time stated is in a bound leaf: the baseline point, the summary's
    extreme and the first point past the midpoint (the onset).
    """
    bindings: list[tuple[str, str, Any]] = [
        (shift.invocation_id, f"$.series[0].points[{shift.baseline_index}]", shift.baseline_point),
        (shift.invocation_id, shift.extreme_path, shift.extreme),
    ]
    onset = ""
    if shift.onset_index is not None and shift.onset_point is not None:
        bindings.append(
            (shift.invocation_id, f"$.series[0].points[{shift.onset_index}]", shift.onset_point)
        )
        onset = f", starting around {shift.onset_time}"
    writer.add(
        f"{service} {shift.metric} {shift.direction} from {_fmt(shift.baseline)} {shift.unit} "
        f"at {shift.baseline_point[0]} to {_fmt(shift.extreme)} {shift.unit}{onset}",
        bindings,
    )


def _around(message: str, name: str, width: int = 60) -> str:
    """The text around ``name`` in ``message``, cut at whitespace so it starts and ends on a
    token boundary (the gatekeeper's rule for a substring excerpt)."""
    at = message.lower().index(name.lower())
    start, end = max(0, at - width), min(len(message), at + len(name) + width)
    while start > 0 and not message[start - 1].isspace():
        start -= 1
    while end < len(message) and not message[end].isspace():
        end += 1
    return message[start:end].strip()


def _change_claims(
    inv: Investigation, service: str, patterns: list[Pattern], writer: ClaimWriter
) -> None:
    if not patterns:
        return
    for d in inv.done:
        if (
            d.tool == "query_logs"
            and d.arguments.get("service") == service
            and d.arguments.get("level") == "INFO"
        ):
            for index, message in change_events(d)[:1]:
                writer.add(
                    f'{service} logged a change shortly before the new errors began: "{message}"',
                    [(d.invocation_id, f"$.records[{index}].message", message)],
                )


def _healthy_claims(inv: Investigation, service: str, writer: ClaimWriter) -> None:
    errors = inv._logs(service, "ERROR", after=True)
    if errors is not None:
        total = int((errors.result or {}).get("total", 0))
        writer.add(
            f"{service} had {total} ERROR lines since {inv.split}",
            [(errors.invocation_id, "$.total", total)],
        )
    for d in inv.done:
        if d.tool == "query_metrics" and d.arguments.get("service") == service:
            summary = (d.result or {}).get("summary") or {}
            if "min" in summary and "max" in summary:
                writer.add(
                    f"{service} {d.arguments.get('metric')} stayed between "
                    f"{_fmt(summary['min'])} and {_fmt(summary['max'])} "
                    f"{summary.get('unit', '')} from {d.arguments.get('start')} to "
                    f"{d.arguments.get('end')}",
                    [
                        (d.invocation_id, "$.summary.min", summary["min"]),
                        (d.invocation_id, "$.summary.max", summary["max"]),
                    ],
                )


def _runbook_claims(inv: Investigation, writer: ClaimWriter) -> None:
    title = inv.runbook_title()
    if not title:
        return
    for done, documents in inv._knowledge():
        if str(documents[0].get("title", "")).split(" > ")[0] == title:
            writer.add(
                f'The symptoms match the runbook "{title}"',
                [(done.invocation_id, "$.documents[0].title", title)],
            )
            break
    actions = inv.runbook_actions()
    if actions:
        done, index, steps = actions
        for step in steps[:3]:
            writer.add(
                f"The runbook recommends: {step}",
                [(done.invocation_id, f"$.documents[{index}].content", step)],
                critical=False,
            )


def final_evidence(
    request: dict[str, Any], catalog: Catalog, done: Sequence[Done]
) -> dict[str, Any]:
    """The ``executor_evidence_v2`` snapshot: earlier verified claims plus new ones."""
    earlier = list(request.get("verified_claims") or [])
    numbers = [int(c["claim_id"][1:]) for c in earlier if re.fullmatch(r"C\d+", c["claim_id"])]
    writer = ClaimWriter(first=max(numbers, default=0) + 1)
    investigation = Investigation(request, catalog, done)
    write_claims(investigation, writer)
    keep = [{k: c[k] for k in ("claim_id", "statement", "critical", "bindings")} for c in earlier]
    claims = keep + writer.claims
    return {
        "version": "executor_evidence_v2",
        "claims": claims,
        "summary": f"{len(claims)} claims from {len(done)} tool results about "
        f"{', '.join(investigation.services) or 'no service'}.",
    }
