"""``flask --app webapp replay`` through Flask's CLI runner, on a recorded run in the database."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from flask import Flask

pytestmark = pytest.mark.parametrize("database", ["sqlite"], indirect=True)


def test_replay_prints_old_and_new_conclusions_and_exports_a_fixture(
    app: Flask, tmp_path: Path
) -> None:
    runner = app.test_cli_runner()
    asked = runner.invoke(args=["ask", "Why is catalog-service slow since 11:15?"])
    session_id, run_id = re.search(r"session: (\S+)  run: (\S+)", asked.output).groups()  # type: ignore[union-attr]
    target = tmp_path / "run.json"
    result = runner.invoke(args=["replay", session_id, run_id, "--export", str(target)])
    assert result.exit_code == 0, result.output
    assert "recorded" in result.output and "| replayed" in result.output
    assert re.search(r"served from the recording: [1-9]\d*, misses: 0", result.output)
    rows = [line for line in result.output.splitlines() if " | " in line]
    assert rows[1].startswith("catalog-service degraded")
    assert any("cache eviction" in row for row in rows[1:])
    old, new = zip(*(row.split(" | ", 1) for row in rows[1:]), strict=True)
    assert [o.strip() for o in old] == [n.strip() for n in new]  # same data, same model
    document = json.loads(target.read_text(encoding="utf-8"))
    assert document["format"] == "recorded-run-v1" and document["run_id"] == run_id
    assert document["invocations"] and document["tool_definitions"]


def test_replay_of_an_unknown_run_fails_cleanly(app: Flask) -> None:
    result = app.test_cli_runner().invoke(args=["replay", "sess-x", "run-y"])
    assert result.exit_code == 1 and "not found" in result.output
