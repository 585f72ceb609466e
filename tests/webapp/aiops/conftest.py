"""Fixtures of the AIOps tests: the renamed dataset, built once."""

from __future__ import annotations

from pathlib import Path

import pytest

from demo.generate import generate


@pytest.fixture(scope="session")
def renamed_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The renamed / reworded / time-shifted variant of the demo dataset."""
    out = tmp_path_factory.mktemp("renamed-aiops")
    generate(out, variant="renamed")
    return out


# The API fixtures: the Flask app on every database backend, Redis history when configured.
from tests.webapp.api.conftest import app, demo_backend, history  # noqa: E402, F401
