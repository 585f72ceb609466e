"""Run configuration: identity, metadata and the recursion limit of one graph run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

DEFAULT_RECURSION_LIMIT = 25

#: Metadata keys that are business identity and survive into a nested graph's config.
IDENTITY_KEYS = ("session_id", "run_id")


@dataclass(frozen=True)
class RunConfig:
    """Immutable configuration of one run.

    ``thread_id`` names the run (the diagnosis workflow uses the run id), ``metadata`` is
    read-only, and ``recursion_limit`` bounds the number of node executions.
    """

    thread_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)
    recursion_limit: int = DEFAULT_RECURSION_LIMIT

    def __post_init__(self) -> None:
        limit = self.recursion_limit
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"recursion_limit must be a positive integer, got {limit!r}")
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))

    def child(
        self, *, thread_id: str | None = None, recursion_limit: int = DEFAULT_RECURSION_LIMIT
    ) -> RunConfig:
        """The config of a nested graph: the parent's thread id unless given, and of the
        metadata only ``session_id``/``run_id`` (never resume, checkpoint or feedback keys)."""
        identity = {key: self.metadata[key] for key in IDENTITY_KEYS if key in self.metadata}
        return RunConfig(thread_id or self.thread_id, identity, recursion_limit)
