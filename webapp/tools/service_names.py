"""What each service does, from the catalog: the words people use for a service.

Besides its aliases (the backend's ``service_aliases()``: its dataset's and
``SERVICE_ALIASES``), a service is described by the title of each knowledge document that
names exactly one service ("Saves continue-watching positions from every player
(progress-svc) / 保存...") without that name: the words a business question uses ("positions
stopped saving"), matched by ``names.described_services``.

Computed once when the tools are built; a knowledge index that cannot list its documents
gives no descriptions (never an error: names still resolve by alias).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from typing import Any

#: A description longer than this is cut (a title is a line, not a page).
MAX_DESCRIPTION = 200


def service_descriptions(services: Sequence[str], index: Any) -> dict[str, list[str]]:
    """Titles of the knowledge documents that name one service each, by service."""
    lister = getattr(index, "list_documents", None)
    if not callable(lister) or not services:
        return {}
    try:
        titles = [str(doc.get("title") or "") for doc in lister()]
    except (sqlite3.Error, OSError):
        return {}
    patterns = {s: re.compile(rf"\(?(?<![\w-]){re.escape(s)}(?![\w-])\)?", re.I) for s in services}
    found: dict[str, list[str]] = {}
    for title in titles:
        named = [s for s, pattern in patterns.items() if pattern.search(title)]
        if len(named) != 1:
            continue
        text = re.sub(r"\s+", " ", patterns[named[0]].sub(" ", title)).strip(" -/:")
        if text:
            found.setdefault(named[0], []).append(text[:MAX_DESCRIPTION])
    return found
