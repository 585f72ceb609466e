"""What a test does when the machine lacks something it needs (a server, a binary, a feature)."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def unavailable(message: str) -> NoReturn:
    """Skip the test, or fail it under CI (``CI=1``), where everything it needs must be present."""
    if os.environ.get("CI") == "1":
        pytest.fail(f"CI=1: {message}", pytrace=False)
    pytest.skip(message)
