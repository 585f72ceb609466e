"""Prompts kept as Markdown files next to the code, versioned by content."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

PROMPT_DIR = Path(__file__).with_name("prompts")
PROMPT_SET = "diagnosis-prompts-v2"


@cache
def system_prompt(agent: str) -> str:
    """The system prompt of ``agent`` (``planner``, ``executor``, ``verifier``, ...)."""
    return (PROMPT_DIR / f"{agent}.md").read_text(encoding="utf-8")


@cache
def prompt_version() -> str:
    """``diagnosis-prompts-v2+<hash>``: changes whenever any prompt file changes."""
    digest = hashlib.sha256()
    for path in sorted(PROMPT_DIR.glob("*.md")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return f"{PROMPT_SET}+{digest.hexdigest()[:8]}"
