"""What the LLM cost one answer: calls and tokens, tallied where the client's replies come back.

Whoever answers opens a tally (:func:`tallying`) around the answer; every call the client makes
inside it — the condenser's, the answer's, an app's classifier or rewrite, in whatever thread
:func:`zhiwen.llm.bounded.bounded_call` runs it — adds one call, and the tokens the server
reported. The question log keeps the totals with the question (#37). Outside a tally nothing is
counted (the ``/metrics`` counters count every call anyway).

Example::

    >>> usage = LLMUsage()
    >>> with tallying(usage):
    ...     note_call()
    ...     note_tokens(120, 30)
    >>> usage.calls, usage.prompt_tokens, usage.completion_tokens
    (1, 120, 30)
    >>> note_call()          # no tally open: nothing counted
    >>> usage.calls
    1
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass(slots=True)
class LLMUsage:
    """LLM calls and tokens of one answer (thread-safe: a stream and a bounded call may add at
    once)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, *, calls: int = 0, prompt: int = 0, completion: int = 0) -> None:
        with self._lock:
            self.calls += calls
            self.prompt_tokens += prompt
            self.completion_tokens += completion


_TALLY: ContextVar[LLMUsage | None] = ContextVar("zhiwen_llm_usage", default=None)


def current_usage() -> LLMUsage | None:
    """The tally open in this context (None: none)."""
    return _TALLY.get()


@contextlib.contextmanager
def tallying(usage: LLMUsage | None) -> Iterator[LLMUsage | None]:
    """Count the LLM calls made inside the block into ``usage`` (None: leave the tally as is)."""
    if usage is None:
        yield _TALLY.get()
        return
    token = _TALLY.set(usage)
    try:
        yield usage
    finally:
        try:
            _TALLY.reset(token)
        except ValueError:  # exited in another context (a generator resumed elsewhere)
            _TALLY.set(None)


def note_call() -> None:
    """One call to the endpoint, whatever its outcome (the client calls it once per call)."""
    usage = _TALLY.get()
    if usage is not None:
        usage.add(calls=1)


def note_tokens(prompt: int, completion: int) -> None:
    """The tokens the server reported for a call."""
    usage = _TALLY.get()
    if usage is not None and (prompt or completion):
        usage.add(prompt=prompt, completion=completion)


__all__ = ["LLMUsage", "current_usage", "note_call", "note_tokens", "tallying"]
