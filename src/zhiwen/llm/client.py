"""The OpenAI SDK behind :class:`OpenAIChatClient` (see :mod:`zhiwen.llm` for the story).

Our deadline and retries (:mod:`zhiwen.retry`) wrap the SDK, whose own retries are off; its
HTTP client reads through :class:`~zhiwen.retry.DeadlineTransport`, so one ``timeout_s`` bounds
attempts, backoff and streamed reads alike — and inside a server request, never more than what is
left of the request's deadline (:meth:`~zhiwen.retry.Deadline.within`).

Every call goes through :func:`zhiwen.resilience.guard`: the endpoint's circuit breaker (open
after ``resilience.breaker_failures`` timeouts, 5xx, 429 or broken replies in a row: calls fail
fast with outcome ``breaker_open``) and the ``llm`` bulkhead (no slot in time: ``busy``). A call
that fails says so with :func:`~zhiwen.resilience.note_degraded`; callers answer extractively.

Example::

    client = OpenAIChatClient(base_url="http://localhost:8000/v1", model="qwen2.5", timeout_s=20)
    with llm_purpose("demo"):
        print(client.chat([{"role": "user", "content": "你好"}], stop=["。"]).content)
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

import anyio
import httpx2

from zhiwen.config import LLMSettings
from zhiwen.errors import LLMError, LLMTimeout
from zhiwen.llm.base import ChatResult, Message, Stop, StreamEvent
from zhiwen.llm.errors import error_outcome, is_retryable, llm_error, retry_after_s, to_llm_error
from zhiwen.llm.parse import (
    JSONRepairError,
    StreamAssembler,
    completion_chunk,
    message_text,
    parse_json_lenient,
    parse_tool_calls,
    usage_tokens,
)
from zhiwen.llm.usage import note_call, note_tokens
from zhiwen.metrics import LLM_CALLS, LLM_ERRORS, LLM_LATENCY, LLM_TOKENS
from zhiwen.resilience import DependencyUnavailable, guard, note_degraded
from zhiwen.retry import Deadline, DeadlineExceeded, DeadlineTransport, RetryPolicy, retry_call

if TYPE_CHECKING:
    import openai

# ``openai`` is imported where first needed: it takes ~0.7 s, and every CLI command imports this.

log = logging.getLogger("zhiwen.llm")  # one logger name for the LLM client, split or not

_PURPOSE: contextvars.ContextVar[str] = contextvars.ContextVar("zhiwen_llm_purpose", default="chat")

# Parameters some OpenAI-compatible servers reject with a 400; dropped once on a 400.
_OPTIONAL_PARAMS = ("response_format", "stream_options")
# Keyless local servers (vLLM, Ollama, llama.cpp) take any key; never fall back to OPENAI_API_KEY,
# which must not be sent to an unrelated base URL.
_NO_KEY = "EMPTY"
# failures that say the endpoint is unwell (the breaker counts them); a 4xx for our request or an
# empty / non-JSON reply does not
_ENDPOINT_FAILURES = frozenset({"timeout", "unreachable", "http_error", "bad_reply", "rate_limited"})


@contextlib.contextmanager
def llm_purpose(purpose: str) -> Iterator[None]:
    """Label LLM metrics of calls made inside the block (``purpose`` label of ``LLM_CALLS``)."""
    previous = _PURPOSE.get()
    token = _PURPOSE.set(purpose)
    try:
        yield
    finally:
        try:
            _PURPOSE.reset(token)
        except ValueError:  # exited in another context (a generator resumed elsewhere)
            _PURPOSE.set(previous)


def _close_stream(value: object) -> None:
    close = getattr(value, "close", None)  # an openai.Stream opened after the caller gave up
    if callable(close):
        close()


def _is_sse(stream: openai.Stream[Any]) -> bool:
    return "text/event-stream" in stream.response.headers.get("content-type", "text/event-stream")


def _chunks(stream: openai.Stream[Any]) -> Iterator[dict[str, Any]]:
    """The stream's chunks as dicts; a plain JSON completion (``stream`` ignored) as one chunk."""
    if not _is_sse(stream):
        yield completion_chunk(json.loads(stream.response.read()))
        return
    for chunk in stream:
        yield chunk.to_dict(warnings=False)


