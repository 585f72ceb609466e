"""Writers of the dataset files only the generators write (the demo's, the eval worlds'): series of
values one step apart, runbooks, the folder's size. The format and its shared writers are
``webapp.demo.files``."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from webapp.demo.files import iso_seconds


@dataclass(frozen=True)
class MetricRow:
    """One series of ``metrics.json``: values one step apart from the dataset's start."""

    service: str
    metric: str
    unit: str
    labels: Mapping[str, str]
    values: Sequence[float]


def write_metrics(
    path: Path, start: datetime, step_seconds: int, rows: Iterable[MetricRow]
) -> None:
    """``metrics.json``: one compact line per series."""
    lines = []
    stamps: list[str] = []
    for row in rows:
        while len(stamps) < len(row.values):
            stamps.append(iso_seconds(start + timedelta(seconds=step_seconds * len(stamps))))
        document = {
            "service": row.service,
            "metric": row.metric,
            "unit": row.unit,
            "labels": dict(row.labels),
            "points": [[stamp, value] for stamp, value in zip(stamps, row.values, strict=False)],
        }
        lines.append(json.dumps(document, separators=(",", ":")))
    body = ",\n".join(lines)
    path.write_text(f'{{"step_seconds":{step_seconds},"series":[\n{body}\n]}}\n', encoding="utf-8")


def write_runbooks(folder: Path, runbooks: Mapping[str, str]) -> None:
    """``runbooks/*.md``; Markdown files not in ``runbooks`` are removed."""
    folder.mkdir(exist_ok=True)
    for stale in folder.glob("*.md"):
        if stale.name not in runbooks:
            stale.unlink()
    for filename, text in runbooks.items():
        (folder / filename).write_text(text, encoding="utf-8")


def folder_size(out: Path) -> int:
    """Bytes of every file under ``out``."""
    return sum(path.stat().st_size for path in out.rglob("*") if path.is_file())
