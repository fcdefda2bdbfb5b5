"""The project's one retry helper: retries with backoff under ONE deadline for the whole call.

A :class:`Deadline` bounds everything a call does — every attempt, the backoff sleeps between
them and the reading of a streamed reply — so a caller can promise an answer (or an error)
within its configured timeout, whatever the server does (hang, drip one byte per second, fail
five times). Blocking work runs in a daemon worker thread that the caller stops waiting for at
the deadline; HTTP clients built on :class:`DeadlineTransport` also stop *reading* at the
deadline, so an abandoned worker frees its connection at the next byte instead of draining a
dripping body.

Retries use ``tenacity`` (exponential backoff with jitter, a ``Retry-After`` hint honoured when
it fits): no retry is started that the deadline leaves no room for.

Example::

    deadline = Deadline(5.0)
    policy = RetryPolicy(max_retries=2, backoff_base_s=0.5)
    client = httpx2.Client(transport=DeadlineTransport())
    reply = retry_call(
        lambda: client.post(url, json=body, timeout=deadline.http_timeout()),
        deadline=deadline,
        policy=policy,
        retryable=lambda exc: isinstance(exc, httpx2.TransportError),
    )
    for chunk in deadline.iterate(open_stream()):  # each read bounded by the same deadline
        ...
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import queue
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import httpx2
import tenacity

log = logging.getLogger(__name__)

T = TypeVar("T")

_CURRENT: contextvars.ContextVar[Deadline | None] = contextvars.ContextVar("zhiwen_deadline", default=None)


class DeadlineExceeded(TimeoutError):
    """The call's deadline passed (attempts, backoff sleeps or streamed reads included)."""


class Deadline:
    """A point in time a call must finish by; :meth:`cancel` ends it early."""

    def __init__(self, seconds: float) -> None:
        self.seconds = float(seconds)  # <= 0: already expired (a caller's budget ran out)
        self.end = time.monotonic() + self.seconds
        self._cancelled = threading.Event()

    @classmethod
    def within(cls, seconds: float) -> Deadline:
        """A deadline of ``seconds`` that never outlives the caller's (the request's) deadline.

        Every call inside a request takes this: a retry, a second LLM call or a reranker after a
        slow search gets what is left of the request's ``timeout_s``, never a fresh one.
        """
        outer = current_deadline()
        if outer is None:
            return cls(seconds)
        deadline = cls(min(float(seconds), outer.remaining()))
        deadline.end = min(deadline.end, outer.end)  # never a microsecond past the request's
        return deadline

    def remaining(self) -> float:
        """Seconds left (0 when cancelled; negative once passed)."""
        if self._cancelled.is_set():
            return 0.0
        return self.end - time.monotonic()

    @property
    def timed_out(self) -> bool:
        """The time is up (a cancelled deadline has not timed out)."""
        return time.monotonic() >= self.end

    @property
    def expired(self) -> bool:
        """No more work may be done: the time is up or the call was cancelled."""
        return self._cancelled.is_set() or self.timed_out

    def cancel(self) -> None:
        """End the call now: sleeps wake, workers stop at their next read."""
        self._cancelled.set()

    def check(self) -> None:
        if self.expired:
            raise DeadlineExceeded(f"deadline of {self.seconds:g}s passed")

    def sleep(self, seconds: float) -> None:
        """Sleep; a :meth:`cancel` (the caller gave up) wakes it with :class:`DeadlineExceeded`."""
        if self._cancelled.wait(seconds):
            raise DeadlineExceeded(f"deadline of {self.seconds:g}s passed while backing off")

    def http_timeout(self, *, connect_cap_s: float = 10.0) -> httpx2.Timeout:
        """A per-request HTTP timeout that never outlives the deadline."""
        left = max(0.05, self.remaining())
        return httpx2.Timeout(left, connect=min(left, connect_cap_s))

    # -- bounded blocking work ----------------------------------------------------------------
    def run(self, fn: Callable[[], T], *, discard: Callable[[T], None] | None = None) -> T:
        """``fn()`` in a worker thread; its result, or :class:`DeadlineExceeded` at the deadline.

        ``discard`` receives a result that arrives after the caller gave up (close a stream).
        """
        self.check()
        done = threading.Event()
        lock = threading.Lock()
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["value"] = fn()
            except BaseException as exc:  # handed to the caller's thread
                box["error"] = exc
            with lock:
                abandoned = box.get("abandoned", False)
                done.set()
            if abandoned and "value" in box and discard is not None:
                discard(box["value"])

        self._start(work, "zhiwen-deadline-call")
        if not done.wait(max(0.0, self.remaining())):
            with lock:
                if not done.is_set():
                    box["abandoned"] = True
                    self.cancel()
                    raise DeadlineExceeded(f"no reply within {self.seconds:g}s")
        if "error" in box:
            raise box["error"]
        return cast(T, box["value"])

    def iterate(self, items: Iterable[T], *, close: Callable[[], None] | None = None) -> Iterator[T]:
        """Yield ``items`` (a blocking iterator) read by a worker; never wait past the deadline.

        The worker calls ``close`` when it stops, whichever way (end, error, consumer gone).
        """
        inbox: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        stop = threading.Event()
        worker = self._start(lambda: _pump(items, inbox, stop, close), "zhiwen-deadline-stream")
        try:
            while True:
                kind, value = self._next(inbox)
                if kind == "item":
                    yield cast(T, value)
                elif kind == "error":
                    raise value
                else:
                    return
        finally:
            stop.set()
            if worker.is_alive():
                self.cancel()  # the worker's next read fails (DeadlineTransport) and it closes

    def _next(self, inbox: queue.SimpleQueue[tuple[str, Any]]) -> tuple[str, Any]:
        """The worker's next message, or :class:`DeadlineExceeded` when none comes in time."""
        try:
            return inbox.get(timeout=max(0.0, self.remaining()))
        except queue.Empty:
            raise DeadlineExceeded(f"stream exceeded {self.seconds:g}s") from None

    def _start(self, target: Callable[[], None], name: str) -> threading.Thread:
        ctx = contextvars.copy_context()

        def enter() -> None:
            _CURRENT.set(self)  # read by DeadlineTransport in this worker
            target()

        thread = threading.Thread(target=ctx.run, args=(enter,), name=name, daemon=True)
        thread.start()
        return thread


