"""Generation limits: ``max_tokens`` per structured output, temperature, the run deadline.

``max_tokens`` defaults, by the schema the agent answers with (``LLM_MAX_TOKENS`` overrides
them: one number for every agent, or ``name=number`` pairs separated by commas, where a name is
a schema name below or ``default``):

* ``planner_plan`` 1024 - a summary, hypotheses and up to a dozen queries;
* ``executor_evidence_v2`` 2048 - the evidence snapshot quotes excerpts of tool outputs;
* ``verifier_output`` 1024 - one assessment per claim;
* ``composer_output`` 1536 - the answer's summary, conclusions, limitations and
  recommendations (the product renders the Markdown);
* ``default`` 1024 - everything else (tool-calling rounds, the simple assistant).

Without a limit a small local model can generate until its context is full (8,000 tokens and
five minutes for "hello" were observed), so a limit is always sent.

The run deadline (``RUN_DEADLINE_SECONDS``) is held in a context variable for the run's thread:
the agent invoker sets it when a run's first agent starts, every model call's wall-time budget
is cut to what is left of it, and an agent that starts after it has passed fails at once.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

DEFAULT = "default"
DEFAULT_MAX_TOKENS: Mapping[str, int] = {
    "planner_plan": 1024,
    "executor_evidence_v2": 2048,
    "verifier_output": 1024,
    "composer_output": 1536,
    DEFAULT: 1024,
}
DEFAULT_RUN_DEADLINE_SECONDS = 600.0

#: Absolute deadline (on the client's monotonic clock) of the run whose call this is.
_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "llm_run_deadline", default=None
)


def parse_max_tokens(raw: str) -> dict[str, int]:
    """``"2048"`` or ``"planner_plan=800,default=1200"`` as a per-schema table (merged)."""
    table = dict(DEFAULT_MAX_TOKENS)
    text = raw.strip()
    if not text:
        return table
    if "=" not in text:
        value = _positive(text)
        return {name: value for name in table}
    for part in text.split(","):
        name, _, number = part.partition("=")
        if not name.strip() or not number.strip():
            raise ValueError(f"{part!r} is not name=number")
        table[name.strip()] = _positive(number)
    return table


def _positive(text: str) -> int:
    value = int(text.strip())
    if value < 1:
        raise ValueError(f"{text!r} is not a positive integer")
    return value


def max_tokens_for(table: Mapping[str, int], schema_name: str | None) -> int:
    """The limit for an answer in ``schema_name`` (None: a plain or tool-calling round)."""
    if schema_name is not None and schema_name in table:
        return table[schema_name]
    return table.get(DEFAULT, DEFAULT_MAX_TOKENS[DEFAULT])


def current_deadline() -> float | None:
    """The running run's deadline, or None outside a run."""
    return _deadline.get()


@contextmanager
def run_deadline(deadline: float | None) -> Iterator[None]:
    """Make ``deadline`` the current run's deadline inside the block."""
    token = _deadline.set(deadline)
    try:
        yield
    finally:
        _deadline.reset(token)
