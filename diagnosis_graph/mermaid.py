"""Mermaid rendering of a compiled graph."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .graph import END, START, Branch, Target

_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_]")
_UNSAFE_LABEL = re.compile(r'[|"<>\n\r{}\[\]]')


def mermaid_id(name: str) -> str:
    """Return the Mermaid node id used for ``name`` (stable, alphanumeric)."""
    if name == START:
        return "__start__"
    if name == END:
        return "__end__"
    return "n_" + _UNSAFE_ID.sub("_", name)


def _label(text: str) -> str:
    return _UNSAFE_LABEL.sub(" ", text)


def render_mermaid(nodes: Mapping[str, Any], edges: Mapping[str, Target]) -> str:
    """Return a ``flowchart TD`` with fixed edges solid and conditional edges dotted."""
    lines = ["flowchart TD", f"    {mermaid_id(START)}([START])"]
    lines += [f'    {mermaid_id(name)}["{_label(name)}"]' for name in nodes]
    lines.append(f"    {mermaid_id(END)}([END])")
    for source, target in edges.items():
        if isinstance(target, Branch):
            grouped: dict[str, list[str]] = {}
            for key, name in target.mapping.items():
                grouped.setdefault(name, []).append(str(key))
            for name, keys in grouped.items():
                label = _label(" / ".join(keys))
                lines.append(f"    {mermaid_id(source)} -.->|{label}| {mermaid_id(name)}")
        else:
            lines.append(f"    {mermaid_id(source)} --> {mermaid_id(target)}")
    return "\n".join(lines) + "\n"
