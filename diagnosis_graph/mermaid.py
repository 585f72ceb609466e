"""Mermaid rendering of a compiled graph."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
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


def render_mermaid(
    nodes: Mapping[str, Any],
    edges: Mapping[str, Target],
    taken: Iterable[tuple[str, str]] = (),
) -> str:
    """Return a ``flowchart TD`` with fixed edges solid and conditional edges dotted.

    ``taken`` lists ``(from, to)`` node pairs a run went through (``START``/``END`` allowed);
    those edges are drawn thick and red and the nodes they touch are shaded.
    """
    path = set(taken)
    lines = ["flowchart TD", f"    {mermaid_id(START)}([START])"]
    lines += [f'    {mermaid_id(name)}["{_label(name)}"]' for name in nodes]
    lines.append(f"    {mermaid_id(END)}([END])")
    highlighted: list[int] = []
    index = 0
    for source, target in edges.items():
        if isinstance(target, Branch):
            grouped: dict[str, list[str]] = {}
            for key, name in target.mapping.items():
                grouped.setdefault(name, []).append(str(key))
            arrows = [(name, f"-.->|{_label(' / '.join(keys))}|") for name, keys in grouped.items()]
        else:
            arrows = [(target, "-->")]
        for name, arrow in arrows:
            lines.append(f"    {mermaid_id(source)} {arrow} {mermaid_id(name)}")
            if (source, name) in path:
                highlighted.append(index)
            index += 1
    if path:
        visited = sorted({mermaid_id(n) for pair in path for n in pair})
        lines.append("    classDef taken fill:#fde2e1,stroke:#c0392b,stroke-width:2px")
        lines.append(f"    class {','.join(visited)} taken")
    if highlighted:
        lines.append(
            f"    linkStyle {','.join(map(str, highlighted))} stroke:#c0392b,stroke-width:3px"
        )
    return "\n".join(lines) + "\n"
