"""The copy-paste Prometheus + Alertmanager files of docs/stack.md are valid for the real tools."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.webapp.telemetry.servers import PROMTOOL, binary

STACK_PAGE = Path(__file__).resolve().parents[3] / "docs" / "stack.md"
AMTOOL = "/usr/bin/amtool"
FILES = ("prometheus.yml", "rules.yml", "alertmanager.yml")


def copy_paste_files() -> dict[str, str]:
    """Each file of the "Copy-paste: Prometheus + Alertmanager" section: the YAML block after
    the paragraph that names it."""
    section = STACK_PAGE.read_text().split("## Copy-paste: Prometheus + Alertmanager", 1)[1]
    section = section.split("\n## ", 1)[0]
    found = {}
    for name in FILES:
        match = re.search(rf"`{re.escape(name)}`.*?```yaml\n(.*?)```", section, re.S)
        assert match, f"docs/stack.md shows no {name}"
        found[name] = match.group(1)
    return found


def _check(argv: list[str], cwd: Path) -> None:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_documented_configs_pass_promtool_and_amtool(tmp_path: Path) -> None:
    for name, text in copy_paste_files().items():
        (tmp_path / name).write_text(text)
    _check([binary(PROMTOOL), "check", "config", "prometheus.yml"], tmp_path)
    _check([binary(PROMTOOL), "check", "rules", "rules.yml"], tmp_path)
    _check([binary(AMTOOL), "check-config", "alertmanager.yml"], tmp_path)
    rules = (tmp_path / "rules.yml").read_text()
    assert "by (service)" in rules  # the alert keeps the label that names its service
