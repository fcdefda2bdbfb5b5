"""A bulkhead for blocking work: at most ``limit`` calls of one kind at once, in threads.

One slow dependency (an LLM that hangs, a reranker stuck on a big batch) may only ever hold its
own slots; every other kind of work keeps its own. A caller that finds the bulkhead full waits at
most ``timeout`` seconds for a slot and then gets :class:`BulkheadFull` — the caller degrades
(extractive answer, fused order) instead of queueing without limit.

Example::

    llm = Bulkhead("llm", limit=16)
    with llm.slot(timeout=0.5):          # BulkheadFull after 0.5 s without a free slot
        reply = client.chat(messages)
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any


class BulkheadFull(RuntimeError):
    """No slot became free in time."""

    def __init__(self, name: str, limit: int) -> None:
        super().__init__(f"bulkhead {name!r} is full ({limit} calls at once)")
        self.name = name
        self.limit = limit


class Bulkhead:
    """Bounded concurrency for one kind of blocking work (thread-safe)."""

    def __init__(self, name: str, limit: int) -> None:
        self.name = name
        self.limit = max(1, int(limit))
        self.in_use = 0
        self.waiting = 0
        self.rejected = 0
        self._cond = threading.Condition()

    def resize(self, limit: int) -> None:
        with self._cond:
            self.limit = max(1, int(limit))
            self._cond.notify_all()

    def acquire(self, timeout: float) -> bool:
        """Take a slot, waiting at most ``timeout`` seconds; False when none came free."""
        with self._cond:
            if self.in_use < self.limit:
                self.in_use += 1
                return True
            if timeout <= 0:
                self.rejected += 1
                return False
            self.waiting += 1
            try:
                free = self._cond.wait_for(lambda: self.in_use < self.limit, timeout)
            finally:
                self.waiting -= 1
            if not free:
                self.rejected += 1
                return False
            self.in_use += 1
            return True

    def release(self) -> None:
        with self._cond:
            self.in_use = max(0, self.in_use - 1)
            self._cond.notify()

    @contextlib.contextmanager
    def slot(self, timeout: float) -> Iterator[None]:
        """Hold a slot for the block; :class:`BulkheadFull` when none came free in time."""
        if not self.acquire(timeout):
            raise BulkheadFull(self.name, self.limit)
        try:
            yield
        finally:
            self.release()

    def snapshot(self) -> dict[str, Any]:
        return {
            "limit": self.limit,
            "in_use": self.in_use,
            "waiting": self.waiting,
            "rejected": self.rejected,
        }
