"""What each service does: the titles of the knowledge documents that name exactly one service,
without that name ("Sends the nightly invoices"). An index that cannot
list its documents gives none."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from typing import Any

#: A description longer than this is cut (a title is a line, not a page).
MAX_DESCRIPTION = 200


def service_descriptions(services: Sequence[str], index: Any) -> dict[str, list[str]]:
    """Titles of the knowledge documents that name one service each, by service."""
    lister = getattr(index, "documents", None)
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
