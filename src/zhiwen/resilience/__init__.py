"""Reliability under faults and load: one deadline per request, bulkheads, breakers, admission.

* **Deadline** — the server gives every request that does real work one
  :class:`~zhiwen.retry.Deadline` (``resilience.request_timeout_s``, default ``llm.timeout_s``);
  every call inside it (LLM attempts and streamed reads, rerank, the embedding endpoint, the
  waits for search work) takes what is left (:meth:`~zhiwen.retry.Deadline.within`). When it
  passes the request degrades — extractive answer, fused order — and says so
  (:mod:`zhiwen.resilience.degraded`).
* **Bulkheads** (:mod:`.bulkhead`) — separate bounded concurrency for LLM, rerank and
  embedding calls; a caller that gets no slot in time degrades instead of queueing.
* **Admission** (:mod:`.admission`) — ``answer`` and ``search`` requests each have their own
  slots and a bounded queue; a full queue is a 503 with ``Retry-After`` at once.
* **Breakers** (:mod:`.breaker`) — one per external endpoint: after N failures in a row calls
  fail fast for T seconds, then one probe.
* **Input hygiene** (:mod:`.text`) — lone surrogates and NUL are refused with 3002.

State shows in ``GET /healthz`` (never waits on any of it) and ``GET /metrics``.
"""

from zhiwen.resilience.admission import Admission, ServiceBusy, work_kind
from zhiwen.resilience.breaker import Breaker
from zhiwen.resilience.bulkhead import Bulkhead, BulkheadFull
from zhiwen.resilience.degraded import current_degraded, degraded_scope, note_degraded
from zhiwen.resilience.registry import (
    DependencyUnavailable,
    Resilience,
    configure_resilience,
    get_resilience,
    guard,
    request_timeout_s,
)

__all__ = [
    "Admission",
    "Breaker",
    "Bulkhead",
    "BulkheadFull",
    "DependencyUnavailable",
    "Resilience",
    "ServiceBusy",
    "configure_resilience",
    "current_degraded",
    "degraded_scope",
    "get_resilience",
    "guard",
    "note_degraded",
    "request_timeout_s",
    "work_kind",
]
