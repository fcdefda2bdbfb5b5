"""One bounded call: run an LLM call on a shared, bounded pool and stop waiting at its timeout.

The LLM client bounds its own calls (:mod:`zhiwen.retry`), but a :class:`~zhiwen.llm.base.ChatModel`
is a protocol: an adapter may ignore ``timeout_s``. A caller that must answer in time whatever
the adapter does (the question classifier, the policy app's rewrite) runs the call here: it waits
``timeout_s + grace_s`` — the client's own deadline should fire first, the grace lets its error
(more precise than a timeout here) arrive — and then raises :class:`TimeoutError`. The call left
behind finishes in the pool; the pool is bounded, so a hung adapter cannot grow threads without
limit.

The call does NOT run in a copy of the caller's context: the request's deadline stays with the
caller (the call's own ``timeout_s`` is its bound), as it always has for these callers. Only the
answer's LLM tally (:mod:`zhiwen.llm.usage`) goes with it, so the call counts for the answer.

Example::

    >>> from zhiwen.llm.bounded import bounded_call
    >>> reply = bounded_call(lambda: llm.chat_json(messages, timeout_s=5.0), timeout_s=5.0)
    >>> try:
    ...     bounded_call(hung_adapter_call, timeout_s=0.1)
    ... except TimeoutError:
    ...     print("gave up")           # the call's own errors reach the caller unchanged
    gave up
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from typing import TypeVar

from zhiwen.llm.usage import current_usage, tallying

T = TypeVar("T")

#: seconds waited past ``timeout_s``: the LLM client's own timeout error arrives within it
GRACE_S = 0.5
#: calls that may run at once (the classifier's and the rewrite's 4 each, before they shared it)
MAX_WORKERS = 8

_EXECUTOR = concurrent.futures.ThreadPoolExecutor(
    max_workers=MAX_WORKERS, thread_name_prefix="zhiwen-llm-bounded"
)


def bounded_call(fn: Callable[[], T], *, timeout_s: float, grace_s: float = GRACE_S) -> T:
    """``fn()``'s result, or :class:`TimeoutError` after ``timeout_s + grace_s`` seconds.

    Whatever ``fn`` raises is raised here unchanged. On a timeout the call is cancelled when it
    has not started yet (all workers busy); a running one is left to finish in the pool.
    """
    usage = current_usage()

    def counted() -> T:
        with tallying(usage):
            return fn()

    future = _EXECUTOR.submit(counted)
    try:
        return future.result(timeout=timeout_s + grace_s)
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise
