"""The wall-time budget of one logical model call and the tenacity policies bound to it."""

from __future__ import annotations

from collections.abc import Callable

from tenacity import RetryCallState
from tenacity.stop import stop_base
from tenacity.wait import wait_base

from .errors import retry_after_seconds


class Budget:
    """The wall-time budget of one logical call, measured on the injected clock."""

    def __init__(self, clock: Callable[[], float], total: float) -> None:
        self._clock = clock
        self.total = total
        self._start = clock()

    def elapsed(self) -> float:
        return self._clock() - self._start

    def remaining(self) -> float:
        return max(0.0, self.total - self.elapsed())


class StopWhenBudgetSpent(stop_base):
    """Stop before a retry whose wait would reach the end of the budget."""

    def __init__(self, budget: Budget) -> None:
        self._budget = budget

    def __call__(self, retry_state: RetryCallState) -> bool:
        return self._budget.elapsed() + retry_state.upcoming_sleep >= self._budget.total


class WaitRetryAfterOrBackoff(wait_base):
    """Wait what the server asked for (Retry-After), else back off; never past the budget."""

    def __init__(self, budget: Budget, backoff: wait_base) -> None:
        self._budget = budget
        self._backoff = backoff

    def __call__(self, retry_state: RetryCallState) -> float:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        hinted = retry_after_seconds(exc) if exc is not None else None
        delay = hinted if hinted is not None else self._backoff(retry_state)
        return min(delay, self._budget.remaining())