def _pump(
    items: Iterable[Any],
    inbox: queue.SimpleQueue[tuple[str, Any]],
    stop: threading.Event,
    close: Callable[[], None] | None,
) -> None:
    """:meth:`Deadline.iterate`'s worker: each item, then ``end`` or the ``error``; ``close`` last."""
    try:
        for item in items:
            inbox.put(("item", item))
            if stop.is_set():
                break
        else:
            inbox.put(("end", None))
    except BaseException as exc:
        inbox.put(("error", exc))
    finally:
        if close is not None:
            close()


def current_deadline() -> Deadline | None:
    """The deadline in force here: the call's in a :class:`Deadline` worker, else the request's
    (:func:`deadline_scope`), else None."""
    return _CURRENT.get()


@contextlib.contextmanager
def deadline_scope(seconds: float) -> Iterator[Deadline]:
    """Run the block under one deadline of ``seconds`` (the server opens one per request).

    Context variables follow the request into the thread pool, so every
    :meth:`Deadline.within` inside — LLM, rerank, embedding endpoint — shares it.
    """
    deadline = Deadline.within(seconds)
    token = _CURRENT.set(deadline)
    try:
        yield deadline
    finally:
        _CURRENT.reset(token)


# -- retries ------------------------------------------------------------------------------------
#: HTTP statuses a later attempt may get past: timeouts, conflicts, rate limits, an overloaded
#: server or gateway. Never 400/401/403/404: the same request fails the same way again.
RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})


