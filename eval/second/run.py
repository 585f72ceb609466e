"""The second generator's worlds as fixtures, asked through the same chat path as the first's.

Each world folder is opened the way a user points the product at it:
``TELEMETRY_BACKEND=live TELEMETRY_DIR=<world> LOG_DIR=<world>/logs``
(``webapp.wiring.telemetry_backend`` builds the backend from those settings); then a diagnoser
with in-memory audit rows, as ``webapp.wiring.offline_diagnoser`` builds one. Cases run like the
first generator's (``eval.runner.converse``) and are scored by ``eval.second.scoring``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from eval.runner import Turns, converse
from eval.second.cases import Case
from eval.second.questions import world_cases
from eval.second.scoring import Verdict, score
from eval.second.signals import world_series
from eval.second.truth import world_truths
from eval.second.world import World, build_world
from eval.second.writer import log_dir, write_world
from webapp.config import Settings
from webapp.diagnosis import Diagnoser
from webapp.llm.types import ChatModel
from webapp.persistence.memory_audit import MemoryAudit
from webapp.tools.doc_tracker import RetrievedDocTracker
from webapp.wiring import knowledge_for, telemetry_backend


@dataclass
class WorldFixture:
    """A written world and its cases."""

    world: World
    folder: Path
    cases: list[Case]


@dataclass
class Result:
    """One case's final answer and its verdict."""

    case: Case
    verdict: Verdict
    answer: str | None
    flow: str
    fallback: bool
    latencies_ms: list[float]


def world_fixture(seed: int, root: Path) -> WorldFixture:
    """World ``seed`` written under ``root`` with its cases."""
    world = build_world(seed)
    folder = root / world.label
    write_world(world, folder)
    series = world_series(world)
    return WorldFixture(world, folder, world_cases(world, world_truths(world, series), series))


def world_diagnoser(folder: Path, model: ChatModel) -> Diagnoser:
    """A diagnoser on a written world, configured as a user would configure the app."""
    environ = {
        "TELEMETRY_BACKEND": "live",
        "TELEMETRY_DIR": str(folder),
        "LOG_DIR": str(log_dir(folder)),
    }
    backend = telemetry_backend(Settings.from_env(environ))
    return Diagnoser(
        model=model,
        backend=backend,
        knowledge=knowledge_for(backend),
        audit=MemoryAudit(),
        tracker=RetrievedDocTracker(),
    )


def run_worlds(fixtures: Sequence[WorldFixture], model: Callable[[], ChatModel]) -> list[Result]:
    """Every case of every world, each world with a fresh model and diagnoser."""
    results = []
    for fixture in fixtures:
        turns = Turns(world_diagnoser(fixture.folder, model()))
        for case in fixture.cases:
            reply = converse(turns, case.id, case.turns, case.history)
            verdict = score(case, reply.answer, fixture.world.system)
            results.append(
                Result(case, verdict, reply.answer, reply.flow, reply.fallback, reply.latencies_ms)
            )
    return results
