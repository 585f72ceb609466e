"""Recorded runs as fixtures: a folder of ``flask --app webapp replay --export`` documents.

Each document is replayed with the model under test; its tools answer from the recording
(``webapp.replay``), so the case runs on exactly the data the original run saw. A document
may carry ``"expected"`` (``{"outcome": "incident", "causes": [[culprit, family], ...]}``, or
``healthy``/``unknown`` with ``service``, or ``alerts`` with ``alerts``); without it the case
is scored as "the replay reaches the recorded conclusion's headline".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eval.questions import Case, Expected
from eval.runner import Fixture
from webapp.diagnosis import Diagnoser
from webapp.llm.types import ChatModel
from webapp.replay import RecordedBackend, Recording, replay_diagnoser


def _expected(document: dict[str, Any]) -> Expected:
    spec = document.get("expected")
    if not spec:
        headline = (document.get("answer") or "").strip().splitlines()[:1]
        return Expected("recorded", service=headline[0] if headline else "")
    causes = tuple((str(c), str(f)) for c, f in spec.get("causes", []))
    return Expected(
        str(spec["outcome"]),
        causes,
        spec.get("service"),
        tuple(spec.get("alerts", [])),
    )


def _builder(document: dict[str, Any]) -> Any:
    def build(model: ChatModel) -> Diagnoser:
        recording = Recording.from_invocations(document["invocations"])
        return replay_diagnoser(
            model, RecordedBackend(document), recording, document.get("tool_definitions")
        )

    return build


def recorded_fixtures(folder: Path) -> list[Fixture]:
    """One fixture per ``*.json`` document in ``folder``, sorted by name."""
    fixtures = []
    for path in sorted(folder.glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        turns = (
            *[m["content"] for m in document.get("history", []) if m["role"] == "user"],
            document["question"],
        )
        case = Case(f"rec-{path.stem}", "recorded", "recorded", turns, _expected(document))
        fixtures.append(Fixture(f"rec-{path.stem}", path, [case], _builder(document)))
    return fixtures
