"""Issue 29: a client that hangs up mid-request is a 499 in the access log and ``/metrics``, never a
500 — a search whose body never arrives whole, and an upload cut off half way (which also leaves
nothing spooled)."""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.live_zhiwen import LiveServer


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    srv = LiveServer(tmp_path / "home", tmp_path / "server.log")
    try:
        yield srv.start()
    finally:
        srv.stop()


def hang_up(server: LiveServer, head: bytes, partial_body: bytes) -> None:
    """Send the request line, headers and part of the body, then close the connection."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(head + partial_body)
        time.sleep(0.3)


def count(metrics: str, status: str) -> float:
    pattern = rf'^zhiwen_http_requests_total\{{.*status="{status}".*\}} ([0-9.e+]+)$'  # a route holds {kb}
    return sum(float(m.group(1)) for m in re.finditer(pattern, metrics, re.M))


def test_a_client_that_hangs_up_is_499_not_500(server: LiveServer, tmp_path: Path) -> None:
    hang_up(
        server,
        b"POST /knowledge-base/search HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
        b'{"kb": "demo", "query": "',
    )
    boundary = b"zhiwenboundary"
    part = (
        b"--" + boundary + b'\r\nContent-Disposition: form-data; name="files"; filename="big.txt"\r\n'
        b"Content-Type: text/plain\r\n\r\n" + "公积金".encode() * 40_000
    )
    hang_up(
        server,
        b"POST /api/v1/kbs/cut/documents HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: multipart/form-data; boundary=" + boundary + b"\r\n"
        b"Content-Length: 5000000\r\n\r\n",
        part,
    )
    deadline = time.monotonic() + 15
    metrics = server.metrics()
    while count(metrics, "499") < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
        metrics = server.metrics()
    assert count(metrics, "499") == 2, metrics
    assert count(metrics, r"5\d\d") == 0, metrics
    uploads = server.home / "uploads"
    assert not uploads.exists() or not any(uploads.iterdir())
    log = server.log.read_text("utf-8", errors="replace")
    assert " 499 " in log and "Traceback" not in log, log[-3000:]
