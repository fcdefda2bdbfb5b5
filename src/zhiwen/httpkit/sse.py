"""Server-sent events of an answer stream (:class:`zhiwen.answer.events.AppEvent`).

:func:`to_sse` frames an event for
``sse_starlette.EventSourceResponse``: the SSE ``event:`` field carries the type and the
``data:`` JSON carries it too (``{"type": "delta", "text": "…"}``), so clients that read event
names and clients that only read ``data:`` lines (the advisor's chat client) both work.

Example::

    >>> to_sse(AppEvent("delta", {"text": "你好"}))
    {'event': 'delta', 'data': '{"type": "delta", "text": "你好"}'}

    async def events():
        async for event in iterate_in_threadpool(app.stream(request, ctx)):
            yield to_sse(event)
    return EventSourceResponse(events(), ping=15)
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

from starlette.concurrency import iterate_in_threadpool

from zhiwen.answer.events import AppEvent
from zhiwen.errors import ZhiwenError

__all__ = ["SSE_RESPONSE", "error_event", "sse_stream", "to_sse"]

SERVER_BUSY_MESSAGE = "服务暂时不可用，请稍后重试"


def to_sse(event: AppEvent) -> dict[str, str]:
    return {"event": event.type, "data": json.dumps(event.to_dict(), ensure_ascii=False, default=str)}


def error_event(exc: BaseException) -> AppEvent:
    """An in-band error (the stream has started, so the status code is already sent)."""
    if isinstance(exc, ZhiwenError):
        data: dict[str, Any] = {"code": exc.code, "message": exc.message}
        if exc.detail:
            data["data"] = {"detail": exc.detail}
        return AppEvent("error", data)
    return AppEvent(
        "error", {"code": 1099, "message": SERVER_BUSY_MESSAGE, "data": {"detail": type(exc).__name__}}
    )


async def sse_stream(events: Iterator[AppEvent], *, log: Any = None) -> AsyncIterator[dict[str, str]]:
    """Run a blocking event iterator in the thread pool and frame each event for SSE.

    Any failure after the first byte becomes an ``error`` event, never a broken connection.
    """
    try:
        async for event in iterate_in_threadpool(events):
            yield to_sse(event)
    except Exception as exc:
        if log is not None:
            if isinstance(exc, ZhiwenError):
                log.warning("stream failed: %s", exc)
            else:
                log.exception("stream failed unexpectedly")
        yield to_sse(error_event(exc))


#: the OpenAPI description of a streamed answer (``responses=SSE_RESPONSE`` on a streaming route)
SSE_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "``stream: true``：服务器推送事件（SSE），每个事件的 data 为带 type 字段的 JSON",
        "content": {
            "text/event-stream": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "event": {"type": "string", "description": "事件类型，与 data 中的 type 相同"},
                        "data": {"type": "string", "contentMediaType": "application/json"},
                    },
                    "required": ["data"],
                }
            }
        },
    }
}
