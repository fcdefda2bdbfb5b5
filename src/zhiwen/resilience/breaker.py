"""A circuit breaker per external endpoint (LLM, reranker, embedding service).

Built on the ``circuitbreaker`` package's state machine (failures in a row, recovery timeout,
``closed`` / ``open`` / ``half_open``), used without its decorator so one breaker can guard a
call whose outcome is known only later (a streamed reply). What this adds:

* **one probe at a time**: once the recovery time has passed, a single caller is let through to
  try the endpoint; the others keep failing fast until that probe has succeeded (closed) or
  failed (open for another ``reset_s``). ``circuitbreaker`` lets every caller through, and
  ``pybreaker`` holds one lock for the whole of every call (it would serialise the LLM calls).
* **explicit outcomes**: :meth:`succeeded` / :meth:`failed`, so callers decide which failures
  count (a timeout or a 5xx does; a 400 for a bad parameter does not).

Example::

    breaker = Breaker("llm", "http://127.0.0.1:8000/v1", failures=5, reset_s=30)
    if breaker.admit() is None:
        raise Unavailable(retry_after=breaker.retry_after_s())   # fail fast, no network
    try:
        reply = call()
    except Timeout as exc:
        breaker.failed(exc)
        raise
    breaker.succeeded()
"""

from __future__ import annotations

import math
import threading
from typing import Any

from circuitbreaker import STATE_CLOSED, STATE_HALF_OPEN, STATE_OPEN, CircuitBreaker

__all__ = ["STATE_CLOSED", "STATE_HALF_OPEN", "STATE_OPEN", "Breaker"]

STATE_CODES = {STATE_CLOSED: 0, STATE_HALF_OPEN: 1, STATE_OPEN: 2}


class Breaker(CircuitBreaker):
    """Fails fast for ``reset_s`` seconds after ``failures`` failures in a row, then probes."""

    def __init__(self, kind: str, endpoint: str, *, failures: int = 5, reset_s: float = 30.0) -> None:
        super().__init__(
            failure_threshold=failures,
            recovery_timeout=reset_s,
            expected_exception=Exception,
            name=f"{kind}:{endpoint}",
        )
        self.kind = kind
        self.endpoint = endpoint
        self.rejected = 0
        self._lock = threading.Lock()
        self._probing = False

    def configure(self, *, failures: int, reset_s: float) -> None:
        self._failure_threshold = failures
        self._recovery_timeout = reset_s

    @property
    def reset_s(self) -> float:
        return float(self._recovery_timeout)

    def admit(self) -> str | None:
        """May a call go out now? ``"call"`` (closed), ``"probe"`` (the one trial call once the
        recovery time has passed), or None (open, or another caller is probing): fail fast."""
        with self._lock:
            state = self.state
            if state == STATE_CLOSED:
                return "call"
            if state == STATE_HALF_OPEN and not self._probing:
                self._probing = True
                return "probe"
            self.rejected += 1
            return None

    def end_probe(self) -> None:
        """A probe ended without an outcome (it never reached the endpoint): let another try."""
        with self._lock:
            self._probing = False

    def succeeded(self) -> None:
        with self._lock:
            self._probing = False
            self.reset()

    def failed(self, exc: BaseException) -> None:
        with self._lock:
            self._probing = False
            self.__exit__(type(exc), exc, None)  # counts it; opens at the threshold

    def retry_after_s(self) -> int:
        """Seconds until the next probe (at least 1)."""
        return max(1, math.ceil(self.open_remaining)) if self.state == STATE_OPEN else 1

    def snapshot(self) -> dict[str, Any]:
        state = self.state
        out: dict[str, Any] = {
            "state": state,
            "failures": self.failure_count,
            "threshold": self._failure_threshold,
            "reset_s": self.reset_s,
            "rejected": self.rejected,
        }
        if state == STATE_OPEN:
            out["retry_after_s"] = self.retry_after_s()
        if self.last_failure is not None:
            out["last_failure"] = f"{type(self.last_failure).__name__}: {self.last_failure}"[:200]
        return out
