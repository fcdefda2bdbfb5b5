"""Input hygiene for every route at once: text that cannot be encoded never reaches a handler.

A lone surrogate (JSON ``"\\udcff"``) or a NUL (``"\\u0000"``, ``%00``) in any string of a JSON
body — a query, a question, a chat message, a settings value, a key — or in the path or query
string is refused before routing with 422 / 3002 ``参数类型错误：question（含有无法编码的字符
U+DCFF，请使用 UTF-8 文本）``, or under ``/v1/`` OpenAI's 400 ``invalid_request_error`` naming
the parameter. Every later step (tokenizer, store, logs, the response) would fail on such text
with a 500.

The body check is cheap: the raw bytes are scanned for ``\\u0000`` / ``\\uD8xx``–``\\uDFxx``
escapes first, and only a body that has one is parsed (a valid surrogate pair, an emoji, passes).
The body is buffered by :class:`~zhiwen.api.middleware.BodyLimitMiddleware` (bounded) and replayed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from zhiwen.api.middleware import send_json
from zhiwen.api.openai.errors import error_body as openai_error_body
from zhiwen.api.openai.errors import is_openai_path
from zhiwen.httpkit.envelope import error_body
from zhiwen.resilience.text import bad_char, find_unencodable, json_may_hold_unencodable, unencodable_error

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def check_request(scope: Scope, body: bytes | None) -> tuple[str, str] | None:
    """(field, character) of the first unencodable text in the request, or None."""
    path = str(scope.get("path", ""))
    char = bad_char(path)
    if char:
        return "path", char
    raw_query = bytes(scope.get("query_string", b""))
    if b"%00" in raw_query or b"\x00" in raw_query:
        return "query", "\x00"
    if body and json_may_hold_unencodable(body):
        try:
            parsed: Any = json.loads(body)
        except ValueError:
            return None  # the route reports malformed JSON as usual
        return find_unencodable(parsed)
    return None


class InputHygieneMiddleware:
    """``streams_own_body(path)``: routes that read their own large bodies (uploads) — their
    bodies are not buffered here; every other body is (the body limit already holds it), whatever
    its content type says: a route may parse any body as JSON."""

    def __init__(self, app: ASGIApp, streams_own_body: Callable[[str], bool] | None = None) -> None:
        self.app = app
        self.streams_own_body = streams_own_body or (lambda _path: False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body: bytes | None = None
        replay = receive
        if scope.get("method") in _BODY_METHODS and not self.streams_own_body(str(scope.get("path", ""))):
            chunks: list[bytes] = []
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    break
            body = b"".join(chunks)
            replay = _replayer(body, receive)
        found = check_request(scope, body)
        if found is None:
            await self.app(scope, replay, send)
            return
        field, char = found
        error = unencodable_error(field, char)
        if is_openai_path(str(scope.get("path", ""))):
            payload = openai_error_body(error.message, "invalid_request_error", "invalid_type", field)
            await send_json(send, 400, payload, [])
            return
        await send_json(send, 422, error_body(error.code, error.message, {"field": field}), [])


def _replayer(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
