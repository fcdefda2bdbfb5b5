"""What degraded in this request: one record, filled by the components that gave way.

The LLM client notes ``llm=timeout`` when it answered extractively for lack of time, the
reranker ``rerank=busy`` when it kept the fused order, and so on. The server opens one record
per request (:func:`degraded_scope`) and reports it in the ``X-Zhiwen-Degraded`` header, next to
the body's own fields (``extractive_reason``, ``diagnostics.rerank``), so every route — apps
included — says what degraded in the same way. Outside a request, :func:`note_degraded` only
counts the metric.

Example::

    with degraded_scope() as record:
        ...                                   # note_degraded("rerank", "timeout") somewhere
    record.header()                           # "rerank=timeout"
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator

from zhiwen.metrics import DEGRADED

HEADER = "X-Zhiwen-Degraded"


class DegradedRecord:
    def __init__(self) -> None:
        self._items: dict[str, str] = {}
        self._lock = threading.Lock()  # noted from worker threads of the same request

    def note(self, what: str, reason: str) -> None:
        with self._lock:
            self._items.setdefault(what, reason)

    def items(self) -> dict[str, str]:
        with self._lock:
            return dict(self._items)

    def header(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in sorted(self.items().items()))


_RECORD: contextvars.ContextVar[DegradedRecord | None] = contextvars.ContextVar(
    "zhiwen_degraded", default=None
)


@contextlib.contextmanager
def degraded_scope() -> Iterator[DegradedRecord]:
    record = DegradedRecord()
    token = _RECORD.set(record)
    try:
        yield record
    finally:
        _RECORD.reset(token)


def note_degraded(what: str, reason: str) -> None:
    """``what`` (llm, rerank, embedding, search) gave way for ``reason`` (timeout, busy, …)."""
    DEGRADED.labels(what=what, reason=reason).inc()
    record = _RECORD.get()
    if record is not None:
        record.note(what, reason)


def current_degraded() -> dict[str, str]:
    record = _RECORD.get()
    return record.items() if record is not None else {}
