"""The engine README's example, run as written there."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "diagnosis_graph" / "README.md"


def test_the_engine_readme_example_runs_and_prints_what_it_says() -> None:
    (code,) = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(README), "exec"), {})
    lines = printed.getvalue().splitlines()
    final = "{'count': 3, 'events': [{'seen': 0}, {'seen': 1}, {'seen': 2}]}"
    assert lines[:4] == [final, "1 work work", "2 work work", "3 work __end__"]
    assert lines[4] == final  # the resumed thread returns the state of its last checkpoint
    assert lines[5] == "flowchart TD" and "    n_work -.->|done| __end__" in lines
