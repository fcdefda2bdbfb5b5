"""A small OpenAI-compatible server for tests: scripted replies and faults, call counting.

Runs ``POST /v1/chat/completions`` and ``POST /v1/embeddings`` in a background thread on
``127.0.0.1`` (random port). Each request takes the next scripted :class:`Reply` (or the default
one once the script is used up); ``stream: true`` requests get the reply as SSE chunks — content
pieces, tool calls in fragments (``delta.tool_calls`` by index), a ``finish_reason`` chunk, a usage
chunk when ``stream_options.include_usage`` asks for it (unless ``usage_in_stream=False``: a
server that ignores it) — ending with ``data: [DONE]``. Every request body is kept in
``requests`` (so tests can check what was sent, e.g. ``stop``). Embeddings are deterministic
vectors of ``embedding_dim`` floats.

Faults (``Reply.fault(kind)``): ``hang`` (sleeps ``delay_s`` before answering; stopping the server
wakes it), ``500``, ``503``, ``429`` (with ``Retry-After``), ``401``, ``404``, ``malformed`` (200 with a
non-JSON body), ``empty`` (content ""), ``bad_json`` (content that is no JSON), ``drop`` (closes
the connection without answering), ``broken_stream`` (SSE that stops mid-way with garbage),
``drip`` (headers at once, then the body one byte every ``drip_s`` seconds), ``truncated`` (a
reply cut off: a JSON body shorter than its ``Content-Length``, or an SSE stream that stops
after its first chunks without ``[DONE]``; the connection is closed either way).

Example::

    with FakeOpenAI() as fake:
        fake.script(Reply.fault("500"), Reply("你好"))
        client = OpenAIChatClient(base_url=fake.base_url, model="fake", backoff_base_s=0.01)
        assert client.chat([{"role": "user", "content": "hi"}]).content == "你好"
        assert fake.calls == 2
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULTS = (
    "hang",
    "500",
    "503",
    "429",
    "401",
    "404",
    "malformed",
    "empty",
    "bad_json",
    "drop",
    "broken_stream",
    "drip",
    "truncated",
)


@dataclass
class Reply:
    content: str = "好的。"
    tool_calls: list[dict[str, Any]] | None = None
    status: int = 200
    raw_body: str | None = None  # sent verbatim instead of a completion
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    prompt_tokens: int = 11
    completion_tokens: int = 7
    chunk_chars: int = 4  # streaming chunk size
    kind: str = "ok"
    usage_in_stream: bool = True  # False: ignore stream_options.include_usage
    drip_s: float = 0.0  # > 0: send the body one byte at a time, this far apart
    finish_reason: str | None = None  # default: "tool_calls" with tool calls, else "stop"

    @classmethod
    def fault(cls, kind: str, *, delay_s: float = 30.0) -> Reply:
        make = _FAULT_REPLIES.get(kind)
        if make is None:
            raise ValueError(f"unknown fault {kind!r}; one of {FAULTS}")
        return make(delay_s)

    @classmethod
    def tool_call(cls, name: str, arguments: dict[str, Any] | str, call_id: str = "call_1") -> Reply:
        args = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        return cls(
            content="",
            tool_calls=[{"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}],
        )


def _error(status: int, message: str, kind: str, **extra: Any) -> Reply:
    return Reply(status=status, raw_body=json.dumps({"error": {"message": message}}), kind=kind, **extra)


# each fault's reply, made afresh per call (tests change a reply's headers)
_FAULT_REPLIES: dict[str, Callable[[float], Reply]] = {
    "hang": lambda delay_s: Reply(delay_s=delay_s, kind="hang"),
    "500": lambda _: _error(500, "internal error", "500"),
    "503": lambda _: _error(503, "internal error", "503"),
    "429": lambda _: _error(429, "rate limit", "429", headers={"Retry-After": "0"}),
    "401": lambda _: _error(401, "invalid api key", "401"),
    "404": lambda _: _error(404, "model not found", "404"),
    "malformed": lambda _: Reply(raw_body='{"choices": [{"message": {"content": "oops"', kind="malformed"),
    "empty": lambda _: Reply(content="", kind="empty"),
    "bad_json": lambda _: Reply(content="这不是 JSON，抱歉。", kind="bad_json"),
    "drop": lambda _: Reply(kind="drop"),
    "broken_stream": lambda _: Reply(kind="broken_stream"),
    "truncated": lambda _: Reply(content="被截断的回答。" * 10, kind="truncated"),
    "drip": lambda _: Reply(content="一点一点地说。" * 20, drip_s=1.0, kind="drip"),
}


class FakeOpenAI:
    """The server; use as a context manager or call :meth:`start` / :meth:`stop`."""

    def __init__(self, default: Reply | str | None = None, *, embedding_dim: int = 8) -> None:
        if isinstance(default, str):
            default = Reply(default)
        self.default = default or Reply()
        self.embedding_dim = embedding_dim
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- control -------------------------------------------------------------------------------
    @property
    def calls(self) -> int:
        with self._lock:
            return len(self.requests)

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *replies: Reply | str) -> FakeOpenAI:
        with self._lock:
            for r in replies:
                self._script.append(Reply(r) if isinstance(r, str) else r)
        return self

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self.headers.clear()

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            return self._script.popleft() if self._script else self.default

    def start(self) -> FakeOpenAI:
        self._stop.clear()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()  # wake hanging handlers
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Server(ThreadingHTTPServer):
    fake: FakeOpenAI


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else every call waits ~40 ms for a delayed ACK

    server: _Server  # the one that holds the fake

    def log_message(self, format: str, *args: Any) -> None:  # silence stderr
        pass

    def do_POST(self) -> None:
        body = self._read_body()
        path = self.path.rstrip("/")
        if not path.endswith(("/chat/completions", "/embeddings")):
            self._send(404, '{"error": {"message": "not found"}}')
            return
        fake = self.server.fake
        reply = fake._next(body, {k.lower(): v for k, v in self.headers.items()})
        if reply.delay_s:
            fake._stop.wait(reply.delay_s)
        if reply.kind == "drop":
            self.close_connection = True
            self.connection.close()
        elif reply.raw_body is not None or reply.status != 200:
            self._send(reply.status, reply.raw_body or "{}", reply.headers)
        elif path.endswith("/embeddings"):
            text = json.dumps(_embeddings(body, fake.embedding_dim))
            self._send(200, text, reply.headers, drip_s=reply.drip_s)
        else:
            self._complete(body, reply)

    def _read_body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: dict[str, Any] = json.loads(raw or b"{}")
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        return body

    def _complete(self, body: dict[str, Any], reply: Reply) -> None:
        """A chat completion: streamed, cut short, or whole."""
        if body.get("stream"):
            self._stream(body, reply)
            return
        text = json.dumps(_completion(body, reply), ensure_ascii=False)
        if reply.kind == "truncated":
            self._send_truncated(text)
            return
        self._send(200, text, reply.headers, drip_s=reply.drip_s)

    def _send_truncated(self, text: str) -> None:
        data = text.encode("utf-8")
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

    def _send(
        self, status: int, text: str, headers: dict[str, str] | None = None, *, drip_s: float = 0.0
    ) -> None:
        data = text.encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self._write(data, drip_s)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _write(self, data: bytes, drip_s: float = 0.0) -> None:
        if drip_s <= 0:
            self.wfile.write(data)
            self.wfile.flush()
            return
        for i in range(len(data)):
            if self.server.fake._stop.wait(drip_s):
                return
            self.wfile.write(data[i : i + 1])
            self.wfile.flush()

    def _stream(self, body: dict[str, Any], reply: Reply) -> None:
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            events = _stream_events(body, reply)
            if reply.kind == "broken_stream":
                events = [*events[:1], "{not json"]
            elif reply.kind == "truncated":
                events = events[:2]  # no finish chunk, no [DONE]: the connection just ends
            for event in events:
                self._write(f"data: {event}\n\n".encode(), reply.drip_s)
                if self.server.fake._stop.is_set():
                    return
        except (BrokenPipeError, ConnectionResetError):
            pass


def _completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    finish = reply.finish_reason or "stop"
    if reply.tool_calls:
        message["tool_calls"] = reply.tool_calls
        message["content"] = reply.content or None
        finish = reply.finish_reason or "tool_calls"
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        },
    }


def _chunk(body: dict[str, Any], delta: dict[str, Any], finish: str | None = None) -> str:
    event = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "model": body.get("model"),
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return json.dumps(event, ensure_ascii=False)


def _stream_events(body: dict[str, Any], reply: Reply) -> list[str]:
    """The SSE ``data:`` payloads of a streamed reply, in order (``[DONE]`` last)."""
    text = reply.content
    step = max(1, reply.chunk_chars)
    events = [_chunk(body, {"content": text[i : i + step]}) for i in range(0, len(text), step)]
    for index, call in enumerate(reply.tool_calls or []):
        fn = call.get("function") or {}
        args = str(fn.get("arguments") or "")
        head = {"index": index, "id": call.get("id"), "type": "function"}
        events.append(
            _chunk(body, {"tool_calls": [{**head, "function": {"name": fn.get("name"), "arguments": ""}}]})
        )
        for i in range(0, len(args), step):
            frag = {"index": index, "function": {"arguments": args[i : i + step]}}
            events.append(_chunk(body, {"tool_calls": [frag]}))
    finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
    events.append(_chunk(body, {}, finish))
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    if include_usage and reply.usage_in_stream:
        usage = {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens}
        events.append(json.dumps({"id": "chatcmpl-fake", "choices": [], "usage": usage}))
    events.append("[DONE]")
    return events


def _embeddings(body: dict[str, Any], dim: int) -> dict[str, Any]:
    inputs = body.get("input")
    texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
    data = []
    for i, text in enumerate(texts):
        seed = sum(ord(c) for c in str(text)) + 1
        data.append(
            {
                "object": "embedding",
                "index": i,
                "embedding": [((seed * (j + 3)) % 17) - 8.0 for j in range(dim)],
            }
        )
    usage = {"prompt_tokens": len(texts), "total_tokens": len(texts)}
    return {"object": "list", "data": data, "model": body.get("model"), "usage": usage}
