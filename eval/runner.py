"""Runs cases through the product's real chat path and scores them.

A fixture is a dataset folder plus its cases. Each case runs as the web app runs a chat turn
with ``mode=auto``: ``FlowRouter`` picks the flow, the complex flow is
``webapp.wiring.offline_diagnoser`` (the diagnosis graph over ``DemoTelemetryBackend`` on the
folder, in-memory audit) and the simple flow is ``SimpleChat`` with the same tools; for a
follow-up the earlier turns go in as session history, exactly as ``ChatService`` feeds them.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from eval.questions import Case
from eval.scoring import Verdict, score
from webapp.diagnosis import Diagnoser, new_run_id
from webapp.llm.types import ChatModel
from webapp.persistence.history import HistoryMessage
from webapp.services.routing import COMPLEX, FlowRouter
from webapp.services.simple import SimpleChat
from webapp.telemetry import TelemetryBackend, TelemetryError
from webapp.wiring import offline_diagnoser

ModelFactory = Callable[[], ChatModel]


@dataclass
class Fixture:
    """A dataset folder and the cases asked of it."""

    label: str
    folder: Path
    cases: list[Case]
    build: Callable[[ChatModel], Diagnoser] | None = None


@dataclass
class CaseResult:
    """One case's final answer, its score and what the run says about itself."""

    case: Case
    verdict: Verdict
    answer: str | None
    flow: str
    fallback: bool
    latencies_ms: list[float] = field(default_factory=list)
    ungrounded: int | None = None


def ungrounded_claims(evaluation: Any) -> int | None:
    """Ungrounded claims a run reports in its self evaluation; None when it reports none.

    Any key naming ungrounded claims counts (an integer, or a list of them), wherever the
    evidence contract puts it.
    """
    found: list[int] = []

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            for key, value in node.items():
                if "ungrounded" in str(key).lower():
                    if isinstance(value, bool):
                        continue
                    if isinstance(value, int):
                        found.append(value)
                        continue
                    if isinstance(value, list):
                        found.append(len(value))
                        continue
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(evaluation)
    return max(found) if found else None


class Turns:
    """The chat path over one diagnoser: router, complex and simple flow, shared audit."""

    def __init__(self, diagnoser: Diagnoser) -> None:
        self.diagnoser = diagnoser
        backend = self.diagnoser.backend
        self.router = FlowRouter(backend.services, lambda: _alert_names(backend))
        audit = self.diagnoser.audit
        self.simple = SimpleChat(diagnoser.model, audit, lambda: self.diagnoser.tools)
        self.aliases: dict[str, list[str]] = {s: [] for s in backend.services()}
        self.aliases.update(backend.service_aliases())
        _warm(self.diagnoser)

    def ask(
        self, question: str, session_id: str, history: list[HistoryMessage]
    ) -> tuple[str | None, str, bool, float, int | None]:
        """``(answer, flow, fallback, latency ms, ungrounded claims)`` of one turn."""
        flow = self.router.route(question, "auto")
        run_id = new_run_id()
        started = time.perf_counter()
        if flow == COMPLEX:
            result = self.diagnoser.diagnose(
                question,
                session_id=session_id,
                run_id=run_id,
                history=[m.to_dict() for m in history],
            )
            elapsed = (time.perf_counter() - started) * 1000
            fallback = result.run.degraded or result.run.status != "SUCCESS"
            return result.answer, flow, fallback, elapsed, ungrounded_claims(result.self_evaluation)
        reply = self.simple.answer(question, history, session_id=session_id, run_id=run_id)
        elapsed = (time.perf_counter() - started) * 1000
        return reply.answer, flow, reply.answer is None, elapsed, None


def _alert_names(backend: TelemetryBackend) -> list[str]:
    try:
        return [a["alert_name"] for a in backend.query_alerts(state="all")["alerts"]]
    except TelemetryError:  # a replay's backend has no alerts of its own
        return []


def _warm(diagnoser: Diagnoser) -> None:
    """Load the dataset once so no case pays for reading the files."""
    backend = diagnoser.backend
    now = backend.reference_time()
    with contextlib.suppress(TelemetryError):
        backend.query_logs(service=backend.services()[0], start=now - timedelta(minutes=1), end=now)


def _stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class Reply:
    """The last turn's answer of a conversation and what the runs say about themselves."""

    answer: str | None
    flow: str
    fallback: bool
    latencies_ms: list[float]
    ungrounded: int | None


def converse(
    turns: Turns, session_id: str, questions: Sequence[str], history: Sequence[tuple[str, str]]
) -> Reply:
    """Every question in one session after ``history``; the last answer is the reply."""
    earlier = [
        HistoryMessage(role, content, None, _stamp())  # type: ignore[arg-type]
        for role, content in history
    ]
    latencies: list[float] = []
    answer: str | None = None
    flow, fallback, ungrounded = COMPLEX, False, None
    for turn in questions:
        answer, flow, fallback, elapsed, ungrounded = turns.ask(turn, session_id, earlier)
        latencies.append(elapsed)
        if answer:
            earlier += [
                HistoryMessage("user", turn, None, _stamp()),
                HistoryMessage("assistant", answer, None, _stamp()),
            ]
    return Reply(answer, flow, fallback, latencies, ungrounded)


def run_case(turns: Turns, case: Case) -> CaseResult:
    """Every turn of ``case`` in one session; the last answer is scored."""
    reply = converse(turns, case.id, case.turns, case.history)
    verdict = score(case, reply.answer, turns.aliases)
    return CaseResult(
        case,
        verdict,
        reply.answer,
        reply.flow,
        reply.fallback,
        reply.latencies_ms,
        reply.ungrounded,
    )


def _diagnoser(fixture: Fixture, model: ChatModel) -> Diagnoser:
    """The diagnoser a fixture runs on: its own builder, else the offline one on its folder."""
    return fixture.build(model) if fixture.build else offline_diagnoser(fixture.folder, model)


def run_fixture(fixture: Fixture, model: ChatModel) -> list[CaseResult]:
    """Every case of ``fixture`` against ``model``."""
    turns = Turns(_diagnoser(fixture, model))
    return [run_case(turns, case) for case in fixture.cases]


def run_all(fixtures: Sequence[Fixture], model: ModelFactory) -> list[CaseResult]:
    """Every fixture, each with a fresh model and diagnoser."""
    results: list[CaseResult] = []
    for fixture in fixtures:
        results += run_fixture(fixture, model())
    return results
