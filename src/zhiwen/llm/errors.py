"""LLM failures → the error codes (1001 timeout, 1002 key, 1003 rate limit, 1099), and what to retry.

=====================================  ==========================  ========================
failure                                error (code)                ``data["outcome"]``
=====================================  ==========================  ========================
deadline passed, 408, 504              ``LLMTimeout`` (1001)       ``timeout``
401, 403, 404 (bad key, model, URL)    ``LLMAuthError`` (1002)     ``auth``
429                                    ``LLMRateLimited`` (1003)   ``rate_limited``
other HTTP status                      ``LLMError`` (1099)         ``http_error``
connection refused / reset             ``LLMError`` (1099)         ``unreachable``
garbage, cut stream, no choices        ``LLMError`` (1099)         ``bad_reply``
empty reply                            ``LLMError`` (1099)         ``empty``
reply (or tool arguments) not JSON     ``LLMError`` (1099)         ``bad_json``
endpoint's circuit breaker open        ``LLMError`` (1099)         ``breaker_open``
no LLM slot free in time (bulkhead)    ``LLMError`` (1099)         ``busy``
=====================================  ==========================  ========================

Example::

    >>> err = to_llm_error(exc)          # any SDK / transport / parsing exception
    >>> error_outcome(err), err.code
    ('rate_limited', 1003)
"""

from __future__ import annotations

import email.utils
import time
from typing import TYPE_CHECKING

import httpx2

from zhiwen.errors import LLMAuthError, LLMError, LLMRateLimited, LLMTimeout
from zhiwen.retry import Deadline, DeadlineExceeded, is_retryable_status

if TYPE_CHECKING:
    import openai

# ``openai`` is imported inside the functions: it takes ~0.7 s, and the CLI imports this module.

AUTH_STATUS = frozenset({401, 403, 404})


def llm_error(cls: type[LLMError], detail: str, outcome: str, status: int | None = None) -> LLMError:
    return cls(detail, data={"outcome": outcome, "status": status})


def error_outcome(exc: BaseException) -> str:
    """A short metric/log label for an LLM failure."""
    if isinstance(exc, LLMTimeout):
        return "timeout"
    if isinstance(exc, LLMAuthError):
        return "auth"
    if isinstance(exc, LLMRateLimited):
        return "rate_limited"
    if isinstance(exc, LLMError) and exc.data and isinstance(exc.data, dict):
        return str(exc.data.get("outcome", "error"))
    return "error"


def status_error(status: int, text: str) -> LLMError:
    detail = f"HTTP {status}: {text}"
    if status in AUTH_STATUS:
        return llm_error(LLMAuthError, detail, "auth", status)
    if status == 429:
        return llm_error(LLMRateLimited, detail, "rate_limited", status)
    if status in (408, 504):
        return llm_error(LLMTimeout, detail, "timeout", status)
    return llm_error(LLMError, detail, "http_error", status)


def _status_text(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            return str(inner.get("message") or inner)[:200]
        return str(inner)[:200]
    if body:
        return str(body)[:200]
    try:
        return exc.response.text[:200]
    except httpx2.HTTPError:  # a streamed body that was never read
        return exc.message[:200]


def to_llm_error(
    exc: BaseException, *, deadline: Deadline | None = None, streaming: bool = False
) -> LLMError:
    """Map any failure of a call to our error types (``streaming``: it happened mid-stream)."""
    import openai

    if isinstance(exc, LLMError):
        return exc
    if isinstance(exc, openai.APIStatusError):
        return status_error(exc.status_code, _status_text(exc))
    limit = f"{deadline.seconds:g}s" if deadline is not None else "the timeout"
    if isinstance(exc, DeadlineExceeded | openai.APITimeoutError | httpx2.TimeoutException) or (
        deadline is not None and deadline.timed_out
    ):
        return llm_error(LLMTimeout, f"no complete reply within {limit} ({type(exc).__name__})", "timeout")
    if isinstance(exc, openai.APIConnectionError | httpx2.TransportError):
        cause = exc.__cause__ or exc
        if streaming:
            return llm_error(LLMError, f"broken stream: {type(cause).__name__}: {cause}", "bad_reply")
        return llm_error(LLMError, f"cannot reach the LLM: {type(cause).__name__}: {cause}", "unreachable")
    if isinstance(exc, openai.APIError):  # an error event inside a stream
        return llm_error(LLMError, f"stream error: {exc.message[:200]}", "http_error")
    return llm_error(LLMError, f"malformed reply: {type(exc).__name__}: {exc}"[:300], "bad_reply")


def is_retryable(exc: BaseException) -> bool:
    """429, 5xx-like statuses, connection errors and connect timeouts; never 400/401/403/404."""
    if not isinstance(exc, LLMError) or not isinstance(exc.data, dict):
        return False
    status = exc.data.get("status")
    if status is not None:
        return is_retryable_status(int(status))
    return exc.data.get("outcome") in ("unreachable", "timeout")


def retry_after_s(exc: BaseException) -> float | None:
    """The server's ``Retry-After`` (seconds or HTTP date) behind a mapped status error."""
    import openai

    cause = exc.__cause__ if isinstance(exc, LLMError) else exc
    if not isinstance(cause, openai.APIStatusError):
        return None
    headers = cause.response.headers
    if millis := headers.get("retry-after-ms"):
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
