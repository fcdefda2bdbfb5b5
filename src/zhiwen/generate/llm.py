"""One OpenAI-compatible chat client for every app (seed 003's LLM client).

Speaks ``POST {base_url}/chat/completions`` over httpx. ``base_url`` follows the OpenAI SDK
convention (it includes the version path); examples:

============================  ====================================================
DeepSeek                      ``https://api.deepseek.com/v1`` (model ``deepseek-chat``)
Qwen (DashScope compatible)   ``https://dashscope.aliyuncs.com/compatible-mode/v1``
Gemini (OpenAI endpoint)      ``https://generativelanguage.googleapis.com/v1beta/openai``
vLLM                          ``http://localhost:8000/v1``
Ollama                        ``http://localhost:11434/v1`` (any api_key)
llama.cpp server              ``http://localhost:8080/v1``
============================  ====================================================

Configure with ``ZHIWEN_LLM__BASE_URL``, ``ZHIWEN_LLM__MODEL``, ``ZHIWEN_LLM__API_KEY``. With no
base URL :func:`get_llm` returns ``None`` and apps answer extractively.

Behaviour:

* ``timeout_s`` bounds the WHOLE call, retries and backoff included (a deadline), so callers
  can promise an answer within the configured timeout.
* Retries (``max_retries``) with exponential backoff + jitter on 429, 5xx and connection errors;
  ``Retry-After`` is honoured when it fits in the deadline. 400/401/403/404 are not retried.
* Errors map to seed 003's codes: :class:`~zhiwen.errors.LLMTimeout` (1001),
  :class:`~zhiwen.errors.LLMAuthError` (1002: bad key, unknown model/URL),
  :class:`~zhiwen.errors.LLMRateLimited` (1003), :class:`~zhiwen.errors.LLMError` (1099: 5xx,
  unreachable, malformed or empty reply).
* Metrics: ``LLM_CALLS{purpose,outcome}`` (one per logical call), ``LLM_TOKENS{kind}``,
  ``LLM_LATENCY{purpose}``, ``LLM_ERRORS{code}``. Name the purpose with the ``purpose=`` keyword
  or, through the :class:`~zhiwen.generate.base.ChatModel` protocol, with
  ``with llm_purpose("recipes.detail"): ...``.

Example::

    >>> llm = get_llm()                      # None when no LLM is configured
    >>> reply = llm.chat([{"role": "user", "content": "你好"}], purpose="demo")
    >>> for delta in llm.stream([{"role": "user", "content": "讲个笑话"}]):
    ...     print(delta, end="")
    >>> llm.chat_json([{"role": "user", "content": '只输出 JSON：{"ok": true}'}])
    {'ok': True}
    >>> tools = [{"type": "function", "function": {"name": "calc_loan", "parameters": {...}}}]
    >>> llm.chat(messages, tools=tools).tool_calls[0].arguments
"""

from __future__ import annotations

import contextlib
import contextvars
import email.utils
import json
import logging
import random
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import anyio
import httpx

from zhiwen.config import LLMSettings, Settings, get_settings
from zhiwen.errors import LLMAuthError, LLMError, LLMRateLimited, LLMTimeout
from zhiwen.generate.base import ChatModel, ChatResult, Message, ToolCall
from zhiwen.generate.jsonrepair import JSONRepairError, parse_json_lenient
from zhiwen.metrics import LLM_CALLS, LLM_ERRORS, LLM_LATENCY, LLM_TOKENS

log = logging.getLogger(__name__)

_PURPOSE: contextvars.ContextVar[str] = contextvars.ContextVar("zhiwen_llm_purpose", default="chat")

_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
_AUTH_STATUS = frozenset({401, 403, 404})


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


def _err(cls: type[LLMError], detail: str, outcome: str, status: int | None = None) -> LLMError:
    return cls(detail, data={"outcome": outcome, "status": status})


class _Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def remaining(self) -> float:
        return self.end - time.monotonic()

    def timeout(self, cap: float | None = None) -> httpx.Timeout:
        left = max(0.05, self.remaining())
        if cap is not None:
            left = min(left, cap)
        return httpx.Timeout(left, connect=min(left, 10.0))


