"""The README stays a front page, its links and `make` targets exist, and the docs site builds."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").glob("*.md"))
MAKEFILE = (ROOT / "Makefile").read_text()


def make_targets() -> set[str]:
    """The targets the Makefile declares phony: every command a reader is meant to run."""
    phony = re.search(r"^\.PHONY:((?:.*\\\n)*.*)$", MAKEFILE, re.M)
    assert phony, "the Makefile declares no .PHONY targets"
    return set(phony.group(1).replace("\\\n", " ").split())


def test_the_readme_is_a_front_page_of_at_most_15_kb() -> None:
    assert len(README.read_bytes()) <= 15 * 1024


def test_the_readme_links_resolve_to_files() -> None:
    links = re.findall(r"\]\(((?!https?://)[^)#\s]+)", README.read_text())
    assert links, "the README links to no page"
    assert [link for link in links if not (ROOT / link).is_file()] == []


def test_every_make_target_the_docs_name_exists() -> None:
    named = set()
    for path in [README, *PAGES]:
        named |= set(re.findall(r"\bmake ((?:[a-z]+-)*[a-z]+)\b", path.read_text()))
    assert {"run", "test"} <= named
    assert named - make_targets() == set()


def test_make_help_lists_every_target() -> None:
    recipe = MAKEFILE.split("\nhelp:\n", 1)[1].split("\n\n", 1)[0]
    listed = set(re.findall(r"make ([a-z-]+)", recipe))
    assert make_targets() - {"help"} <= listed


def test_the_docs_site_builds_strictly(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "benchmarks" / "index.html").is_file()
