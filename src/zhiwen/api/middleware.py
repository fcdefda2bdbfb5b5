"""Pure-ASGI middleware: request context (id, metrics, access log, last-resort 500) and body limit.

* :class:`RequestContextMiddleware` — reads/creates ``X-Request-ID`` and returns it, sets the
  request-id and settings context variables (log lines and the :data:`zhiwen.httpkit.deps.Question`
  validator see them), counts ``zhiwen_http_requests_total`` / latency by route *template*, writes
  one access-log line, and turns any exception that escaped the app into a 500 envelope. A client
  that hangs up before its response is complete is logged and counted as 499 (nginx's "client
  closed request"), never as a 500: nothing failed on our side.
* :class:`BodyLimitMiddleware` — refuses bodies over ``settings.api.max_body_bytes`` with 413 /
  3005 *before* anything parses them: by ``Content-Length`` up front, and by counting the
  streamed bytes (chunked uploads) while buffering the body for the app.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import Callable
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from zhiwen.api.openai.errors import error_body as openai_error_body
from zhiwen.api.openai.errors import is_openai_path
from zhiwen.config import Settings
from zhiwen.errors import ZhiwenError
from zhiwen.httpkit.envelope import error_body
from zhiwen.httpkit.fields import current_settings_var
from zhiwen.logging import request_id_var
from zhiwen.metrics import HTTP_LATENCY, HTTP_REQUESTS

log = logging.getLogger("zhiwen.api.access")
_REQUEST_ID_RE = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")


async def send_json(
    send: Send, status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]]
) -> None:
    """Answer a request from a middleware (before routing) with a JSON body."""
    payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


def route_template(scope: Scope) -> str:
    """The matched route's path template (``/api/v1/kbs``), never the raw path (cardinality)."""
    route = scope.get("route")
    path = getattr(route, "path_format", None) or getattr(route, "path", None)
    if path:
        return str(path)
    if str(scope.get("path", "")).startswith("/static/"):
        return "/static/{path}"
    return "<unmatched>"


CLIENT_CLOSED = 499  # nginx's "client closed request": the client hung up before the response


class ClientClosed(ZhiwenError):
    """A route noticed the client hang up (its body stopped half way): 499, never logged as an error."""

    http_status = CLIENT_CLOSED
    user_message = "客户端已断开连接"


def _is_disconnect(exc: BaseException) -> bool:
    """The client went away (a read or write on its closed connection), not our failure."""
    from starlette.requests import ClientDisconnect

    if isinstance(exc, (ClientDisconnect, ConnectionError)):
        return True
    return type(exc).__name__ == "ClientDisconnected"  # uvicorn's, an OSError of its own


class _Exchange:
    """One request's receive/send, watched: the status sent, whether the response was complete,
    and whether the client hung up before that (``http.disconnect`` or a failed write)."""

    def __init__(self, receive: Receive, send: Send, rid_header: tuple[bytes, bytes]) -> None:
        self._receive = receive
        self._send = send
        self.rid_header = rid_header
        self.status = 500  # no response at all and no hang-up: something swallowed an error
        self.started = False
        self.complete = False
        self.client_left = False

    async def receive(self) -> Message:
        message = await self._receive()
        if message["type"] == "http.disconnect" and not self.complete:
            self.client_left = True
        return message

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.started = True
            self.status = int(message["status"])
            message = {**message, "headers": [*message.get("headers", []), self.rid_header]}
        elif message["type"] == "http.response.body" and not message.get("more_body", False):
            self.complete = True
        await self._send(message)

    async def fail(self, scope: Scope, request_id: str) -> None:
        """The last-resort 500 envelope, if nothing was sent yet."""
        if self.started:
            return
        self.status = 500
        body = error_body(1099, "服务暂时不可用，请稍后重试", {"request_id": request_id})
        if is_openai_path(str(scope.get("path", ""))):
            body = openai_error_body("服务暂时不可用，请稍后重试", "server_error", "internal_error")
        await send_json(self._send, 500, body, [self.rid_header])

    def final_status(self) -> int:
        return CLIENT_CLOSED if self.client_left else self.status


