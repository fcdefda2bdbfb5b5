"""A TEI-style ``POST /rerank`` server on loopback that REVERSES the order it is given.

Any real reranker reorders the fused list; this one does it deterministically (the last
candidate scores highest), so a test can tell whether an entry point reranked at all.

Faults: ``delay_s`` (wait that long before answering — a hung reranker; stopping the server wakes
it) and ``status`` (answer with that HTTP status instead).

Example::

    with FakeReranker() as fake:
        svc.update({"rerank": {"enabled": True, "backend": "remote", "endpoint": fake.url,
                               "score_threshold": -1.0}})
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeReranker:
    def __init__(self, *, delay_s: float = 0.0, status: int = 200) -> None:
        self.calls = 0
        self.queries: list[str] = []
        self.delay_s = delay_s
        self.status = status
        self._stop = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body: dict[str, Any] = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.calls += 1
                outer.queries.append(str(body.get("query")))
                if outer.delay_s and outer._stop.wait(outer.delay_s):
                    return
                if outer.status != 200:
                    self.send_response(outer.status)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"{}")
                    return
                texts = body.get("texts") or body.get("documents") or []
                n = max(len(texts), 1)
                scores = [{"index": i, "score": (i + 1) / n} for i in range(len(texts))]
                data = json.dumps(scores).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/rerank"

    def __enter__(self) -> FakeReranker:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()  # wake hanging handlers
        self._server.shutdown()
        self._server.server_close()
