"""The engine is standard-library only: importing it pulls in no third-party package."""

from __future__ import annotations

import subprocess
import sys

FORBIDDEN = ("flask", "peewee", "redis", "openai", "pydantic", "tenacity", "webapp")


def test_importing_the_engine_imports_no_third_party_package() -> None:
    code = (
        "import sys, diagnosis_graph, diagnosis_graph.workflow.topology, "
        "diagnosis_graph.workflow.trace\n"
        f"print(','.join(m for m in {FORBIDDEN!r} if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == ""


def test_engine_modules_only_import_the_standard_library() -> None:
    code = (
        "import sys, diagnosis_graph\n"
        "std = sys.stdlib_module_names\n"
        "bad = sorted({m.split('.')[0] for m in sys.modules} - set(std) "
        "- {'diagnosis_graph', '__main__', 'sitecustomize', 'usercustomize'})\n"
        "print(','.join(b for b in bad if not b.startswith('_')))"
    )
    result = subprocess.run(
        [sys.executable, "-I", "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]),
    )
    assert result.stdout.strip() == ""
