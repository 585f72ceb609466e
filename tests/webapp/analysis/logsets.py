"""The log-template regression set (``logs/``, one CSV a system) and grouping accuracy over it.

Shared by ``test_logpatterns`` (a floor on the accuracy) and ``bench/analysis.py`` (the figures).
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from webapp.analysis.logpatterns import mine_patterns

LOGS = Path(__file__).parent / "logs"


def systems() -> dict[str, tuple[list[str], list[str]]]:
    """Each system's true templates and messages (same order), by name."""
    found = {}
    for path in sorted(LOGS.glob("*.csv")):
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        found[path.stem] = ([r["template"] for r in rows], [r["message"] for r in rows])
    return found


def records(messages: Sequence[str]) -> list[dict[str, Any]]:
    """The messages as log records one second apart (each line keeps its own timestamp)."""
    start = datetime(2024, 1, 1, tzinfo=timezone.utc)
    return [
        {"timestamp": start + timedelta(seconds=n), "message": message, "level": "INFO"}
        for n, message in enumerate(messages)
    ]


def mined_groups(lines: Sequence[dict[str, Any]]) -> list[int]:
    """The template number ``mine_patterns`` gives each record of ``records(...)``."""
    times = [line["timestamp"] for line in lines]
    group_of = {}
    for n, pattern in enumerate(mine_patterns(lines, None)):
        group_of.update(dict.fromkeys(pattern.times, n))
    return [group_of[moment] for moment in times]


def grouping_accuracy(truth: Sequence[object], groups: Sequence[object]) -> float:
    """Share of lines whose group holds exactly the lines of their true event."""
    true_sets: dict[object, set[int]] = defaultdict(set)
    found_sets: dict[object, set[int]] = defaultdict(set)
    for n, (event, found) in enumerate(zip(truth, groups, strict=True)):
        true_sets[event].add(n)
        found_sets[found].add(n)
    right = sum(
        true_sets[event] == found_sets[found] for event, found in zip(truth, groups, strict=True)
    )
    return right / len(truth)
