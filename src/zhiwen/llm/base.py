"""The chat-model contract every app uses (implemented by :mod:`zhiwen.llm`).

Apps call :func:`zhiwen.llm.get_llm` which returns ``None`` when no LLM is
configured; they must then compose an extractive answer and say so (``llm_used: false``).
Failures raise :class:`zhiwen.errors.LLMError` subclasses (codes 1001/1002/1003/1099).

``stream`` yields content text only; ``stream_events`` yields typed events: :class:`ContentDelta`
as text arrives, :class:`ToolCallCompleted` once a streamed tool call is whole, and exactly one
:class:`StreamFinished` last (finish reason, token usage when the server reports it).

Example::

    llm = get_llm(settings)
    if llm is not None:
        reply = llm.chat([{"role": "user", "content": "你好"}], stop=["。"])
        print(reply.content)
        for event in llm.stream_events(messages, tools=tools):
            match event:
                case ContentDelta(text=text):
                    print(text, end="")
                case ToolCallCompleted(call=call):
                    run_tool(call.name, call.arguments)
                case StreamFinished(finish_reason=reason, prompt_tokens=p, completion_tokens=c):
                    log(reason, p, c)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

Message = dict[str, Any]  # OpenAI chat format: {"role": ..., "content": ..., "tool_calls"?: ...}
Stop = str | Sequence[str] | None  # OpenAI ``stop``: one sequence or up to four


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


@dataclass(frozen=True, slots=True)
class ContentDelta:
    """A piece of the reply's text."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallCompleted:
    """A tool call whose streamed fragments are complete (arguments parsed)."""

    call: ToolCall


@dataclass(frozen=True, slots=True)
class StreamFinished:
    """The last event of a stream; token counts are None when the server sent no usage."""

    finish_reason: str | None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


StreamEvent = ContentDelta | ToolCallCompleted | StreamFinished


class ChatModel(Protocol):
    model: str

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
    ) -> ChatResult: ...

    def stream(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        stop: Stop = None,
        timeout_s: float | None = None,
    ) -> Iterator[str]:
        """Yield content deltas as they arrive."""
        ...

    def stream_events(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        stop: Stop = None,
        timeout_s: float | None = None,
    ) -> Iterator[StreamEvent]:
        """Yield :data:`StreamEvent` s; the last one is always a :class:`StreamFinished`."""
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
