"""An answer's event stream as OpenAI ``chat.completion.chunk`` server-sent events.

Every answerer's events become content deltas of ONE assistant message. What an event adds to
the text is the answerer's own hook (:meth:`zhiwen.appkit.app.BaseApp.event_text`: ``delta``
events by default; an app renders its own events, e.g. role headings); the closing ``done``
event carries the :class:`~zhiwen.answer.model.Answer` — the same object the non-streamed call
returns — from which the citations, the closing text and the ``zhiwen`` extension are built.

| event | chunk |
|-------|-------|
| any event the answerer renders as text | ``delta.content`` = that text |
| ``done`` | the closing text (sources footer / offline note), then the final chunk |
| ``error`` / an exception | ``data: {"error": {…}}`` (the SDKs raise it) |

The frames: a first chunk with ``delta.role = "assistant"``, the content chunks, a final chunk
with ``finish_reason: "stop"`` and the top-level ``citations`` and ``zhiwen`` extensions, then —
with ``stream_options.include_usage`` — a chunk with ``choices: []`` and ``usage`` (the other
chunks then carry ``usage: null``, as OpenAI's do), and always ``data: [DONE]``.

Example::

    >>> frames = list(completion_frames(events, state, ctx))
    >>> frames[-1]
    'data: [DONE]\\n\\n'
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from zhiwen.answer.events import AppEvent
from zhiwen.answer.model import Answer
from zhiwen.api.openai.answer import closing_text, number_citations, usage, zhiwen_info
from zhiwen.api.openai.errors import SERVER_ERROR, describe_zhiwen_error, error_body
from zhiwen.appkit.app import AppContext, EventText, delta_text
from zhiwen.errors import ZhiwenError
from zhiwen.httpkit.sse import SERVER_BUSY_MESSAGE

log = logging.getLogger(__name__)

DONE_FRAME = "data: [DONE]\n\n"


@dataclass(slots=True)
class StreamState:
    """One streamed completion: its identity, its text so far and the answer it closed with."""

    completion_id: str
    created: int
    model: str
    fingerprint: str
    include_usage: bool
    prompt_texts: list[str]
    app: str | None
    kb: str | None
    event_text: EventText = delta_text
    text: list[str] = field(default_factory=list)
    answer: Answer | None = None

    def frame(self, payload: dict[str, Any]) -> str:
        return f"data: {json.dumps(payload, ensure_ascii=False, default=str)}\n\n"

    def chunk(self, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        payload: dict[str, Any] = {
            "id": self.completion_id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": self.fingerprint,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if self.include_usage:
            payload["usage"] = None
        payload.update(extra)
        return self.frame(payload)

    def content(self, text: str) -> str | None:
        if not text:
            return None
        self.text.append(text)
        return self.chunk({"content": text})

    def read(self, event: AppEvent) -> str | None:
        """The content frame an event adds (None: it adds no text); keeps the closing answer."""
        if event.answer is not None:
            self.answer = event.answer
        return self.content(self.event_text(event))


def _final_frames(state: StreamState, ctx: AppContext) -> Iterator[str]:
    text = "".join(state.text)
    answer = state.answer or Answer(answer=text, extractive_reason="no_llm")
    cited = number_citations(answer.citations, ctx)
    tail = closing_text(answer, text, cited)
    frame = state.content(tail)
    if frame:
        yield frame
    info = zhiwen_info(answer, app=state.app, kb=state.kb)
    yield state.chunk(
        {},
        "stop",
        citations=[c.model_dump() for c in cited],
        zhiwen=info.model_dump(),
    )
    if state.include_usage:
        used = usage(state.prompt_texts, "".join(state.text))
        yield state.frame(
            {
                "id": state.completion_id,
                "object": "chat.completion.chunk",
                "created": state.created,
                "model": state.model,
                "system_fingerprint": state.fingerprint,
                "choices": [],
                "usage": used.model_dump(),
            }
        )


def error_frame(state: StreamState, exc: BaseException) -> str:
    if isinstance(exc, ZhiwenError):
        _, body = describe_zhiwen_error(exc)
    else:
        body = error_body(SERVER_BUSY_MESSAGE, SERVER_ERROR, "internal_error")
    return state.frame(body)


def completion_frames(events: Iterator[AppEvent], state: StreamState, ctx: AppContext) -> Iterator[str]:
    """SSE frames of one completion; never raises (a failure becomes an error frame + [DONE])."""
    yield state.chunk({"role": "assistant", "content": ""})
    try:
        for event in events:
            if event.type == "error":
                message = str(event.data.get("message") or SERVER_BUSY_MESSAGE)
                yield state.frame(error_body(message, SERVER_ERROR, "app_error"))
                yield DONE_FRAME
                return
            frame = state.read(event)
            if frame:
                yield frame
        yield from _final_frames(state, ctx)
    except Exception as exc:
        if isinstance(exc, ZhiwenError):
            log.warning("chat completion stream failed: %s", exc)
        else:
            log.exception("chat completion stream failed unexpectedly")
        yield error_frame(state, exc)
    yield DONE_FRAME