class OpenAIChatClient:
    """Sync OpenAI-compatible chat client (thread-safe; async wrappers run it in a thread)."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout_s: float = 30.0,
        max_retries: int = 2,
        temperature: float = 0.3,
        max_tokens: int = 1024,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 8.0,
        extra_headers: dict[str, str] | None = None,
        transport: httpx2.BaseTransport | None = None,
    ) -> None:
        if not base_url:
            raise ValueError("base_url is required")
        base = base_url.rstrip("/").removesuffix("/chat/completions")
        self.url = base + "/chat/completions"
        self.endpoint = base  # the circuit breaker's key (``/healthz`` shows it under this name)
        self.base_url = base_url
        self.model = model
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self._http = httpx2.Client(
            transport=DeadlineTransport(transport),
            follow_redirects=True,
            timeout=httpx2.Timeout(timeout_s, connect=min(timeout_s, 10.0)),
        )
        import openai

        self._sdk = openai.OpenAI(
            api_key=api_key or _NO_KEY,
            base_url=base,
            max_retries=0,  # retries and the deadline are ours (zhiwen.retry)
            timeout=timeout_s,
            default_headers=extra_headers,
            http_client=self._http,
        )
        self._create = cast(Callable[..., Any], self._sdk.chat.completions.create)

    @classmethod
    def from_settings(cls, settings: LLMSettings) -> OpenAIChatClient:
        if not settings.base_url:
            raise ValueError("LLM base_url is not configured")
        return cls(
            base_url=settings.base_url,
            model=settings.model,
            api_key=settings.api_key,
            timeout_s=settings.timeout_s,
            max_retries=settings.max_retries,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
        )

    def close(self) -> None:
        self._sdk.close()

    def __repr__(self) -> str:
        return f"OpenAIChatClient(url={self.url!r}, model={self.model!r})"

    # -- request plumbing --------------------------------------------------------------------
    def _params(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: Any = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        stop: Stop = None,
        json_mode: bool = False,
        stream: bool = False,
    ) -> dict[str, Any]:
        if not messages:
            raise ValueError("messages must not be empty")
        params: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "temperature": self.temperature if temperature is None else temperature,
            "max_tokens": self.max_tokens if max_tokens is None else max_tokens,
        }
        if stop is not None:
            params["stop"] = stop if isinstance(stop, str) else list(stop)
        if tools:
            params["tools"] = list(tools)
            if tool_choice is not None:
                params["tool_choice"] = tool_choice
        if json_mode:
            params["response_format"] = {"type": "json_object"}
        if stream:
            params["stream"] = True
            params["stream_options"] = {"include_usage": True}
        return params

    def _request(self, params: dict[str, Any], deadline: Deadline) -> Any:
        """One completion (or an open stream) with retries, all within ``deadline``."""

        import openai

        def attempt() -> Any:
            while True:
                try:
                    return self._create(**params, timeout=deadline.http_timeout())
                except openai.BadRequestError as exc:
                    dropped = [name for name in _OPTIONAL_PARAMS if params.pop(name, None) is not None]
                    if not dropped:
                        raise to_llm_error(exc) from exc
                    log.info("LLM rejected the request (%s); retrying without %s", exc.message, dropped)
                except Exception as exc:  # SDK, transport, or a 200 whose body is no completion
                    raise to_llm_error(exc, deadline=deadline) from exc

        try:
            return retry_call(
                attempt,
                deadline=deadline,
                policy=RetryPolicy(self.max_retries, self.backoff_base_s, self.backoff_max_s),
                retryable=is_retryable,
                retry_after=retry_after_s,
                discard=_close_stream,
                label="LLM",
            )
        except DeadlineExceeded as exc:
            raise to_llm_error(exc, deadline=deadline) from exc

    @contextlib.contextmanager
    def _guarded(self, deadline: Deadline) -> Iterator[None]:
        """The block is one call to the endpoint: breaker and bulkhead around it, outcome told."""
        if deadline.expired:  # the request's time is spent: no call, and not the endpoint's fault
            raise llm_error(LLMTimeout, "no time left within the request's deadline", "timeout")
        try:
            with guard("llm", self.endpoint, deadline) as call:
                try:
                    yield
                except LLMError as exc:
                    if error_outcome(exc) in _ENDPOINT_FAILURES:
                        call.failed(exc)
                    else:
                        call.succeeded()
                    raise
                call.succeeded()
        except DependencyUnavailable as exc:
            raise llm_error(LLMError, str(exc), exc.reason) from exc

    def _finish(self, purpose: str, started: float, outcome: str, exc: LLMError | None = None) -> None:
        LLM_CALLS.labels(purpose=purpose, outcome=outcome).inc()
        note_call()  # the answer's own tally (zhiwen.llm.usage), when one is open
        LLM_LATENCY.labels(purpose=purpose).observe(time.perf_counter() - started)
        if exc is not None:
            note_degraded("llm", outcome)
            LLM_ERRORS.labels(code=str(exc.code)).inc()
            log.warning(
                "LLM call failed (purpose=%s, outcome=%s, code=%s): %s",
                purpose,
                outcome,
                exc.code,
                exc.detail,
            )

    @staticmethod
    def _count_tokens(usage: tuple[int, int] | None) -> tuple[int, int]:
        prompt, completion = usage or (0, 0)
        note_tokens(prompt, completion)
        if prompt:
            LLM_TOKENS.labels(kind="prompt").inc(prompt)
        if completion:
            LLM_TOKENS.labels(kind="completion").inc(completion)
        return prompt, completion

    # -- public API ----------------------------------------------------------------------------
    def chat(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: Any = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        stop: Stop = None,
        json_mode: bool = False,
        timeout_s: float | None = None,
        purpose: str | None = None,
    ) -> ChatResult:
        """One completion. Raises an :class:`LLMError` subclass; an empty reply is an error."""
        purpose = purpose or _PURPOSE.get()
        started = time.perf_counter()
        params = self._params(
            messages,
            tools=tools,
            tool_choice=tool_choice,
            temperature=temperature,
            max_tokens=max_tokens,
            stop=stop,
            json_mode=json_mode,
        )
        deadline = Deadline.within(timeout_s or self.timeout_s)
        try:
            with self._guarded(deadline):
                body = self._request(params, deadline).to_dict(warnings=False)
                try:
                    choice = body["choices"][0]
                    message = choice.get("message") or {}
                    content = message_text(message.get("content"))
                except (KeyError, IndexError, TypeError, AttributeError) as exc:
                    raise llm_error(LLMError, f"malformed reply: {str(body)[:200]!r}", "bad_reply") from exc
            tool_calls = parse_tool_calls(message)
            if not content.strip() and not tool_calls:
                raise llm_error(LLMError, "empty reply", "empty")
            prompt_toks, completion_toks = self._count_tokens(usage_tokens(body.get("usage")))
        except LLMError as exc:
            self._finish(purpose, started, error_outcome(exc), exc)
            raise
        self._finish(purpose, started, "ok")
        return ChatResult(
            content=content,
            tool_calls=tool_calls,
            finish_reason=choice.get("finish_reason"),
            prompt_tokens=prompt_toks,
            completion_tokens=completion_toks,
            raw=body,
        )

    def stream_events(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: Any = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        stop: Stop = None,
        timeout_s: float | None = None,
        purpose: str | None = None,
    ) -> Iterator[StreamEvent]:
        """Stream typed events: ``ContentDelta``, ``ToolCallCompleted``, one ``StreamFinished`` last.

        Errors before the first chunk are retried like :meth:`chat`; a failure mid-stream raises,
        and so does the deadline passing mid-stream (``LLMTimeout``). A stream with neither text
        nor tool calls raises ``LLMError`` (outcome ``empty``).
        """
        params = self._params(
            messages,
            tools=tools,
            tool_choice=tool_choice,
            temperature=temperature,
            max_tokens=max_tokens,
            stop=stop,
            stream=True,
        )
        return self._stream_events(params, purpose or _PURPOSE.get(), timeout_s or self.timeout_s)

    def _stream_events(self, params: dict[str, Any], purpose: str, timeout: float) -> Iterator[StreamEvent]:
        started = time.perf_counter()
        deadline = Deadline.within(timeout)
        assembler = StreamAssembler()
        try:
            with self._guarded(deadline):
                stream = self._request(params, deadline)
                try:
                    for chunk in deadline.iterate(_chunks(stream), close=stream.close):
                        yield from assembler.feed(chunk)
                except LLMError:
                    raise
                except Exception as exc:  # transport, SDK, garbage SSE data, deadline
                    raise to_llm_error(exc, deadline=deadline, streaming=True) from exc
                if assembler.finish_reason is None and _is_sse(stream):
                    # the SDK ends quietly when the connection closes before [DONE]: a cut reply
                    raise llm_error(LLMError, "stream ended without a finish reason", "bad_reply")
            if assembler.empty:
                raise llm_error(LLMError, "empty reply", "empty")
            final = assembler.finish()
            self._count_tokens(assembler.usage)
        except LLMError as exc:
            self._finish(purpose, started, error_outcome(exc), exc)
            raise
        self._finish(purpose, started, "ok")
        yield from final

    def stream(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        stop: Stop = None,
        timeout_s: float | None = None,
        purpose: str | None = None,
    ) -> Iterator[str]:
        """Yield content deltas (text only); errors as :meth:`stream_events`."""
        events = self.stream_events(
            messages,
            temperature=temperature,
            max_tokens=max_tokens,
            stop=stop,
            timeout_s=timeout_s,
            purpose=purpose,
        )
        return self._texts(events)

    @staticmethod
    def _texts(events: Iterator[StreamEvent]) -> Iterator[str]:
        try:
            for event in events:
                text = getattr(event, "text", None)
                if text:
                    yield text
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                close()

    def chat_json(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        timeout_s: float | None = None,
        purpose: str | None = None,
    ) -> Any:
        """Ask for JSON (``response_format: json_object``) and parse it leniently (``json_repair``).

        A reply with no JSON object/array raises ``LLMError`` (1099, outcome ``bad_json``).
        """
        purpose = purpose or _PURPOSE.get()
        result = self.chat(
            messages, temperature=temperature, json_mode=True, timeout_s=timeout_s, purpose=purpose
        )
        try:
            return parse_json_lenient(result.content)
        except JSONRepairError as exc:
            err = llm_error(LLMError, f"reply is not JSON: {exc}", "bad_json")
            LLM_ERRORS.labels(code=str(err.code)).inc()
            LLM_CALLS.labels(purpose=purpose, outcome="bad_json").inc()
            log.warning("LLM JSON reply unparseable (purpose=%s): %s", purpose, exc)
            raise err from exc

    # -- async wrappers (the API's handlers) ------------------------------------------------
    async def achat(self, messages: Sequence[Message], **kwargs: Any) -> ChatResult:
        return await anyio.to_thread.run_sync(lambda: self.chat(messages, **kwargs))

    async def achat_json(self, messages: Sequence[Message], **kwargs: Any) -> Any:
        return await anyio.to_thread.run_sync(lambda: self.chat_json(messages, **kwargs))

    async def astream(self, messages: Sequence[Message], **kwargs: Any) -> AsyncIterator[str]:
        async for text in _in_thread(self.stream(messages, **kwargs)):
            yield text

    async def astream_events(self, messages: Sequence[Message], **kwargs: Any) -> AsyncIterator[StreamEvent]:
        async for event in _in_thread(self.stream_events(messages, **kwargs)):
            yield event


async def _in_thread(items: Iterator[Any]) -> AsyncIterator[Any]:
    sentinel = object()
    while True:
        item = await anyio.to_thread.run_sync(next, items, sentinel)
        if item is sentinel:
            return
        yield item
