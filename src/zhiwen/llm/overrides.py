"""A chat model whose sampling defaults come from the caller (the OpenAI front door's client).

A chat client that sends ``temperature``, ``max_tokens`` or ``stop`` to ``/v1/chat/completions``
expects them to shape the text it reads. Apps call ``ctx.llm`` without those arguments, so
:func:`with_overrides` wraps the server's model in one that supplies the client's values
wherever the app passes none. An app's explicit value still wins (it knows why it set it).

Structured calls keep the app's own limits, so they stay parseable: JSON mode, tool calls and
``chat_json`` get the client's ``temperature`` only, never its ``stop`` or ``max_tokens`` (a
stop sequence or a small token cap would cut a JSON object or a tool call's arguments).

Wrappers are memoised per (model, values): an app that keys a cache on the model object (the
listings service does) sees the same object for the same settings.

Example::

    >>> llm = with_overrides(get_llm(), temperature=0.2, max_tokens=200, stop=["。"])
    >>> llm.chat([{"role": "user", "content": "你好"}])       # sent with 0.2 / 200 / ["。"]
    >>> llm.chat(messages, temperature=0.0)                   # the app's 0.0 wins
    >>> with_overrides(None, temperature=0.2) is None         # offline stays offline
    True
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any

from zhiwen.cache import LRU
from zhiwen.llm.base import ChatModel, ChatResult, Message, Stop, StreamEvent

_WRAPPERS: LRU[OverriddenChatModel] = LRU(64, "llm_overrides")
_WRAPPERS_LOCK = threading.Lock()  # one wrapper per key: look up and create as one step


def _stop_key(stop: Stop) -> tuple[str, ...] | None:
    if stop is None:
        return None
    return (stop,) if isinstance(stop, str) else tuple(stop)


class OverriddenChatModel:
    """``inner`` with caller-supplied defaults for ``temperature``, ``max_tokens`` and ``stop``."""

    def __init__(
        self,
        inner: ChatModel,
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        stop: Stop = None,
    ) -> None:
        self.inner = inner
        self.model: str = inner.model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.stop: tuple[str, ...] | None = _stop_key(stop)

    def __repr__(self) -> str:
        return (
            f"OverriddenChatModel({self.inner!r}, temperature={self.temperature}, "
            f"max_tokens={self.max_tokens}, stop={self.stop})"
        )

    def __getattr__(self, name: str) -> Any:
        # anything outside the protocol (close, async variants, …) is the inner model's
        if name == "inner":  # not set yet (copy, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    def _temperature(self, value: float | None) -> float | None:
        return self.temperature if value is None else value

    def _max_tokens(self, value: int | None, structured: bool) -> int | None:
        return value if value is not None or structured else self.max_tokens

    def _stop(self, value: Stop, structured: bool) -> Stop:
        if value is not None or structured or self.stop is None:
            return value
        return list(self.stop)

    def chat(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        stop: Stop = None,
        json_mode: bool = False,
        timeout_s: float | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        structured = json_mode or bool(tools)
        return self.inner.chat(
            messages,
            tools=tools,
            temperature=self._temperature(temperature),
            max_tokens=self._max_tokens(max_tokens, structured),
            stop=self._stop(stop, structured),
            json_mode=json_mode,
            timeout_s=timeout_s,
            **kwargs,
        )

    def stream(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        stop: Stop = None,
        timeout_s: float | None = None,
        **kwargs: Any,
    ) -> Iterator[str]:
        return self.inner.stream(
            messages,
            temperature=self._temperature(temperature),
            max_tokens=self._max_tokens(max_tokens, False),
            stop=self._stop(stop, False),
            timeout_s=timeout_s,
            **kwargs,
        )

    def stream_events(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        stop: Stop = None,
        timeout_s: float | None = None,
        **kwargs: Any,
    ) -> Iterator[StreamEvent]:
        structured = bool(tools)
        return self.inner.stream_events(
            messages,
            tools=tools,
            temperature=self._temperature(temperature),
            max_tokens=self._max_tokens(max_tokens, structured),
            stop=self._stop(stop, structured),
            timeout_s=timeout_s,
            **kwargs,
        )

    def chat_json(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        timeout_s: float | None = None,
        **kwargs: Any,
    ) -> Any:
        return self.inner.chat_json(
            messages, temperature=self._temperature(temperature), timeout_s=timeout_s, **kwargs
        )


def with_overrides(
    llm: ChatModel | None,
    *,
    temperature: float | None = None,
    max_tokens: int | None = None,
    stop: Stop = None,
) -> ChatModel | None:
    """``llm`` with the caller's defaults; ``llm`` itself when there is nothing to override.

    ``None`` (no LLM configured) stays ``None``: the apps answer extractively.
    """
    if llm is None or (temperature is None and max_tokens is None and not stop):
        return llm
    key = (id(llm), temperature, max_tokens, _stop_key(stop) or None)
    with _WRAPPERS_LOCK:
        wrapper = _WRAPPERS.get(key)
        # ids are reused after garbage collection: the cached wrapper must wrap this very model
        if wrapper is None or wrapper.inner is not llm:
            wrapper = OverriddenChatModel(
                llm, temperature=temperature, max_tokens=max_tokens, stop=stop or None
            )
            _WRAPPERS.put(key, wrapper)
        return wrapper