class RequestContextMiddleware:
    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = ""
        for key, value in scope.get("headers", ()):
            if key == b"x-request-id":
                incoming = value.decode("latin-1").strip()
                break
        request_id = incoming if _REQUEST_ID_RE.match(incoming) else uuid.uuid4().hex[:16]
        rid_token = request_id_var.set(request_id)
        settings_token = current_settings_var.set(self.settings)
        rid_header = (b"x-request-id", request_id.encode("latin-1"))
        exchange = _Exchange(receive, send, rid_header)
        t0 = time.perf_counter()
        try:
            await self.app(scope, exchange.receive, exchange.send)
        except Exception as exc:
            if exchange.client_left or _is_disconnect(exc):
                exchange.client_left = True  # what failed then was talking to a closed connection
                log.info(
                    "client left during %s %s (%s)",
                    scope.get("method"),
                    scope.get("path"),
                    type(exc).__name__,
                    exc_info=not _is_disconnect(exc),
                )
            else:
                log.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
                await exchange.fail(scope, request_id)
        finally:
            status = exchange.final_status()
            elapsed = time.perf_counter() - t0
            route = route_template(scope)
            method = str(scope.get("method", ""))
            HTTP_REQUESTS.labels(route=route, method=method, status=str(status)).inc()
            HTTP_LATENCY.labels(route=route, method=method).observe(elapsed)
            log.info(
                "%s %s %d %.1fms",
                method,
                scope.get("path"),
                status,
                elapsed * 1000,
                extra={"route": route, "status": status, "ms": round(elapsed * 1000, 1)},
            )
            current_settings_var.reset(settings_token)
            request_id_var.reset(rid_token)


class BodyLimitMiddleware:
    """``max_bytes`` for every request; ``limits`` raise it for path prefixes that carry more
    (chat histories on ``/v1/``, file uploads), checked longest prefix first."""

    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int,
        limits: dict[str, int] | None = None,
        streams_own_body: Callable[[str], bool] | None = None,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.limits = sorted((limits or {}).items(), key=lambda kv: -len(kv[0]))
        # routes that read and limit their own (large) bodies, e.g. file uploads: never buffered here
        self.streams_own_body = streams_own_body or (lambda _path: False)

    def limit_for(self, path: str) -> int:
        return next((n for prefix, n in self.limits if path.startswith(prefix)), self.max_bytes)

    async def _too_large(self, scope: Scope, send: Send, size: int | None, limit: int) -> None:
        message = f"请求内容过大（上限 {limit // 1024} KB）"
        if is_openai_path(str(scope.get("path", ""))):
            body = openai_error_body(message, "invalid_request_error", "request_too_large")
        else:
            body = error_body(
                3005, message, {"max_bytes": limit, **({"content_length": size} if size is not None else {})}
            )
        await send_json(send, 413, body, [(b"connection", b"close")])

    def _passes_through(self, scope: Scope) -> bool:
        """Requests without a body to bound (or whose route streams its own, bounded itself)."""
        return (
            scope["type"] != "http"
            or scope.get("method") in ("GET", "HEAD", "OPTIONS")
            or self.streams_own_body(str(scope.get("path", "")))
        )

    @staticmethod
    def _declared_length(scope: Scope) -> int | None:
        for key, value in scope.get("headers", ()):
            if key == b"content-length":
                try:
                    return int(value)
                except ValueError:
                    return -1
        return None

    @staticmethod
    async def _buffered(receive: Receive, limit: int) -> bytes | int | None:
        """The whole body; past ``limit`` the size read so far (an int); None if the client left."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                return size
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._passes_through(scope):
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(str(scope.get("path", "")))
        declared = self._declared_length(scope)
        if declared is not None and declared > limit:
            await self._too_large(scope, send, declared, limit)
            return
        # Buffer the (small, bounded) body so an oversized chunked upload is refused before the
        # app parses a single byte of it.
        body = await self._buffered(receive, limit)
        if body is None:
            return
        if isinstance(body, int):
            await self._too_large(scope, send, None, limit)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
