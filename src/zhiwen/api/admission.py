"""Per request: one deadline, admission by kind of work, and what degraded.

:class:`AdmissionMiddleware` wraps every request that does real work (:func:`~zhiwen.resilience.
admission.work_kind`: ``answer`` or ``search``):

1. opens the request's one deadline (``resilience.request_timeout_s``, default ``llm.timeout_s``)
   — every LLM call, rerank, embedding call and search wait inside takes what is left of it;
2. takes a slot of its kind, waiting at most ``resilience.queue_wait_s`` (and never past the
   deadline); a full queue is answered at once with 503 + ``Retry-After``
   (``{code: 1099, message: "服务繁忙：问答请求排队已满，请 2 秒后重试", data: {work, retry_after_s}}``,
   OpenAI's shape under ``/v1/``) — latency stays bounded instead of growing with the backlog;
3. records what degraded (:mod:`zhiwen.resilience.degraded`) and reports it on the response in
   ``X-Zhiwen-Degraded: llm=timeout, rerank=busy`` (every route, apps included).

``/healthz``, ``/metrics``, reads, the admin API and uploads are never queued.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from zhiwen.api.middleware import send_json
from zhiwen.api.openai.errors import error_body as openai_error_body
from zhiwen.api.openai.errors import is_openai_path
from zhiwen.config import Settings
from zhiwen.httpkit.envelope import error_body
from zhiwen.metrics import REJECTED
from zhiwen.resilience import ServiceBusy, degraded_scope, get_resilience, request_timeout_s, work_kind
from zhiwen.resilience.degraded import HEADER, DegradedRecord
from zhiwen.retry import deadline_scope

_HEADER = HEADER.lower().encode("latin-1")


class AdmissionMiddleware:
    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        kind = work_kind(str(scope.get("method", "")), str(scope.get("path", "")))
        with degraded_scope() as record:
            reporting = _reporting(send, record)
            if kind is None:
                await self.app(scope, receive, reporting)
                return
            registry = get_resilience()
            gate = registry.admission(kind)
            with deadline_scope(request_timeout_s(self.settings)) as deadline:
                try:
                    await gate.acquire(min(registry.cfg.queue_wait_s, max(0.0, deadline.remaining())))
                except ServiceBusy as busy:
                    REJECTED.labels(kind=kind, by="admission").inc()
                    await _refuse(scope, send, busy)
                    return
                try:
                    await self.app(scope, receive, reporting)
                finally:
                    gate.release()


def _reporting(send: Send, record: DegradedRecord) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            value = record.header()
            if value:
                message = {**message, "headers": [*message.get("headers", []), (_HEADER, value.encode())]}
        await send(message)

    return wrapped


async def _refuse(scope: Scope, send: Send, busy: ServiceBusy) -> None:
    headers = [(b"retry-after", str(busy.retry_after_s).encode())]
    if is_openai_path(str(scope.get("path", ""))):
        body = openai_error_body(busy.message, "server_error", "service_unavailable")
    else:
        body = error_body(busy.code, busy.message, busy.data)
    await send_json(send, 503, body, headers)
