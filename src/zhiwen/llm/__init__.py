"""One OpenAI-compatible chat client for every app, on the ``openai`` SDK.

``base_url`` follows the OpenAI SDK convention (it includes the version path); examples:

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

* ``timeout_s`` bounds the WHOLE call — attempts, backoff and the streamed reply — with one
  :class:`~zhiwen.retry.Deadline`; a server that drips a byte a second cannot hold a call longer.
  Inside a server request a call gets at most what is left of the request's one deadline, so a
  second call (an app that asks twice) never starts a fresh ``timeout_s``.
* Each endpoint has a circuit breaker and every call a slot of the ``llm`` bulkhead
  (:mod:`zhiwen.resilience`): while the breaker is open, or no slot frees in time, a call fails at
  once with outcome ``breaker_open`` / ``busy`` and the caller answers extractively.
* Retries (``max_retries``; the SDK's own are off) with exponential backoff + jitter on 429, 5xx
  and connection errors; ``Retry-After`` is honoured when it fits in the deadline.
  400/401/403/404 are not retried; a 400 to ``response_format`` / ``stream_options`` (servers
  that do not know them) is retried once without them.
* Errors map to the error codes (:mod:`zhiwen.llm.errors`): ``LLMTimeout`` (1001),
  ``LLMAuthError`` (1002), ``LLMRateLimited`` (1003), ``LLMError`` (1099).
* Metrics: ``LLM_CALLS{purpose,outcome}`` (one per logical call), ``LLM_TOKENS{kind}``,
  ``LLM_LATENCY{purpose}``, ``LLM_ERRORS{code}``. Name the purpose with the ``purpose=`` keyword
  or, through the :class:`~zhiwen.llm.base.ChatModel` protocol, with
  ``with llm_purpose("qa.answer"): ...``.

Example::

    >>> llm = get_llm()                      # None when no LLM is configured
    >>> reply = llm.chat([{"role": "user", "content": "你好"}], purpose="demo", stop=["。"])
    >>> for delta in llm.stream([{"role": "user", "content": "讲个笑话"}]):
    ...     print(delta, end="")
    >>> llm.chat_json([{"role": "user", "content": '只输出 JSON：{"ok": true}'}])
    {'ok': True}
    >>> tools = [{"type": "function", "function": {"name": "calc_loan", "parameters": {...}}}]
    >>> llm.chat(messages, tools=tools).tool_calls[0].arguments
    >>> [e for e in llm.stream_events(messages, tools=tools)]   # ToolCallCompleted, StreamFinished
"""

from __future__ import annotations

import threading
from typing import Any

from zhiwen.config import LLMSettings, Settings, get_settings
from zhiwen.llm.base import ChatModel
from zhiwen.llm.client import OpenAIChatClient, llm_purpose
from zhiwen.llm.errors import error_outcome
from zhiwen.llm.parse import parse_tool_calls

__all__ = [
    "AUTO",
    "OpenAIChatClient",
    "clear_llm_cache",
    "error_outcome",
    "get_llm",
    "llm_purpose",
    "parse_tool_calls",
]



class _FromSettings:
    def __repr__(self) -> str:
        return "AUTO"


#: the default of an ``llm=`` parameter that also takes a model or None (no LLM): "the LLM the
#: settings configure", :func:`get_llm` of the settings in force
AUTO: Any = _FromSettings()

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