def _retry_after_s(resp: httpx.Response) -> float | None:
    value = resp.headers.get("retry-after")
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


def _error_text(resp: httpx.Response) -> str:
    try:
        body = resp.json()
    except ValueError:
        return resp.text[:200]
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            return str(err.get("message") or err)[:200]
        return str(err)[:200]
    return str(body)[:200]


def _status_error(resp: httpx.Response) -> LLMError:
    status = resp.status_code
    text = _error_text(resp)
    detail = f"HTTP {status}: {text}"
    if status in _AUTH_STATUS:
        return _err(LLMAuthError, detail, "auth", status)
    if status == 429:
        return _err(LLMRateLimited, detail, "rate_limited", status)
    if status in (408, 504):
        return _err(LLMTimeout, detail, "timeout", status)
    return _err(LLMError, detail, "http_error", status)


def parse_tool_calls(message: dict[str, Any]) -> list[ToolCall]:
    """OpenAI ``tool_calls`` (or legacy ``function_call``) → :class:`ToolCall` with parsed arguments."""
    raw_calls = message.get("tool_calls") or []
    if not raw_calls and isinstance(message.get("function_call"), dict):
        raw_calls = [{"id": "call_0", "function": message["function_call"]}]
    calls: list[ToolCall] = []
    for i, raw in enumerate(raw_calls):
        fn = raw.get("function") or {}
        name = fn.get("name")
        if not name:
            raise _err(LLMError, f"tool call without a name: {raw!r:.200}", "bad_reply")
        args_raw = fn.get("arguments")
        if isinstance(args_raw, dict):
            args = args_raw
        elif args_raw in (None, ""):
            args = {}
        else:
            try:
                args = parse_json_lenient(str(args_raw))
            except JSONRepairError as exc:
                raise _err(LLMError, f"tool {name}: arguments are not JSON: {exc}", "bad_json") from exc
            if not isinstance(args, dict):
                raise _err(LLMError, f"tool {name}: arguments are not an object", "bad_json")
        calls.append(ToolCall(id=str(raw.get("id") or f"call_{i}"), name=str(name), arguments=args))
    return calls


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
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not base_url:
            raise ValueError("base_url is required")
        base = base_url.rstrip("/")
        self.url = base if base.endswith("/chat/completions") else base + "/chat/completions"
        self.base_url = base_url
        self.model = model
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        headers.update(extra_headers or {})
        self._client = httpx.Client(headers=headers, transport=transport, follow_redirects=True)
        self._lock = threading.Lock()

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
        self._client.close()

    def __repr__(self) -> str:
        return f"OpenAIChatClient(url={self.url!r}, model={self.model!r})"

    # -- request plumbing --------------------------------------------------------------------
    def _payload(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None,
        tool_choice: Any,
        temperature: float | None,
        max_tokens: int | None,
        json_mode: bool,
        stream: bool,
    ) -> dict[str, Any]:
        if not messages:
            raise ValueError("messages must not be empty")
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "temperature": self.temperature if temperature is None else temperature,
            "max_tokens": self.max_tokens if max_tokens is None else max_tokens,
        }
        if tools:
            payload["tools"] = list(tools)
            if tool_choice is not None:
                payload["tool_choice"] = tool_choice
        if json_mode:
            payload["response_format"] = {"type": "json_object"}
        if stream:
            payload["stream"] = True
            payload["stream_options"] = {"include_usage": True}
        return payload

    def _backoff(self, attempt: int, deadline: _Deadline, hint: float | None) -> bool:
        """Sleep before retry ``attempt`` (1-based); False when the deadline leaves no room."""
        delay = min(self.backoff_max_s, self.backoff_base_s * (2 ** (attempt - 1)))
        delay = delay * (0.5 + random.random() / 2)  # jitter: de-synchronise clients after a 429
        if hint is not None:
            delay = max(delay, hint)
        # keep room for the retried request itself
        if delay + 0.05 >= deadline.remaining():
            return False
        time.sleep(delay)
        return True

    def _send(
        self, payload: dict[str, Any], deadline: _Deadline, *, stream: bool
    ) -> tuple[httpx.Response, int]:
        """POST with retries; returns an OK response (streamed responses are left open)."""
        attempt = 0
        while True:
            attempt += 1
            last: LLMError
            hint: float | None = None
            try:
                req = self._client.build_request("POST", self.url, json=payload, timeout=deadline.timeout())
                resp = self._client.send(req, stream=stream)
            except httpx.TimeoutException as exc:
                if deadline.remaining() <= 0.05:
                    raise _err(
                        LLMTimeout, f"no reply within {deadline.seconds:g}s ({exc!r})", "timeout"
                    ) from exc
                last = _err(LLMTimeout, f"{type(exc).__name__}: {exc}", "timeout")
            except httpx.TransportError as exc:  # connect refused, reset, protocol error
                last = _err(LLMError, f"cannot reach {self.url}: {type(exc).__name__}: {exc}", "unreachable")
            else:
                if resp.status_code < 300:
                    return resp, attempt
                if stream:
                    resp.read()
                resp.close()
                last = _status_error(resp)
                if resp.status_code not in _RETRY_STATUS:
                    # json_mode unsupported (some llama.cpp/vLLM builds): retry once without it
                    if resp.status_code == 400 and payload.pop("response_format", None) is not None:
                        log.info("LLM rejected response_format; retrying without it")
                        continue
                    raise last
                hint = _retry_after_s(resp)
            if attempt > self.max_retries or not self._backoff(attempt, deadline, hint):
                raise last
            log.warning("LLM attempt %d failed (%s); retrying", attempt, last.detail)

    def _finish(self, purpose: str, started: float, outcome: str, exc: LLMError | None = None) -> None:
        LLM_CALLS.labels(purpose=purpose, outcome=outcome).inc()
        LLM_LATENCY.labels(purpose=purpose).observe(time.perf_counter() - started)
        if exc is not None:
            LLM_ERRORS.labels(code=str(exc.code)).inc()
            log.warning(
                "LLM call failed (purpose=%s, outcome=%s, code=%s): %s",
                purpose,
                outcome,
                exc.code,
                exc.detail,
            )

    @staticmethod
    def _count_tokens(usage: Any) -> tuple[int, int]:
        if not isinstance(usage, dict):
            return 0, 0
        p = int(usage.get("prompt_tokens") or 0)
        c = int(usage.get("completion_tokens") or 0)
        if p:
            LLM_TOKENS.labels(kind="prompt").inc(p)
        if c:
            LLM_TOKENS.labels(kind="completion").inc(c)
        return p, c

    # -- public API ----------------------------------------------------------------------------
    def chat(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: Any = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_mode: bool = False,
        timeout_s: float | None = None,
        purpose: str | None = None,
    ) -> ChatResult:
        """One completion. Raises an :class:`LLMError` subclass; an empty reply is an error."""
        purpose = purpose or _PURPOSE.get()
        started = time.perf_counter()
        deadline = _Deadline(timeout_s or self.timeout_s)
        payload = self._payload(
            messages,
            tools=tools,
            tool_choice=tool_choice,
            temperature=temperature,
            max_tokens=max_tokens,
            json_mode=json_mode,
            stream=False,
        )
        try:
            resp, _ = self._send(payload, deadline, stream=False)
            try:
                body = resp.json()
                choice = body["choices"][0]
                message = choice.get("message") or {}
            except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
                raise _err(LLMError, f"malformed reply: {resp.text[:200]!r}", "bad_reply") from exc
            tool_calls = parse_tool_calls(message)
            content = message.get("content") or ""
            if not isinstance(content, str):  # some servers return content parts
                content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
            if not content.strip() and not tool_calls:
                raise _err(LLMError, "empty reply", "empty")
            prompt_toks, completion_toks = self._count_tokens(body.get("usage"))
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

    def stream(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout_s: float | None = None,
        purpose: str | None = None,
    ) -> Iterator[str]:
        """Yield content deltas (SSE ``data:`` lines until ``[DONE]``).

        Errors before the first delta are retried like :meth:`chat`; a failure mid-stream
        raises. An empty stream raises ``LLMError`` (outcome ``empty``).
        """
        purpose = purpose or _PURPOSE.get()
        payload = self._payload(
            messages,
            tools=None,
            tool_choice=None,
            temperature=temperature,
            max_tokens=max_tokens,
            json_mode=False,
            stream=True,
        )
        return self._stream(payload, purpose, timeout_s or self.timeout_s)

    def _stream(self, payload: dict[str, Any], purpose: str, timeout: float) -> Iterator[str]:
        started = time.perf_counter()
        deadline = _Deadline(timeout)
        produced = False
        resp: httpx.Response | None = None
        try:
            resp, _ = self._send(payload, deadline, stream=True)
            if "text/event-stream" not in resp.headers.get("content-type", ""):
                # a server that ignored stream=true: treat the body as one completion
                body = json.loads(resp.read())
                text = (body["choices"][0].get("message") or {}).get("content") or ""
                self._count_tokens(body.get("usage"))
                if text:
                    produced = True
                    yield text
            else:
                for line in resp.iter_lines():
                    if deadline.remaining() <= 0:
                        raise _err(LLMTimeout, f"stream exceeded {timeout:g}s", "timeout")
                    line = line.strip()
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        break
                    event = json.loads(data)
                    if isinstance(event, dict) and event.get("error"):
                        raise _err(LLMError, f"stream error: {event['error']!r:.200}", "http_error")
                    self._count_tokens(event.get("usage"))
                    for choice in event.get("choices") or []:
                        delta = (choice.get("delta") or {}).get("content")
                        if delta:
                            produced = True
                            yield delta
            if not produced:
                raise _err(LLMError, "empty reply", "empty")
        except LLMError as exc:
            self._finish(purpose, started, error_outcome(exc), exc)
            raise
        except httpx.TimeoutException as exc:
            err = _err(LLMTimeout, f"stream stalled: {exc!r}", "timeout")
            self._finish(purpose, started, "timeout", err)
            raise err from exc
        except (httpx.TransportError, ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            err = _err(LLMError, f"broken stream: {type(exc).__name__}: {exc}", "bad_reply")
            self._finish(purpose, started, "bad_reply", err)
            raise err from exc
        finally:
            if resp is not None:
                resp.close()
        self._finish(purpose, started, "ok")

    def chat_json(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        timeout_s: float | None = None,
        purpose: str | None = None,
    ) -> Any:
        """Ask for JSON (``response_format: json_object``) and parse it leniently.

        Unparseable output raises ``LLMError`` (1099, outcome ``bad_json``).
        """
        purpose = purpose or _PURPOSE.get()
        result = self.chat(
            messages, temperature=temperature, json_mode=True, timeout_s=timeout_s, purpose=purpose
        )
        try:
            return parse_json_lenient(result.content)
        except JSONRepairError as exc:
            err = _err(LLMError, f"reply is not JSON: {exc}", "bad_json")
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
        it = self.stream(messages, **kwargs)
        sentinel = object()
        while True:
            item = await anyio.to_thread.run_sync(next, it, sentinel)
            if item is sentinel:
                return
            yield str(item)


_CLIENTS: dict[tuple[Any, ...], OpenAIChatClient] = {}
_CLIENTS_LOCK = threading.Lock()


def get_llm(settings: Settings | LLMSettings | None = None) -> ChatModel | None:
    """The configured chat model, or ``None`` when ``llm.base_url`` is unset (extractive mode).

    Clients are cached per configuration so connections are reused.
    """
    if settings is None:
        settings = get_settings()
    llm_settings = settings.llm if isinstance(settings, Settings) else settings
    if not llm_settings.configured:
        return None
    key = tuple(sorted(llm_settings.model_dump().items()))
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(key)
        if client is None:
            client = OpenAIChatClient.from_settings(llm_settings)
            _CLIENTS[key] = client
        return client


def clear_llm_cache() -> None:
    """Close cached clients (tests that switch endpoints)."""
    with _CLIENTS_LOCK:
        for client in _CLIENTS.values():
            client.close()
        _CLIENTS.clear()
