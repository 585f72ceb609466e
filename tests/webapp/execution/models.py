"""Chat models that keep a run in flight: slow (every call waits) or gated (until released)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from webapp.llm.offline import OfflineChatModel
from webapp.llm.offline.conversation import schema_name
from webapp.llm.types import ChatResult, Message
from webapp.persistence.context import current_run_or_none


class SlowModel:
    """The offline model, each call ``delay`` seconds late (an LLM's latency)."""

    def __init__(self, delay: float) -> None:
        self.inner = OfflineChatModel()
        self.delay = delay

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    def complete(self, messages: Sequence[Message], **kwargs: Any) -> ChatResult:
        time.sleep(self.delay)
        return self.inner.complete(messages, **kwargs)


class GatedModel:
    """The offline model; every call waits until the gate opens (``started`` is set first)."""

    def __init__(self) -> None:
        self.inner = OfflineChatModel()
        self.gate = threading.Event()
        self.started = threading.Event()

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    def complete(self, messages: Sequence[Message], **kwargs: Any) -> ChatResult:
        self.started.set()
        self.gate.wait(timeout=60)
        return self.inner.complete(messages, **kwargs)


class HugeOutputModel:
    """The offline model, but its first reply carries ``size`` bytes of text (a runaway LLM)."""

    def __init__(self, size: int) -> None:
        self.inner = OfflineChatModel()
        self.size = size

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    def complete(self, messages: Sequence[Message], **kwargs: Any) -> ChatResult:
        result = self.inner.complete(messages, **kwargs)
        return ChatResult(
            "x" * self.size,
            result.tool_calls,
            result.model,
            result.prompt_tokens,
            result.completion_tokens,
        )


class LoggedModel:
    """The offline model; every call appends ``run_id, contract, hash of its messages`` to
    ``log_path`` (shared by worker processes), and the first call for contract ``kill_at``
    SIGKILLs this process (once: ``marker`` is created first)."""

    def __init__(self, log_path: str, kill_at: str = "", marker: str = "") -> None:
        self.inner = OfflineChatModel()
        self.log_path = log_path
        self.kill_at = kill_at
        self.marker = marker

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    def complete(self, messages: Sequence[Message], **kwargs: Any) -> ChatResult:
        name = schema_name(kwargs.get("response_format")) or "plain"
        run = current_run_or_none()
        digest = hashlib.sha256(json.dumps(messages, sort_keys=True, default=str).encode())
        with open(self.log_path, "a") as log:
            log.write(f"{run.run_id if run else '-'}\t{name}\t{digest.hexdigest()[:16]}\n")
        if name == self.kill_at:
            kill_once(self.marker)
        return self.inner.complete(messages, **kwargs)


def kill_once(marker: str) -> None:
    """SIGKILL this process unless ``marker`` exists (it is created first)."""
    try:
        with open(marker, "x"):
            pass
    except FileExistsError:
        return
    os.kill(os.getpid(), signal.SIGKILL)


def calls(log_path: Path, run_id: str) -> list[tuple[str, str]]:
    """``(contract, message hash)`` of every model call ``run_id`` made, in order."""
    if not log_path.exists():
        return []
    rows = [line.split("\t") for line in log_path.read_text().splitlines()]
    return [(name, digest) for run, name, digest in rows if run == run_id]
