"""Real-format API answers (shapes of Loki 3, Elasticsearch 8/OpenSearch 2, Prometheus 2,
Alertmanager 0.25), served by pytest-httpserver on 127.0.0.1 where no real server runs here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RECORDED = Path(__file__).resolve().parent / "recorded"


def recorded(name: str) -> Any:
    """One recorded answer, parsed."""
    return json.loads((RECORDED / name).read_text(encoding="utf-8"))
