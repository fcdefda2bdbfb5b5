"""The chat-model contract every app uses (implemented by :mod:`zhiwen.generate.llm`).

Apps call :func:`zhiwen.generate.llm.get_llm` which returns ``None`` when no LLM is
configured; they must then compose an extractive answer and say so (``llm_used: false``).
Failures raise :class:`zhiwen.errors.LLMError` subclasses (codes 1001/1002/1003/1099).

Example::

    llm = get_llm(settings)
    if llm is not None:
        reply = llm.chat([{"role": "user", "content": "你好"}])
        print(reply.content)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

Message = dict[str, Any]  # OpenAI chat format: {"role": ..., "content": ..., "tool_calls"?: ...}


@dataclass(slots=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(slots=True)
class ChatResult:
    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    raw: dict[str, Any] = field(default_factory=dict)


class ChatModel(Protocol):
    model: str

    def chat(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_mode: bool = False,
        timeout_s: float | None = None,
    ) -> ChatResult: ...

    def stream(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout_s: float | None = None,
    ) -> Iterator[str]:
        """Yield content deltas as they arrive."""
        ...

    def chat_json(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        timeout_s: float | None = None,
    ) -> Any:
        """Ask for JSON and parse it, repairing common defects (code fences, trailing commas)."""
        ...
