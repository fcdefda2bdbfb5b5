"""A recording proxy on loopback between zhiwen and a real OpenAI-compatible server (#31).

Every ``POST …/chat/completions`` is forwarded to the upstream server unchanged and answered with
its reply (a streamed reply is passed on whole, once complete); each call is kept as a
:class:`Call`: which LLM path made it (read from the prompt: every path has its own system
prompt), the status, the reply's text and tool calls, ``finish_reason`` and the seconds it took.
So the bench and the ``llm_real`` tests see what the model really returned without touching
``src/``.

Example::

    with RecordingProxy("http://127.0.0.1:8931/v1") as proxy:
        settings = Settings(llm=LLMSettings(base_url=proxy.base_url, model="gemma-3-270m"))
        ...                                     # run a zhiwen path
        calls = proxy.take()                    # the calls since the last take()
        calls[0].stage, calls[0].content, calls[0].finish_reason
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: (a piece of the prompt, the path it belongs to), first match wins
STAGES: tuple[tuple[str, str], ...] = (
    ("你负责改写对话中的最后一个问题", "condense"),
    ("出入境政策检索助手", "policy.rewrite"),
    ("你是问题分类器", "policy.intent"),
    ("菜谱问答系统的查询分类器", "recipes.route"),
    ("房产需求分析助手", "listings.extract"),
    ("专业、热情的房产顾问", "listings.answer"),
    ("购房咨询的意图分类器", "advisor.plan"),
    ("轮讨论中", "advisor.discussion"),
    ("写作要求：用简洁自然的中文回答", "advisor.role"),
    ("You are a domain expert in", "answer"),
)


def stage_of(body: dict[str, Any]) -> str:
    """Which path made a request (its prompt); ``tools.loop`` when it offers tools."""
    if body.get("tools"):
        return "tools.loop"
    text = "\n".join(str(m.get("content") or "") for m in body.get("messages") or [])
    return next((stage for needle, stage in STAGES if needle in text), "other")


@dataclass(slots=True)
class Call:
    stage: str
    status: int
    content: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str | None = None
    seconds: float = 0.0
    stream: bool = False
    error: str | None = None  # transport failure or the server's error body
    request: dict[str, Any] = field(default_factory=dict)

    def failure(self) -> str | None:
        """Why this call gave zhiwen nothing usable at the HTTP level (None: a normal reply)."""
        if self.error:
            return f"http_{self.status}" if self.status else "unreachable"
        if not self.content.strip() and not self.tool_calls:
            return "empty"
        return None

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in ("stage", "status", "content", "tool_calls", "finish_reason")}
        out.update(seconds=round(self.seconds, 3), stream=self.stream, error=self.error)
        out["messages"] = [
            {"role": m.get("role"), "content": str(m.get("content") or "")[:600]}
            for m in self.request.get("messages") or []
        ]
        return out


def _from_completion(call: Call, body: dict[str, Any]) -> None:
    choice = (body.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    call.content = str(message.get("content") or "")
    call.tool_calls = list(message.get("tool_calls") or [])
    call.finish_reason = choice.get("finish_reason")


def _from_stream(call: Call, raw: str) -> None:
    parts: list[str] = []
    for line in raw.splitlines():
        if not line.startswith("data:") or line.strip() == "data: [DONE]":
            continue
        try:
            chunk = json.loads(line[5:])
        except ValueError:
            continue
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            parts.append(str(delta.get("content") or ""))
            call.tool_calls += list(delta.get("tool_calls") or [])
            call.finish_reason = choice.get("finish_reason") or call.finish_reason
    call.content = "".join(parts)


class RecordingProxy:
    """A loopback HTTP proxy to ``upstream`` (an OpenAI ``/v1`` base URL) that keeps every call."""

    def __init__(self, upstream: str, *, timeout_s: float = 600.0) -> None:
        self.upstream = upstream.rstrip("/")
        self.timeout_s = timeout_s
        self._calls: list[Call] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def take(self) -> list[Call]:
        """The calls since the last ``take()``, oldest first (and forget them)."""
        with self._lock:
            calls, self._calls = self._calls, []
        return calls

    def peek(self) -> list[Call]:
        with self._lock:
            return list(self._calls)

    def _forward(self, path: str, body: bytes) -> tuple[int, str, bytes]:
        url = self.upstream + path.split("/v1", 1)[-1]
        req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                return resp.status, resp.headers.get("Content-Type", "application/json"), resp.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers.get("Content-Type", "application/json"), exc.read()

    def _record(self, request: dict[str, Any], status: int, payload: bytes, seconds: float) -> None:
        call = Call(stage_of(request), status, seconds=seconds, stream=bool(request.get("stream")))
        call.request = request
        text = payload.decode("utf-8", "replace")
        if status != 200:
            call.error = text[:300]
        elif call.stream:
            _from_stream(call, text)
        else:
            try:
                _from_completion(call, json.loads(text))
            except ValueError:
                call.error = "non-JSON body"
        with self._lock:
            self._calls.append(call)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                started = time.perf_counter()
                try:
                    status, ctype, payload = proxy._forward(self.path, body)
                except OSError as exc:  # upstream down or timed out: the client sees a 502
                    status, ctype, payload = 502, "application/json", json.dumps({"error": str(exc)}).encode()
                try:
                    request = json.loads(body or b"{}")
                except ValueError:
                    request = {}
                if self.path.endswith("/chat/completions"):
                    proxy._record(request, status, payload, time.perf_counter() - started)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:  # the client gave up (its deadline passed)
                    pass

        return Handler
