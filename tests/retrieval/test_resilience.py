from __future__ import annotations

import pytest

from knoxidx.retrieval.errors import CircuitOpenError, RetriesExhaustedError, ServiceError
from knoxidx.retrieval.resilience import BreakerState, CircuitBreaker, Resilient, RetryPolicy


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Flaky:
    """Fails with the given errors in order, then returns 'ok'."""

    def __init__(self, *errors: ServiceError) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def transient(status: int = 500, retry_after: float | None = None) -> ServiceError:
    return ServiceError(f"HTTP {status}", retryable=True, status=status, retry_after=retry_after)


def test_backoff_is_500ms_doubling_plus_bounded_jitter() -> None:
    policy = RetryPolicy(max_delay=100)
    assert [policy.delay(a, rng=lambda: 0.0) for a in range(4)] == [0.5, 1.0, 2.0, 4.0]
    assert policy.delay(2, rng=lambda: 1.0) == pytest.approx(2.0 * 1.25)
    assert RetryPolicy(max_delay=3).delay(10, rng=lambda: 0.0) == 3


def test_retries_transient_errors_then_succeeds() -> None:
    sleeps: list[float] = []
    runner = Resilient(RetryPolicy(), sleep=sleeps.append, rng=lambda: 0.0)
    fn = Flaky(transient(500), transient(503), ServiceError("timeout", retryable=True))
    assert runner.call(fn) == "ok"
    assert fn.calls == 4
    assert sleeps == [0.5, 1.0, 2.0]


def test_429_honours_retry_after() -> None:
    sleeps: list[float] = []
    runner = Resilient(RetryPolicy(), sleep=sleeps.append, rng=lambda: 0.0)
    assert runner.call(Flaky(transient(429, retry_after=7.0))) == "ok"
    assert sleeps == [7.0]


def test_retry_after_beyond_the_cap_gives_up() -> None:
    runner = Resilient(RetryPolicy(max_retry_after=10), sleep=lambda s: None)
    with pytest.raises(RetriesExhaustedError):
        runner.call(Flaky(transient(429, retry_after=3600.0)))


def test_client_errors_are_not_retried_and_do_not_trip_the_breaker() -> None:
    breaker = CircuitBreaker(clock=Clock())
    runner = Resilient(RetryPolicy(), breaker=breaker, sleep=lambda s: None)
    for _ in range(10):
        fn = Flaky(ServiceError("bad request", retryable=False, status=400))
        with pytest.raises(ServiceError):
            runner.call(fn)
        assert fn.calls == 1
    assert breaker.state is BreakerState.CLOSED


def test_gives_up_after_max_attempts() -> None:
    sleeps: list[float] = []
    runner = Resilient(RetryPolicy(max_attempts=3), sleep=sleeps.append, rng=lambda: 0.0)
    fn = Flaky(*[transient()] * 10)
    with pytest.raises(RetriesExhaustedError) as info:
        runner.call(fn)
    assert fn.calls == 3 and len(sleeps) == 2
    assert isinstance(info.value.last_error, ServiceError)


def test_breaker_opens_after_five_failures_fails_fast_then_half_opens_and_closes() -> None:
    clock = Clock()
    breaker = CircuitBreaker(clock=clock)
    for _ in range(4):
        breaker.record_failure()
    assert breaker.state is BreakerState.CLOSED
    breaker.record_failure()
    assert breaker.state is BreakerState.OPEN
    runner = Resilient(RetryPolicy(), breaker=breaker, sleep=lambda s: None)
    fn = Flaky()
    with pytest.raises(CircuitOpenError) as info:
        runner.call(fn)
    assert fn.calls == 0 and info.value.retry_in == pytest.approx(60)
    clock.now += 59.9
    with pytest.raises(CircuitOpenError):
        runner.call(fn)
    clock.now += 0.2
    assert breaker.state is BreakerState.HALF_OPEN
    assert runner.call(fn) == "ok" and runner.call(fn) == "ok"
    assert breaker.state is BreakerState.HALF_OPEN
    assert runner.call(fn) == "ok"
    assert breaker.state is BreakerState.CLOSED


def test_a_failed_probe_reopens_the_breaker() -> None:
    clock = Clock()
    breaker = CircuitBreaker(clock=clock)
    for _ in range(5):
        breaker.record_failure()
    clock.now += 60
    assert breaker.state is BreakerState.HALF_OPEN
    breaker.record_success()
    breaker.record_failure()
    assert breaker.state is BreakerState.OPEN
    clock.now += 30
    with pytest.raises(CircuitOpenError):
        breaker.allow()


def test_a_success_resets_the_consecutive_failure_count() -> None:
    breaker = CircuitBreaker(clock=Clock())
    for _ in range(4):
        breaker.record_failure()
    breaker.record_success()
    for _ in range(4):
        breaker.record_failure()
    assert breaker.state is BreakerState.CLOSED


def test_retries_stop_when_the_breaker_opens_mid_call() -> None:
    breaker = CircuitBreaker(clock=Clock(), failure_threshold=2)
    runner = Resilient(RetryPolicy(max_attempts=5), breaker=breaker, sleep=lambda s: None)
    fn = Flaky(*[transient()] * 10)
    with pytest.raises(CircuitOpenError):
        runner.call(fn)
    assert fn.calls == 2
