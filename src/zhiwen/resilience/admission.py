"""Admission of requests by kind of work: bounded concurrency, a bounded queue, then 503.

Every request that does real work is one of two kinds (:func:`work_kind`): ``answer`` (QA, chat
completions, every app's routes — they may call an LLM) and ``search`` (search, embeddings).
Each kind has ``limit`` requests running and at most ``queue`` waiting; a request that finds the
queue full, or waits longer than its wait limit, is refused with :class:`ServiceBusy` (HTTP 503,
``Retry-After``) at once — latency stays bounded instead of growing with the backlog. Cheap
routes (``/healthz``, ``/metrics``, reads, the admin API, uploads, which have their own job
queue) are never queued behind them.

Waiting happens on the event loop (no thread is held while queued); the admitted request runs
as before. All methods must be called from the event loop's thread.

Example::

    gate = Admission("answer", limit=16, queue=32)
    await gate.acquire(wait_s=2.0)       # ServiceBusy when full
    try:
        ...                             # the request
    finally:
        gate.release()
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from typing import Any

from zhiwen.errors import ZhiwenError

_KIND_NAMES = {"answer": "问答", "search": "检索"}
SEARCH_PATHS = frozenset({"/knowledge-base/search", "/v1/embeddings"})
#: writes of admins and KB owners (settings, chunks, FAQ, undo, imports): cheap, never queued
OWNER_PREFIXES = ("/admin/", "/api/v1/kbs")


class ServiceBusy(ZhiwenError):
    """A kind of work is at capacity: 503 with ``Retry-After`` (code 1099, retry later)."""

    code = 1099
    http_status = 503
    user_message = "服务繁忙，请稍后重试"

    def __init__(self, kind: str, detail: str, *, retry_after_s: int) -> None:
        name = _KIND_NAMES.get(kind, kind)
        super().__init__(
            detail,
            message=f"服务繁忙：{name}请求排队已满，请 {retry_after_s} 秒后重试",
            data={"work": kind, "retry_after_s": retry_after_s},
        )
        self.kind = kind
        self.retry_after_s = retry_after_s

    @property
    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after_s)}


def work_kind(method: str, path: str) -> str | None:
    """``answer``, ``search`` or None (not admitted: cheap, or queued elsewhere)."""
    if method != "POST":
        return None
    if path in SEARCH_PATHS:
        return "search"
    if path.startswith(OWNER_PREFIXES) or path.endswith(("/documents", "/feedback")):
        return None  # an owner's edit or a rating must not wait behind answers
    return "answer"


class Admission:
    """``limit`` requests at once, ``queue`` more waiting (FIFO), the rest refused."""

    def __init__(self, kind: str, *, limit: int, queue: int, retry_after_s: int = 2) -> None:
        self.kind = kind
        self.limit = max(1, int(limit))
        self.queue = max(0, int(queue))
        self.retry_after_s = retry_after_s
        self.in_use = 0
        self.rejected = 0
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    def configure(self, *, limit: int, queue: int, retry_after_s: int) -> None:
        self.limit = max(1, int(limit))
        self.queue = max(0, int(queue))
        self.retry_after_s = retry_after_s

    @property
    def waiting(self) -> int:
        return sum(1 for w in self._waiters if not w.done())

    def _busy(self, why: str) -> ServiceBusy:
        self.rejected += 1
        return ServiceBusy(self.kind, why, retry_after_s=self.retry_after_s)

    async def acquire(self, wait_s: float) -> None:
        """Take a slot, waiting in line at most ``wait_s``; :class:`ServiceBusy` otherwise."""
        if self.in_use < self.limit and not self.waiting:
            self.in_use += 1
            return
        if self.waiting >= self.queue or wait_s <= 0:
            raise self._busy(f"{self.kind}: {self.in_use} running, {self.waiting} waiting (queue full)")
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await asyncio.wait_for(asyncio.shield(waiter), wait_s)
        except (TimeoutError, asyncio.CancelledError) as exc:
            if waiter.done() and not waiter.cancelled():  # a slot was handed over just now
                if isinstance(exc, TimeoutError):
                    return
                self.release()
                raise
            waiter.cancel()
            self._drop(waiter)
            if isinstance(exc, TimeoutError):
                raise self._busy(f"{self.kind}: no slot within {wait_s:g}s") from None
            raise

    def release(self) -> None:
        """Hand the slot to the next waiter, or free it."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # in_use unchanged: the slot changes hands
                return
        self.in_use = max(0, self.in_use - 1)

    def _drop(self, waiter: asyncio.Future[None]) -> None:
        with contextlib.suppress(ValueError):  # already handed a slot and popped
            self._waiters.remove(waiter)

    def snapshot(self) -> dict[str, Any]:
        return {
            "limit": self.limit,
            "in_use": self.in_use,
            "waiting": self.waiting,
            "queue": self.queue,
            "rejected": self.rejected,
        }
