"""Fixtures: both variants generated once per session, and backends over them."""

from __future__ import annotations

from pathlib import Path

import pytest

from demo.generate import generate
from demo.system import VARIANTS
from webapp.demo.backend import DemoTelemetryBackend


@pytest.fixture(scope="session")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """variant -> a folder with that variant generated with the default seed."""
    folders = {}
    for variant in VARIANTS:
        folder = tmp_path_factory.mktemp(f"demo-{variant}")
        generate(folder, variant=variant)
        folders[variant] = folder
    return folders


@pytest.fixture(scope="session")
def backends(generated: dict[str, Path]) -> dict[str, DemoTelemetryBackend]:
    """variant -> a backend over its generated folder."""
    return {variant: DemoTelemetryBackend(folder) for variant, folder in generated.items()}
