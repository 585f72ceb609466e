"""Mermaid rendering of a compiled graph."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from .graph import END, START, Branch, Target

_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_]")
_UNSAFE_LABEL = re.compile(r'[|"<>\n\r{}\[\]]')
_RED = "stroke:#c0392b"


def _id(name: str) -> str:
    return name if name in (START, END) else "n_" + _UNSAFE_ID.sub("_", name)


def _arrows(target: Target) -> list[tuple[str, str]]:
    """``(next node, arrow)`` pairs: solid for an edge, dotted and labelled for a router's."""
    if not isinstance(target, Branch):
        return [(target, "-->")]
    keys: dict[str, list[str]] = {}
    for key, name in target.mapping.items():
        keys.setdefault(name, []).append(str(key))
    return [(name, f"-.->|{_UNSAFE_LABEL.sub(' ', ' / '.join(k))}|") for name, k in keys.items()]


def render_mermaid(
    nodes: Mapping[str, Any], edges: Mapping[str, Target], taken: Iterable[tuple[str, str]]
) -> str:
    """Return a ``flowchart TD`` with fixed edges solid and conditional edges dotted.

    ``taken`` lists ``(from, to)`` node pairs a run went through (``START``/``END`` allowed);
    those edges are drawn thick and red and the nodes they touch are shaded.
    """
    path = set(taken)
    lines = ["flowchart TD", f"    {START}([START])"]
    lines += [f'    {_id(name)}["{_UNSAFE_LABEL.sub(" ", name)}"]' for name in nodes]
    lines.append(f"    {END}([END])")
    pairs = [(source, name, arrow) for source, t in edges.items() for name, arrow in _arrows(t)]
    lines += [f"    {_id(a)} {arrow} {_id(b)}" for a, b, arrow in pairs]
    if path:
        visited = sorted({_id(n) for pair in path for n in pair})
        lines.append(f"    classDef taken fill:#fde2e1,{_RED},stroke-width:2px")
        lines.append(f"    class {','.join(visited)} taken")
    highlighted = [str(i) for i, (a, b, _) in enumerate(pairs) if (a, b) in path]
    if highlighted:
        lines.append(f"    linkStyle {','.join(highlighted)} {_RED},stroke-width:3px")
    return "\n".join(lines) + "\n"
