"""Retries with exponential backoff, and a circuit breaker, for any flaky remote call.

The call being protected raises :class:`~knoxidx.retrieval.errors.ServiceError` for failures
(``retryable`` and ``retry_after`` say what to do); anything else is a bug and propagates at
once. Clocks, sleeps and randomness are injected so tests run in microseconds.

- Backoff: ``base_delay * 2**attempt`` (500 ms, 1 s, 2 s, ...) plus up to ``jitter`` of that,
  capped at ``max_delay``. A server's Retry-After replaces the computed delay.
- Deadline (optional): every attempt and wait of one call together; no wait that would pass
  it is begun. A question asked interactively gets one of seconds (:func:`query_resilience`);
  the caller bounds each attempt's own timeout by :meth:`Resilient.time_left`.
- Not retried: 4xx other than 408 and 429 (the request itself is wrong).
- Breaker: opens after ``failure_threshold`` consecutive failures, fails fast for
  ``reset_timeout`` seconds, then half-opens: calls go through as probes, one failure re-opens
  it, ``success_threshold`` consecutive successes close it. Client errors (non-retryable 4xx)
  say nothing about the service's health and leave the breaker alone.
"""

from __future__ import annotations

import enum
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from knoxidx.retrieval.errors import CircuitOpenError, RetriesExhaustedError, ServiceError

T = TypeVar("T")


def is_retryable_status(status: int) -> bool:
    return status in (408, 429) or status >= 500


class BreakerState(enum.Enum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


@dataclass
class CircuitBreaker:
    failure_threshold: int = 5
    reset_timeout: float = 60.0
    success_threshold: int = 3
    clock: Callable[[], float] = time.monotonic
    name: str = "service"
    _state: BreakerState = field(default=BreakerState.CLOSED, init=False)
    _failures: int = field(default=0, init=False)
    _successes: int = field(default=0, init=False)
    _opened_at: float = field(default=0.0, init=False)

    @property
    def state(self) -> BreakerState:
        if (
            self._state is BreakerState.OPEN
            and self.clock() - self._opened_at >= self.reset_timeout
        ):
            self._state = BreakerState.HALF_OPEN
            self._successes = 0
        return self._state

    def allow(self) -> None:
        """Raise :class:`CircuitOpenError` while open; otherwise let the call (or probe) through."""
        if self.state is BreakerState.OPEN:
            retry_in = self.reset_timeout - (self.clock() - self._opened_at)
            raise CircuitOpenError(
                f"{self.name} is failing; not calling it for another {retry_in:.0f} s", retry_in
            )

    def record_success(self) -> None:
        state = self.state
        self._failures = 0
        if state is BreakerState.HALF_OPEN:
            self._successes += 1
            if self._successes >= self.success_threshold:
                self._state = BreakerState.CLOSED

    def record_failure(self) -> None:
        state = self.state
        self._failures += 1
        if state is BreakerState.HALF_OPEN or self._failures >= self.failure_threshold:
            self._state = BreakerState.OPEN
            self._opened_at = self.clock()
            self._successes = 0


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 30.0
    jitter: float = 0.25  # fraction of the computed delay added at random
    max_retry_after: float = 120.0  # a longer Retry-After gives up instead of stalling indexing
    deadline: float | None = None  # seconds for all attempts and waits of a call (None: none)

    def delay(self, attempt: int, rng: Callable[[], float] = random.random) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (0-based)."""
        backoff = min(self.base_delay * float(2**attempt), self.max_delay)
        return backoff + backoff * self.jitter * rng()


@dataclass
class Resilient:
    """Runs calls under a retry policy and an optional circuit breaker."""

    policy: RetryPolicy = field(default_factory=RetryPolicy)
    breaker: CircuitBreaker | None = None
    sleep: Callable[[float], None] = time.sleep
    rng: Callable[[], float] = random.random
    clock: Callable[[], float] = time.monotonic

    def time_left(self, started: float) -> float | None:
        """Seconds left of the deadline of a call begun at ``started`` (None: no deadline)."""
        if self.policy.deadline is None:
            return None
        return self.policy.deadline - (self.clock() - started)

    def call(self, fn: Callable[[], T], what: str = "call") -> T:
        last: ServiceError | None = None
        started = self.clock()
        out_of_time = ""
        for attempt in range(self.policy.max_attempts):
            if self.breaker is not None:
                self.breaker.allow()
            try:
                result = fn()
            except ServiceError as exc:
                last = exc
                if not exc.retryable:
                    raise
                if self.breaker is not None:
                    self.breaker.record_failure()
                if attempt + 1 >= self.policy.max_attempts:
                    break
                wait = self.policy.delay(attempt, self.rng)
                if exc.retry_after is not None:
                    if exc.retry_after > self.policy.max_retry_after:
                        break
                    wait = max(exc.retry_after, 0.0)
                left = self.time_left(started)
                if left is not None and wait >= left:
                    out_of_time = f" within its {self.policy.deadline:g} s deadline"
                    break
                self.sleep(wait)
                continue
            if self.breaker is not None:
                self.breaker.record_success()
            return result
        assert last is not None
        raise RetriesExhaustedError(
            f"{what} failed after {attempt + 1} attempt(s){out_of_time}: {last}", last
        ) from last


QUERY_DEADLINE = 5.0  # seconds a question waits for a remote service before answering without it


def query_resilience(name: str, deadline: float = QUERY_DEADLINE) -> Resilient:
    """For a call someone waits on (a search, a context): short waits, a total deadline."""
    policy = RetryPolicy(max_attempts=3, base_delay=0.25, max_delay=1.0, deadline=deadline)
    return Resilient(policy=policy, breaker=CircuitBreaker(name=name))
