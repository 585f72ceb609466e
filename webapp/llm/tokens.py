"""Limits of model calls: prompt token budgets per call and per diagnosis (checked before a
call, against a plain estimate) and the run's deadline, carried by one :class:`Ledger`;
``max_tokens`` per schema, and prices.

The estimate counts four ASCII characters as one token and any other character as one token
(no tokenizer is a dependency: each OpenAI-compatible model has its own vocabulary).
"""

from __future__ import annotations

import contextvars
import json
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from diagnosis_graph.workflow.outcomes import Outcome

from .types import LLMError, Message

DEFAULT = "default"
DEFAULT_MAX_TOKENS: Mapping[str, int] = {
    "planner_plan": 1024,
    "executor_evidence_v2": 2048,
    "verifier_output": 1024,
    "composer_output": 1536,
    DEFAULT: 1024,
}
DEFAULT_RUN_DEADLINE_SECONDS = 600.0


def max_tokens_for(schema_name: str | None, limit: int | None = None) -> int:
    """``limit`` (``LLM_MAX_TOKENS``) when set, else the default for an answer in ``schema_name``
    (None: a plain or tool-calling round)."""
    return limit or DEFAULT_MAX_TOKENS.get(schema_name or DEFAULT, DEFAULT_MAX_TOKENS[DEFAULT])


DEFAULT_PROMPT_TOKENS = 12_000
DEFAULT_RUN_TOKENS = 150_000
#: Framing a chat template adds around each message (role, separators).
MESSAGE_OVERHEAD = 4


def count_text(text: str) -> int:
    """Estimated tokens of ``text``: 4 ASCII characters a token, any other character one."""
    extra_bytes = len(text.encode("utf-8")) - len(text)
    # A non-ASCII character is 2-4 UTF-8 bytes; CJK (the common case) is 3: extra 2 each.
    wide = min(len(text), (extra_bytes + 1) // 2)
    return (len(text) - wide + 3) // 4 + wide


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def estimate_message(message: Message) -> int:
    """Estimated tokens of one chat message."""
    total = MESSAGE_OVERHEAD + count_text(str(message.get("content") or ""))
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        total += count_text(str(function.get("name", "")) + str(function.get("arguments", "")))
    return total


def estimate(
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, Any]] | None = None,
    response_format: Mapping[str, Any] | None = None,
) -> int:
    """Estimated prompt tokens of one chat-completions request."""
    total = sum(estimate_message(m) for m in messages)
    if tools:
        total += count_text(_dumps(list(tools)))
    if response_format:
        total += count_text(_dumps(response_format))
    return total


@dataclass(frozen=True)
class TokenBudget:
    """Prompt tokens one call may send, and one diagnosis (all its calls) may send."""

    per_call: int = DEFAULT_PROMPT_TOKENS
    per_run: int = DEFAULT_RUN_TOKENS


class Ledger:
    """The prompt tokens one diagnosis has spent, against its budget, and the deadline of its
    run (shared by its agents)."""

    def __init__(self, budget: TokenBudget | None = None, deadline: float | None = None) -> None:
        self.budget = budget or TokenBudget()
        #: Absolute deadline of the run on ``time.monotonic``; None: no deadline.
        self.deadline = deadline
        self.spent = 0
        self._lock = threading.Lock()

    def room(self) -> int:
        """The largest prompt the next call may send."""
        return max(0, min(self.budget.per_call, self.budget.per_run - self.spent))

    def admit(self, need: int) -> None:
        """Raise ``deadline`` once the run's deadline has passed, ``token_budget`` when a prompt
        of ``need`` tokens may not be sent."""
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise _over("the run's deadline has passed (RUN_DEADLINE_SECONDS)", "deadline")
        if need > self.budget.per_call:
            raise _over(
                f"the prompt needs about {need:,} tokens, over the budget of "
                f"{self.budget.per_call:,} per call (LLM_PROMPT_TOKEN_BUDGET)"
            )
        if self.spent + need > self.budget.per_run:
            raise _over(
                f"the run has spent {self.spent:,} of its {self.budget.per_run:,} prompt "
                f"tokens and the next call needs about {need:,} (LLM_RUN_TOKEN_BUDGET)"
            )

    def charge(self, tokens: int) -> None:
        """Count a sent prompt against the run."""
        with self._lock:
            self.spent += tokens


def _over(message: str, kind: str = "token_budget") -> LLMError:
    return LLMError(
        f"call not sent: {message}", outcome=Outcome.NON_RETRYABLE_FAILED, attempts=0, kind=kind
    )


_ledger: contextvars.ContextVar[Ledger | None] = contextvars.ContextVar(
    "llm_token_ledger", default=None
)


def current_ledger() -> Ledger:
    """The current run's ledger; outside a run, a fresh one (the per-call budget still holds)."""
    return _ledger.get() or Ledger()


@contextmanager
def run_ledger(ledger: Ledger) -> Iterator[Ledger]:
    """Make ``ledger`` the current run's inside the block."""
    token = _ledger.set(ledger)
    try:
        yield ledger
    finally:
        _ledger.reset(token)


@dataclass(frozen=True)
class PriceTable:
    """Dollars per million prompt and completion tokens, by model name (``*``: any other);
    ``LLM_PRICES`` is this table as JSON."""

    prices: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        """The dollars a call cost, or None when the table does not price ``model``."""
        entry = self.prices.get(model) or self.prices.get("*")
        if entry is None:
            return None
        return (prompt_tokens * entry[0] + completion_tokens * entry[1]) / 1_000_000
