"""Imports point one way: no cycle between webapp's packages, the API reaches the store through
services, the engine never imports the app and the app never imports the demo generator.

Read from the source with ``ast`` (every import, also those inside functions), not by importing.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from graphlib import CycleError, TopologicalSorter
from itertools import pairwise
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WEBAPP = ROOT / "webapp"
#: The API module that may import persistence: it maps the store's errors to HTTP statuses.
API_ERRORS = WEBAPP / "api" / "errors.py"


def imported(path: Path) -> Iterator[str]:
    """The absolute dotted names ``path`` imports (``from a import b`` gives ``a`` and ``a.b``)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    package = parts[:-1]  # of a module and of an __init__ alike
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                stem = package[: len(package) - node.level + 1]
                base = ".".join([*stem, *([node.module] if node.module else [])])
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def layer(name: str) -> str | None:
    """The webapp package or top-level module a dotted name is in, if any."""
    head, _, rest = name.partition(".")
    first = rest.split(".")[0]
    if head != "webapp" or not first:
        return None
    exists = (WEBAPP / first).is_dir() or (WEBAPP / f"{first}.py").is_file()
    return first if exists else None


def webapp_modules() -> list[Path]:
    return sorted(p for p in WEBAPP.rglob("*.py") if p != WEBAPP / "__init__.py")


def package_graph() -> dict[str, dict[str, set[str]]]:
    """For each webapp package, the packages it imports and from which files."""
    graph: dict[str, dict[str, set[str]]] = {}
    for path in webapp_modules():
        own = path.relative_to(WEBAPP).parts[0].removesuffix(".py")
        edges = graph.setdefault(own, {})
        for name in imported(path):
            other = layer(name)
            if other is not None and other != own:
                edges.setdefault(other, set()).add(str(path.relative_to(ROOT)))
    return graph


def test_the_import_graph_is_read() -> None:
    graph = package_graph()
    assert {"api", "services", "persistence", "telemetry", "analysis", "tools"} <= set(graph)
    assert "persistence" in graph["services"] and "telemetry" in graph["tools"]


def test_no_cycle_between_webapp_packages() -> None:
    graph = package_graph()
    try:
        tuple(TopologicalSorter({name: set(edges) for name, edges in graph.items()}).static_order())
    except CycleError as error:
        cycle = error.args[1]  # each one imported by the next
        steps = [f"{b} imports {a}: {sorted(graph[b][a])}" for a, b in pairwise(cycle)]
        raise AssertionError("import cycle: " + "; ".join(steps)) from None


def test_the_api_reaches_the_store_through_services() -> None:
    found = {
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((WEBAPP / "api").rglob("*.py"))
        if path != API_ERRORS
        for name in imported(path)
        if layer(name) == "persistence"
    }
    assert found == set()


def test_the_engine_never_imports_the_app() -> None:
    found = {
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((ROOT / "diagnosis_graph").rglob("*.py"))
        if "build" not in path.relative_to(ROOT).parts
        for name in imported(path)
        if name.split(".")[0] in {"webapp", "eval", "bench"}
    }
    assert found == set()


def test_the_app_never_imports_the_demo_generator() -> None:
    found = {
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted(WEBAPP.rglob("*.py"))
        for name in imported(path)
        if name.split(".")[0] == "demo"
    }
    assert found == set()
