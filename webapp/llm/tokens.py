"""Token budgets: a prompt budget per model call and one per diagnosis, enforced before a call.

Counting: a plain, deterministic estimate, not a model's tokenizer. No tokenizer is a dependency
(the product talks to any OpenAI-compatible model, each with its own vocabulary, and a tokenizer
package would download vocabularies at run time), so :func:`estimate` counts four ASCII
characters as one token and every other character (CJK, accents) as one token each, over the
text a request carries: each message's content and tool calls (plus a few tokens of framing per
message), the tool definitions and the ``response_format`` as JSON. On English prose and JSON
this is within about 15% of the OpenAI and Llama tokenizers, and above them on CJK text, so a
prompt estimated within the budget fits a context of the budget's size.

Budgets (``LLM_PROMPT_TOKEN_BUDGET``, ``LLM_RUN_TOKEN_BUDGET``): a call whose estimated prompt
is over the per-call budget, or over what is left of its diagnosis's budget, is not sent. It
fails as ``token_budget`` (NON_RETRYABLE_FAILED: the same prompt would fail again), its step is
recorded FAILED with the estimate and the setting to raise, and the workflow answers with its
fallback, which names that cause. The ReAct loop first compacts its conversation to fit
(:mod:`webapp.llm.compact`). A diagnosis's spending is the sum of its calls' prompt tokens (the
server's count when it reports one, else the estimate, which the step then records), held in a
:class:`Ledger` that the agent invoker keeps per diagnosis (a run's question; an AIOps run
diagnoses one per alert) and makes current for each agent's calls.

Cost (``LLM_PRICES``): a table of ``model=input/output`` prices in dollars per million prompt
and completion tokens, comma-separated; ``*`` names any model not listed
(``LLM_PRICES="gpt-4o-mini=0.15/0.60,*=1/4"``). A run's cost is the sum over its steps priced
by the table; without a table (or for a model it does not price) no cost is recorded.
"""

from __future__ import annotations

import contextvars
import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from diagnosis_graph.workflow.outcomes import Outcome

from .types import LLMError, Message

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

    def __post_init__(self) -> None:
        if self.per_call < 1 or self.per_run < 1:
            raise ValueError("token budgets must be positive")


class Ledger:
    """The prompt tokens one diagnosis has spent, against its budget (shared by its agents)."""

    def __init__(self, budget: TokenBudget | None = None) -> None:
        self.budget = budget or TokenBudget()
        self.spent = 0
        self._lock = threading.Lock()

    def room(self) -> int:
        """The largest prompt the next call may send."""
        return max(0, min(self.budget.per_call, self.budget.per_run - self.spent))

    def admit(self, need: int) -> None:
        """Raise ``token_budget`` when a prompt of ``need`` tokens may not be sent."""
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


def _over(message: str) -> LLMError:
    return LLMError(
        f"call not sent: {message}",
        outcome=Outcome.NON_RETRYABLE_FAILED,
        attempts=0,
        kind="token_budget",
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
    """Dollars per million prompt and completion tokens, by model name (``*``: any other)."""

    prices: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    @classmethod
    def parse(cls, raw: str) -> PriceTable:
        """``"gpt-4o-mini=0.15/0.60,*=1/4"`` as a table; ValueError naming a bad entry."""
        prices: dict[str, tuple[float, float]] = {}
        for part in filter(None, (p.strip() for p in raw.split(","))):
            model, _, pair = part.rpartition("=")
            prompt, slash, completion = pair.partition("/")
            try:
                entry = (float(prompt), float(completion))
            except ValueError:
                entry = (-1.0, -1.0)
            if not model.strip() or not slash or min(entry) < 0:
                raise ValueError(f"{part!r} is not model=input/output (dollars per 1M tokens)")
            prices[model.strip()] = entry
        return cls(prices)

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        """The dollars a call cost, or None when the table does not price ``model``."""
        entry = self.prices.get(model) or self.prices.get("*")
        if entry is None:
            return None
        return (prompt_tokens * entry[0] + completion_tokens * entry[1]) / 1_000_000
