"""The pieces on their own: admission queue and hand-over, bulkhead waits, breaker probe, and the
one request deadline that every call inside shares."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from zhiwen.resilience import Admission, Breaker, Bulkhead, ServiceBusy
from zhiwen.retry import Deadline, deadline_scope


def test_admission_queues_hands_over_and_refuses() -> None:
    async def scenario() -> list[str]:
        gate = Admission("answer", limit=1, queue=1, retry_after_s=3)
        await gate.acquire(1.0)  # running
        waiter = asyncio.create_task(gate.acquire(1.0))  # queued
        await asyncio.sleep(0.01)
        out = []
        try:
            await gate.acquire(1.0)  # the queue is full: refused at once
        except ServiceBusy as busy:
            out.append(f"busy {busy.retry_after_s} {busy.headers['Retry-After']}")
        gate.release()  # the slot goes to the waiter
        await waiter
        out.append(f"in_use {gate.in_use} waiting {gate.waiting}")
        try:
            await asyncio.wait_for(gate.acquire(0.05), 1.0)  # waits 0.05 s, then refused
        except ServiceBusy:
            out.append("timed out")
        gate.release()
        out.append(f"in_use {gate.in_use}")
        return out

    assert asyncio.run(scenario()) == ["busy 3 3", "in_use 1 waiting 0", "timed out", "in_use 0"]


def test_bulkhead_waits_then_gives_up() -> None:
    bulkhead = Bulkhead("llm", limit=1)
    assert bulkhead.acquire(0)
    t0 = time.perf_counter()
    assert not bulkhead.acquire(0.1) and time.perf_counter() - t0 < 5.0  # gave up (no release ever comes)
    threading.Timer(0.05, bulkhead.release).start()
    assert bulkhead.acquire(1.0)  # a slot freed while waiting
    assert bulkhead.snapshot()["rejected"] == 1


def test_breaker_lets_one_probe_through() -> None:
    breaker = Breaker("llm", "http://x", failures=2, reset_s=0.2)
    for _ in range(2):
        assert breaker.admit() == "call"
        breaker.failed(TimeoutError("slow"))
    assert breaker.state == "open" and breaker.admit() is None
    time.sleep(0.25)
    assert breaker.admit() == "probe" and breaker.admit() is None  # one probe at a time
    breaker.failed(TimeoutError("still slow"))
    assert breaker.state == "open"
    time.sleep(0.25)
    assert breaker.admit() == "probe"
    breaker.succeeded()
    assert breaker.state == "closed" and breaker.admit() == "call"


def test_calls_inside_a_request_share_its_deadline() -> None:
    with deadline_scope(0.3) as request:
        call = Deadline.within(30.0)  # an LLM call's own 30 s: capped by the request's 0.3 s
        assert call.end <= request.end and request.remaining() <= 0.3
        time.sleep(0.35)
        assert Deadline.within(30.0).expired  # a retry or a second call gets nothing
    assert Deadline.within(30.0).remaining() > 29  # outside a request: its own timeout


def test_deadline_run_never_waits_past_the_deadline() -> None:
    deadline = Deadline(0.2)
    t0 = time.perf_counter()
    with pytest.raises(TimeoutError):
        deadline.run(lambda: time.sleep(5))
    assert time.perf_counter() - t0 < 4.0  # the deadline, not the 5 s sleep
