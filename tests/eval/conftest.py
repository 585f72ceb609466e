"""One small set of generated worlds per test session (every family appears in one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.families import FAMILIES
from eval.second.run import WorldFixture, world_fixture
from eval.telemetry import write_world
from eval.world import World, build_world

# Two worlds cover all nine families.
FAMILY_SPLIT = (list(FAMILIES)[:5], list(FAMILIES)[5:])


@pytest.fixture(scope="session")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[World, Path]]:
    """``(world, folder)`` pairs, generated once."""
    out = []
    for seed, families in zip((11, 12), FAMILY_SPLIT, strict=True):
        world = build_world(seed, families)
        folder = tmp_path_factory.mktemp(f"world-{seed}")
        write_world(world, folder)
        out.append((world, folder))
    return out


@pytest.fixture(scope="session")
def second_worlds(tmp_path_factory: pytest.TempPathFactory) -> dict[int, WorldFixture]:
    """The second generator's worlds 1 (streaming video, self-hosted log styles) and 2 (food
    delivery, managed databases), written once with their cases."""
    root = tmp_path_factory.mktemp("second")
    return {seed: world_fixture(seed, root) for seed in (1, 2)}
