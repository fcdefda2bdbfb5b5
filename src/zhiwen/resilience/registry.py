"""The process's bulkheads, admissions and breakers, configured from ``settings.resilience``.

LLM clients, rerankers and embedders are shared per process (cached per configuration), so
their bulkheads and breakers are too: :func:`get_resilience` is the one registry, and the server
configures it at start (:func:`configure_resilience`). :func:`guard` is how a call to an
external dependency goes out: breaker first (fail fast while open), then a bulkhead slot (wait
at most ``dependency_wait_s`` and never past the request's deadline).

Example::

    with guard("llm", "http://127.0.0.1:8000/v1") as call:
        try:
            reply = post()
        except TimeoutError as exc:
            call.failed(exc)
            raise
        call.succeeded()
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from zhiwen.config import ResilienceSettings, Settings
from zhiwen.metrics import (
    BREAKER_FAILURES,
    BREAKER_STATE,
    BULKHEAD_IN_USE,
    BULKHEAD_LIMIT,
    BULKHEAD_WAITING,
    REJECTED,
)
from zhiwen.resilience.admission import Admission
from zhiwen.resilience.breaker import STATE_CODES, Breaker
from zhiwen.resilience.bulkhead import Bulkhead
from zhiwen.retry import Deadline, current_deadline

DEPENDENCIES = ("llm", "rerank", "embedding")


class DependencyUnavailable(RuntimeError):
    """A call was not made: the breaker is open (``breaker_open``) or no slot came free (``busy``)."""

    def __init__(self, kind: str, reason: str, *, retry_after_s: int = 1) -> None:
        what = "circuit breaker open" if reason == "breaker_open" else "all slots busy"
        super().__init__(f"{kind}: {what}")
        self.kind = kind
        self.reason = reason
        self.retry_after_s = retry_after_s


class Resilience:
    def __init__(self, cfg: ResilienceSettings | None = None) -> None:
        self.cfg = cfg or ResilienceSettings()
        self._lock = threading.Lock()
        self.bulkheads = {name: Bulkhead(name, self._limit(name)) for name in DEPENDENCIES}
        self.admissions = {
            kind: Admission(
                kind,
                limit=self._limit(kind),
                queue=self._queue(kind),
                retry_after_s=self.cfg.retry_after_s,
            )
            for kind in ("answer", "search")
        }
        self.breakers: dict[tuple[str, str], Breaker] = {}
        gates: dict[str, Bulkhead | Admission] = {**self.bulkheads, **self.admissions}
        for name, gate in gates.items():
            self._export(name, gate)

    def _limit(self, name: str) -> int:
        return int(getattr(self.cfg, f"{name}_concurrency"))

    def _queue(self, kind: str) -> int:
        return int(getattr(self.cfg, f"{kind}_queue"))

    @staticmethod
    def _export(name: str, gate: Bulkhead | Admission) -> None:
        BULKHEAD_IN_USE.labels(bulkhead=name).set_function(lambda: gate.in_use)
        BULKHEAD_WAITING.labels(bulkhead=name).set_function(lambda: gate.waiting)
        BULKHEAD_LIMIT.labels(bulkhead=name).set_function(lambda: gate.limit)

    def configure(self, cfg: ResilienceSettings) -> None:
        with self._lock:
            self.cfg = cfg
            for name, bulkhead in self.bulkheads.items():
                bulkhead.resize(self._limit(name))
            for kind, admission in self.admissions.items():
                admission.configure(
                    limit=self._limit(kind), queue=self._queue(kind), retry_after_s=cfg.retry_after_s
                )
            for breaker in self.breakers.values():
                breaker.configure(failures=cfg.breaker_failures, reset_s=cfg.breaker_reset_s)

    def bulkhead(self, name: str) -> Bulkhead:
        return self.bulkheads[name]

    def admission(self, kind: str) -> Admission:
        return self.admissions[kind]

    def breaker(self, kind: str, endpoint: str) -> Breaker:
        key = (kind, endpoint)
        with self._lock:
            breaker = self.breakers.get(key)
            if breaker is None:
                breaker = self.breakers[key] = Breaker(
                    kind, endpoint, failures=self.cfg.breaker_failures, reset_s=self.cfg.breaker_reset_s
                )
                b = breaker
                BREAKER_STATE.labels(kind=kind, endpoint=endpoint).set_function(lambda: STATE_CODES[b.state])
                BREAKER_FAILURES.labels(kind=kind, endpoint=endpoint).set_function(lambda: b.failure_count)
            return breaker

    def breakers_of(self, kind: str) -> dict[str, Breaker]:
        with self._lock:
            return {endpoint: b for (k, endpoint), b in self.breakers.items() if k == kind}

    def snapshot(self) -> dict[str, Any]:
        gates = {name: b.snapshot() for name, b in self.bulkheads.items()}
        gates.update({kind: a.snapshot() for kind, a in self.admissions.items()})
        return gates


_INSTANCE = Resilience()


def get_resilience() -> Resilience:
    return _INSTANCE


def configure_resilience(settings: Settings) -> Resilience:
    _INSTANCE.configure(settings.resilience)
    return _INSTANCE


def request_timeout_s(settings: Settings) -> float:
    """The one deadline of a request: ``resilience.request_timeout_s``, else ``llm.timeout_s``."""
    return float(settings.resilience.request_timeout_s or settings.llm.timeout_s)


class _Call:
    """The outcome of one guarded call, told to its breaker."""

    def __init__(self, breaker: Breaker) -> None:
        self.breaker = breaker
        self.recorded = False

    def succeeded(self) -> None:
        self.recorded = True
        self.breaker.succeeded()

    def failed(self, exc: BaseException) -> None:
        self.recorded = True
        self.breaker.failed(exc)


@contextlib.contextmanager
def guard(kind: str, endpoint: str, deadline: Deadline | None = None) -> Iterator[_Call]:
    """Breaker, then a bulkhead slot, for one call to ``endpoint``; :class:`DependencyUnavailable`
    when the call must not go out. The caller tells the outcome (``call.failed(exc)``). The wait
    for a slot never outlives ``deadline`` (default: the request's)."""
    registry = get_resilience()
    breaker = registry.breaker(kind, endpoint)
    admitted = breaker.admit()
    if admitted is None:
        REJECTED.labels(kind=kind, by="breaker").inc()
        raise DependencyUnavailable(kind, "breaker_open", retry_after_s=breaker.retry_after_s())
    call = _Call(breaker)
    try:
        deadline = deadline or current_deadline()
        wait = registry.cfg.dependency_wait_s
        if deadline is not None:
            wait = min(wait, max(0.0, deadline.remaining()))
        bulkhead = registry.bulkhead(kind)
        if not bulkhead.acquire(wait):
            REJECTED.labels(kind=kind, by="bulkhead").inc()
            raise DependencyUnavailable(kind, "busy", retry_after_s=registry.cfg.retry_after_s)
        try:
            yield call
        finally:
            bulkhead.release()
    finally:
        if admitted == "probe" and not call.recorded:
            breaker.end_probe()
