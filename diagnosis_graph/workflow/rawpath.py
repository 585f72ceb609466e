"""The ``raw_path`` grammar (``$``, ``.name``, ``["key"]``, ``[N]``) and its evaluation."""

from __future__ import annotations

import json
import re
from typing import Any

_NAME = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)")
_INDEX = re.compile(r"\[(0|[1-9][0-9]*)\]")
_KEY = re.compile(r'\[("(?:[^"\\]|\\.)*")\]')


class RawPathError(ValueError):
    """``raw_path`` does not follow the grammar."""


class PathNotFound(LookupError):
    """``raw_path`` is valid but names nothing in the output."""


def parse_raw_path(path: Any) -> tuple[str | int, ...]:
    """Split ``$.a["b"][0]`` into ``("a", "b", 0)``; raise RawPathError on any other syntax."""
    if not isinstance(path, str) or not path.startswith("$"):
        raise RawPathError("a raw_path starts with $")
    steps: list[str | int] = []
    pos = 1
    while pos < len(path):
        if match := _NAME.match(path, pos):
            steps.append(match.group(1))
        elif match := _INDEX.match(path, pos):
            steps.append(int(match.group(1)))
        elif match := _KEY.match(path, pos):
            try:
                steps.append(json.loads(match.group(1)))
            except json.JSONDecodeError:
                raise RawPathError(f"bad string key at {pos}") from None
        else:
            raise RawPathError(f"unexpected {path[pos]!r} at {pos}")
        pos = match.end()
    return tuple(steps)


def locate(document: Any, path: str) -> tuple[Any, dict[str, Any] | None]:
    """The value at ``path`` and the nearest object that holds it (directly or via arrays)."""
    value = document
    holder: dict[str, Any] | None = None
    for step in parse_raw_path(path):
        if isinstance(step, int):
            if not isinstance(value, list) or step >= len(value):
                raise PathNotFound(path)
        elif not isinstance(value, dict) or step not in value:
            raise PathNotFound(path)
        if isinstance(value, dict):
            holder = value
        value = value[step]
    return value, holder


def is_leaf(value: Any) -> bool:
    """A string, number, boolean or null, or an array of those (a metric point)."""
    if isinstance(value, dict):
        return False
    if isinstance(value, list):
        return not any(isinstance(item, (dict, list)) for item in value)
    return True
