"""An app's event stream as OpenAI ``chat.completion.chunk`` server-sent events.

Every app's events become content deltas of ONE assistant message:

| app event | chunk |
|-----------|-------|
| ``sources`` | (kept: they become ``citations`` on the final chunk) |
| ``meta`` (policy) | (not shown: the intent and rewrite are the app's own detail) |
| ``delta`` ``{text}`` | ``delta.content`` = text |
| ``role_start`` (advisor) | ``delta.content`` = ``### 💰 财务顾问`` heading |
| ``role_result`` (advisor) | ``delta.content`` = the role's message (its tool hits become citations) |
| ``discussion`` (advisor) | ``delta.content`` = ``- **甲 → 乙**（第1轮）：…`` under ``### 💬 专家讨论`` |
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

from zhiwen.api.openai.answer import closing_text, number_citations, usage, zhiwen_info
from zhiwen.api.openai.errors import SERVER_ERROR, describe_zhiwen_error, error_body
from zhiwen.appkit.app import AppContext, Citation
from zhiwen.appkit.events import SERVER_BUSY_MESSAGE, AppEvent
from zhiwen.errors import ZhiwenError

log = logging.getLogger(__name__)

DONE_FRAME = "data: [DONE]\n\n"


@dataclass(slots=True)
class StreamState:
    """One streamed completion: its identity and what the events told so far."""

    completion_id: str
    created: int
    model: str
    fingerprint: str
    include_usage: bool
    prompt_texts: list[str]
    app: str | None
    kb: str | None
    text: list[str] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    tool_citations: list[Citation] = field(default_factory=list)
    role_llm: list[bool] = field(default_factory=list)
    role_reasons: list[str] = field(default_factory=list)
    discussing: bool = False
    done: dict[str, Any] = field(default_factory=dict)

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

    def separated(self, text: str) -> str:
        return ("\n\n" + text) if self.text else text


def _citations_from_tool_calls(calls: Any) -> list[Citation]:
    """Search hits inside tool results (``{"result": {"kb", "hits": [{id, title, text, score}]}}``)."""
    out: list[Citation] = []
    for call in calls if isinstance(calls, list) else []:
        result = call.get("result") if isinstance(call, dict) else None
        if not isinstance(result, dict) or not isinstance(result.get("hits"), list):
            continue
        for hit in result["hits"]:
            if isinstance(hit, dict) and hit.get("id"):
                out.append(
                    Citation(
                        kb=result.get("kb"),
                        id=str(hit["id"]),
                        title=str(hit.get("title") or hit["id"]),
                        text=str(hit.get("text") or "")[:300],
                        score=hit.get("score") if isinstance(hit.get("score"), int | float) else None,
                    )
                )
    return out


def _event_text(state: StreamState, event: AppEvent) -> str:
    """The content an event adds (and what it tells the state)."""
    data = event.data
    if event.type == "delta":
        return str(data.get("text") or "")
    if event.type == "sources":
        state.citations = [Citation.model_validate(s) for s in data.get("sources") or []]
    elif event.type == "role_start":
        state.discussing = False
        heading = " ".join(str(x) for x in (data.get("icon"), data.get("name") or data.get("role")) if x)
        return state.separated(f"### {heading}\n")
    elif event.type == "role_result":
        state.tool_citations += _citations_from_tool_calls(data.get("tool_calls"))
        state.role_llm.append(bool(data.get("llm_used")))
        if data.get("fallback_reason"):
            state.role_reasons.append(str(data["fallback_reason"]))
        return str(data.get("content") or "")
    elif event.type == "discussion":
        state.tool_citations += _citations_from_tool_calls(data.get("tool_calls"))
        state.role_llm.append(bool(data.get("llm_used")))
        # one bullet list under one heading, as the non-streamed answer writes it
        head = "\n" if state.discussing else state.separated("### 💬 专家讨论\n\n")
        state.discussing = True
        who = f"**{data.get('from_name')} → {data.get('to_name')}**"
        return head + f"- {who}（第{data.get('round')}轮）：{data.get('content')}"
    elif event.type == "done":
        state.done.update(data)
    return ""


def _unique(citations: list[Citation]) -> list[Citation]:
    seen: set[str] = set()
    out = []
    for c in citations:
        if c.id not in seen:
            seen.add(c.id)
            out.append(c)
    return out


def _final_frames(state: StreamState, ctx: AppContext) -> Iterator[str]:
    done = state.done
    if "llm_used" in done:
        llm_used = bool(done["llm_used"])
        reason = done.get("extractive_reason")
    else:  # the advisor reports per role
        llm_used = any(state.role_llm)
        reason = state.role_reasons[0] if state.role_reasons else None
    cited = number_citations(_unique(state.citations or state.tool_citations), ctx)
    text = "".join(state.text)
    tail = closing_text(text, cited, llm_used=llm_used, reason=reason)
    frame = state.content(tail)
    if frame:
        yield frame
    info = zhiwen_info(
        app=state.app,
        kb=state.kb,
        llm_used=llm_used,
        reason=reason,
        data=done,
        params=done.get("params") if isinstance(done.get("params"), dict) else None,
    )
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
            frame = state.content(_event_text(state, event))
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
