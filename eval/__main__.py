"""``python -m eval``: generate worlds, ask every case, print the tables and one JSON line.

Two generators: the first (``eval.world``, five worlds from seeds, the demo, recorded runs) and
the second (``eval.second``: other domains, mechanisms, log styles and questions, written without
the analyser's cause catalogue). Each model's tables are printed, the second's after the
first's, then one JSON line: the first's figures with the second's under ``"second"``.

Options: ``--generator first|second|both`` (default both), ``--worlds N`` (default 5),
``--questions N`` per world (default 50), ``--seed S`` (first world's seed of both generators,
default 1), ``--second-worlds N`` (default 4, one per domain), ``--no-demo``, ``--recorded DIR``
(exported runs to replay as fixtures), ``--keep DIR`` (write the worlds there instead of a
temporary folder), ``--failures`` (list every wrong answer), ``--answers FILE`` (write every
case's final answer there, one JSON line per case, to compare two builds' answers). With
``OPENAI_API_KEY`` set the same cases also run against that model (``LLM_MODEL``,
``OPENAI_BASE_URL``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from eval.fixtures import demo_fixture, generated_fixture
from eval.recorded import recorded_fixtures
from eval.report import answer_lines, failures, json_line, render, summary
from eval.runner import Fixture, ModelFactory, run_all
from eval.second import report as second_report
from eval.second.run import WorldFixture, run_worlds, world_fixture
from webapp.config import Settings
from webapp.llm.offline import MODEL_NAME, OfflineChatModel
from webapp.wiring import chat_model


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m eval", description=__doc__)
    parser.add_argument("--generator", choices=("first", "second", "both"), default="both")
    parser.add_argument("--worlds", type=int, default=5)
    parser.add_argument("--second-worlds", type=int, default=4)
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-demo", action="store_true")
    parser.add_argument("--recorded", type=Path, default=None)
    parser.add_argument("--keep", type=Path, default=None)
    parser.add_argument("--failures", action="store_true")
    parser.add_argument("--answers", type=Path, default=None)
    return parser


def _models() -> list[tuple[str, ModelFactory]]:
    models: list[tuple[str, ModelFactory]] = [(MODEL_NAME, OfflineChatModel)]
    if os.environ.get("OPENAI_API_KEY"):
        settings = Settings.from_env()
        models.append((settings.llm_model, lambda: chat_model(settings)))
    return models


def _first_fixtures(args: argparse.Namespace, root: Path) -> list[Fixture]:
    if args.generator == "second":
        return []
    fixtures: list[Fixture] = [
        generated_fixture(args.seed + index, index, root, args.questions)
        for index in range(args.worlds)
    ]
    if not args.no_demo:
        fixtures.append(demo_fixture())
    if args.recorded:
        fixtures += recorded_fixtures(args.recorded)
    return fixtures


def _second_fixtures(args: argparse.Namespace, root: Path) -> list[WorldFixture]:
    if args.generator == "first":
        return []
    return [world_fixture(args.seed + index, root) for index in range(args.second_worlds)]


def evaluate(args: argparse.Namespace, root: Path, out: list[str]) -> list[dict[str, object]]:
    """Build the fixtures under ``root``, run every model, append the printed lines to ``out``."""
    fixtures = _first_fixtures(args, root)
    worlds = _second_fixtures(args, root)
    documents = []
    answers: list[str] = []
    for name, factory in _models():
        document: dict[str, object] = {}
        if fixtures:
            results = run_all(fixtures, factory)
            answers += answer_lines(results, name)
            document = summary(results, name)
            out += [render(document), ""]
            if args.failures:
                out += [*failures(results, limit=10_000), ""]
        if worlds:
            found = run_worlds(worlds, factory)
            answers += answer_lines(found, name)
            second = second_report.summary(found, name)
            out += [second_report.render(second), ""]
            if args.failures:
                out += [*second_report.failures(found), ""]
            document = {**document, "model": name, "second": second}
        out.append(json_line(document))
        documents.append(document)
    if args.answers:
        args.answers.write_text("".join(f"{line}\n" for line in answers), encoding="utf-8")
    return documents


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    args = _parser().parse_args(argv)
    lines: list[str] = []
    if args.keep:
        evaluate(args, args.keep, lines)
    else:
        with tempfile.TemporaryDirectory(prefix="eval-worlds-") as tmp:
            evaluate(args, Path(tmp), lines)
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
