"""zhiwen.retry: one deadline over attempts, backoff sleeps and streamed reads."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zhiwen.retry import Deadline, DeadlineExceeded, RetryPolicy, retry_call

FAST = RetryPolicy(max_retries=3, backoff_base_s=0.01, backoff_max_s=0.02)


class Flaky:
    def __init__(self, failures: int, exc: type[Exception] = ConnectionError) -> None:
        self.failures = failures
        self.exc = exc
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.exc(f"failure {self.calls}")
        return "ok"


def retry_connection_errors(exc: BaseException) -> bool:
    return isinstance(exc, ConnectionError)


def test_retries_then_succeeds() -> None:
    fn = Flaky(2)
    assert retry_call(fn, deadline=Deadline(2), policy=FAST, retryable=retry_connection_errors) == "ok"
    assert fn.calls == 3


def test_gives_up_after_max_retries_with_the_last_error() -> None:
    fn = Flaky(10)
    with pytest.raises(ConnectionError, match="failure 4"):
        retry_call(fn, deadline=Deadline(2), policy=FAST, retryable=retry_connection_errors)
    assert fn.calls == 4


def test_non_retryable_is_raised_at_once() -> None:
    fn = Flaky(1, ValueError)
    with pytest.raises(ValueError):
        retry_call(fn, deadline=Deadline(2), policy=FAST, retryable=retry_connection_errors)
    assert fn.calls == 1


def test_retry_after_hint_is_honoured_when_it_fits() -> None:
    fn = Flaky(1)
    t0 = time.perf_counter()
    retry_call(
        fn, deadline=Deadline(2), policy=FAST, retryable=retry_connection_errors, retry_after=lambda e: 0.2
    )
    assert time.perf_counter() - t0 >= 0.2 and fn.calls == 2


def test_no_retry_when_the_backoff_does_not_fit() -> None:
    fn = Flaky(5)
    t0 = time.perf_counter()
    with pytest.raises(ConnectionError):
        retry_call(
            fn,
            deadline=Deadline(0.5),
            policy=FAST,
            retryable=retry_connection_errors,
            retry_after=lambda e: 5,
        )
    assert time.perf_counter() - t0 < 4.0 and fn.calls == 1  # not the 5 s hint


def test_deadline_bounds_a_blocking_attempt_and_discards_its_late_result() -> None:
    discarded: list[str] = []
    released = threading.Event()

    def slow() -> str:
        released.wait(5)
        return "late"

    t0 = time.perf_counter()
    with pytest.raises(DeadlineExceeded):
        retry_call(
            slow, deadline=Deadline(0.3), policy=FAST, retryable=lambda e: True, discard=discarded.append
        )
    assert time.perf_counter() - t0 < 4.0  # the deadline, not the 5 s attempt
    released.set()
    t0 = time.perf_counter()
    while not discarded and time.perf_counter() - t0 < 2:
        time.sleep(0.01)
    assert discarded == ["late"]


def test_cancel_wakes_backoff_sleep() -> None:
    deadline = Deadline(5)
    threading.Timer(0.1, deadline.cancel).start()
    t0 = time.perf_counter()
    with pytest.raises(DeadlineExceeded):
        deadline.sleep(3)
    assert time.perf_counter() - t0 < 2.5  # woken, not the 3 s sleep


def _slow_items(n: int, every_s: float, closed: threading.Event) -> Iterator[int]:
    try:
        for i in range(n):
            time.sleep(every_s)
            yield i
    finally:
        closed.set()


def test_iterate_is_bounded_and_closes() -> None:
    closed = threading.Event()
    got: list[int] = []
    deadline = Deadline(0.35)
    t0 = time.perf_counter()
    with pytest.raises(DeadlineExceeded):
        for item in deadline.iterate(_slow_items(100, 0.1, closed), close=closed.set):
            got.append(item)
    assert time.perf_counter() - t0 < 5.0  # the deadline, not the 10 s of items
    assert 1 <= len(got) <= 4
    assert closed.wait(1)


def test_iterate_passes_errors_and_consumer_close() -> None:
    def broken() -> Iterator[int]:
        yield 1
        raise OSError("cut")

    deadline = Deadline(2)
    it = deadline.iterate(broken())
    assert next(it) == 1
    with pytest.raises(OSError, match="cut"):
        next(it)
    closed = threading.Event()
    it = Deadline(5).iterate(_slow_items(100, 0.01, closed), close=closed.set)
    assert next(it) == 0
    it.close()  # type: ignore[attr-defined]
    assert closed.wait(1)


@given(
    st.integers(min_value=1, max_value=12),
    st.floats(min_value=0.001, max_value=2),
    st.floats(min_value=0.001, max_value=10),
)
def test_backoff_is_exponential_capped_and_jittered(retry: int, base: float, cap: float) -> None:
    policy = RetryPolicy(backoff_base_s=base, backoff_max_s=cap)
    full = min(cap, base * 2 ** (retry - 1))
    assert full / 2 <= policy.backoff_s(retry) <= full


def test_spent_budget_is_an_expired_deadline() -> None:
    fn = Flaky(0)
    with pytest.raises(DeadlineExceeded):
        retry_call(fn, deadline=Deadline(-1), policy=FAST, retryable=retry_connection_errors)
    assert fn.calls == 0
