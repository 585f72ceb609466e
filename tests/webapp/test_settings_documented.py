"""Every variable the settings read is in ``.env.example`` once and in the documentation's tables."""

from __future__ import annotations

import re
from pathlib import Path

from webapp.config import HTTP_SOURCES, Settings

ROOT = Path(__file__).resolve().parents[2]
#: The per-source variables the "Connect your stack" table (docs/stack.md) writes as ``<P>_...``.
PER_SOURCE = re.compile(
    "^(" + "|".join(s.upper() for s in HTTP_SOURCES) + ")_"
    r"(BEARER_TOKEN|USERNAME|PASSWORD|TLS_VERIFY|CA_BUNDLE|TIMEOUT_SECONDS)$"
)


def variables() -> list[str]:
    return [name.upper() for name in Settings.model_fields]


def test_env_example_sets_every_variable_once() -> None:
    text = (ROOT / ".env.example").read_text()
    for name in variables():
        assert len(re.findall(rf"^{name}=", text, re.M)) == 1, name


def test_the_documented_tables_name_every_variable() -> None:
    configuration = (ROOT / "docs" / "configuration.md").read_text()
    stack = (ROOT / "docs" / "stack.md").read_text().split("\n## ", 1)[0]
    for name in variables():
        match = PER_SOURCE.match(name)
        if match:
            assert f"`<P>_{match.group(2)}`" in stack and f"`{match.group(1)}`" in stack, name
        elif name.split("_")[0] in ("PROMETHEUS", "ALERTMANAGER", "LOKI", "ELASTICSEARCH"):
            assert f"`{name}`" in stack, name
        else:
            assert f"`{name}`" in configuration or f"`{name}`" in stack, name
