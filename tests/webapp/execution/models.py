"""Chat models that keep a run in flight: slow (every call waits) or gated (until released)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from webapp.llm.offline import OfflineChatModel
from webapp.llm.types import ChatResult, Message


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