def is_retryable_status(status: int) -> bool:
    """The project's one "is this worth another attempt" rule for an HTTP status.

    Every HTTP client retries by it (LLM, embeddings, reranker), each mapping its own error
    type to the status first.

    Example::

        >>> is_retryable_status(503), is_retryable_status(404)
        (True, False)
    """
    return int(status) in RETRY_STATUS


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently to retry; the deadline has the last word."""

    max_retries: int = 2
    backoff_base_s: float = 0.5
    backoff_max_s: float = 8.0
    reserve_s: float = 0.05  # the least time worth starting another attempt with

    def backoff_s(self, retry: int) -> float:
        """Delay before retry number ``retry`` (1-based): exponential, jittered to 50–100 %."""
        delay = min(self.backoff_max_s, self.backoff_base_s * (2 ** (retry - 1)))
        return delay * (0.5 + random.random() / 2)  # de-synchronise clients after a 429


def retry_call(
    fn: Callable[[], T],
    *,
    deadline: Deadline,
    policy: RetryPolicy,
    retryable: Callable[[BaseException], bool],
    retry_after: Callable[[BaseException], float | None] | None = None,
    discard: Callable[[T], None] | None = None,
    label: str = "call",
) -> T:
    """``fn()`` with retries, all of it bounded by ``deadline``.

    Retries exceptions for which ``retryable`` is true, up to ``policy.max_retries`` times, while
    the deadline leaves room for the backoff (or ``retry_after(exc)`` when longer) plus
    ``policy.reserve_s``; otherwise the last exception is raised as is. Raises
    :class:`DeadlineExceeded` when the deadline passes during an attempt.
    """

    def wait(state: tenacity.RetryCallState) -> float:
        delay = policy.backoff_s(state.attempt_number)
        exc = state.outcome.exception() if state.outcome is not None else None
        hint = retry_after(exc) if retry_after is not None and exc is not None else None
        return max(delay, hint) if hint is not None else delay

    def before_sleep(state: tenacity.RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome is not None else None
        log.warning(
            "%s attempt %d failed (%s); retrying in %.2fs",
            label,
            state.attempt_number,
            exc,
            state.upcoming_sleep,
        )

    out_of_attempts = tenacity.stop_after_attempt(policy.max_retries + 1)
    retrying = tenacity.Retrying(
        stop=out_of_attempts | _StopAtDeadline(deadline, policy.reserve_s),
        wait=wait,
        retry=tenacity.retry_if_exception(retryable),
        sleep=deadline.sleep,
        before_sleep=before_sleep,
        reraise=True,
    )
    return deadline.run(lambda: retrying(fn), discard=discard)


class _StopAtDeadline(tenacity.stop.stop_base):
    """Stop when the planned backoff leaves the next attempt less than ``reserve_s``."""

    def __init__(self, deadline: Deadline, reserve_s: float) -> None:
        self._deadline = deadline
        self._reserve_s = reserve_s

    def __call__(self, retry_state: tenacity.RetryCallState) -> bool:
        return retry_state.upcoming_sleep + self._reserve_s >= self._deadline.remaining()


# -- HTTP ---------------------------------------------------------------------------------------
class DeadlineTransport(httpx2.BaseTransport):
    """Wraps a transport so response bodies stop being read once the current deadline passes.

    A per-read timeout cannot stop a server that drips a byte every second; this checks the
    deadline of the calling worker (:func:`current_deadline`) between chunks and raises
    ``httpx2.ReadTimeout``, which closes the connection.
    """

    def __init__(self, inner: httpx2.BaseTransport | None = None) -> None:
        self._inner = inner if inner is not None else httpx2.HTTPTransport()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        deadline = current_deadline()
        if deadline is not None and deadline.expired:
            raise httpx2.ConnectTimeout("deadline passed before the request was sent", request=request)
        response = self._inner.handle_request(request)
        if deadline is not None and isinstance(response.stream, httpx2.SyncByteStream):
            response.stream = _DeadlineByteStream(response.stream, deadline, request)
        return response

    def close(self) -> None:
        self._inner.close()


class _DeadlineByteStream(httpx2.SyncByteStream):
    def __init__(self, inner: httpx2.SyncByteStream, deadline: Deadline, request: httpx2.Request) -> None:
        self._inner = inner
        self._deadline = deadline
        self._request = request

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            if self._deadline.expired:
                raise httpx2.ReadTimeout(
                    f"deadline of {self._deadline.seconds:g}s passed while reading", request=self._request
                )
            yield chunk

    def close(self) -> None:
        self._inner.close()
