"""Issue 4's done-when checks against a real ``zhiwen serve`` process on loopback.

One server (the sample KB ``demo`` built with the instant ``hash`` embedder), then a restart
over the same home to show that admin settings survive it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from support.cli_zygote import Forked
from support.live_zhiwen import spawn_serve
from zhiwen.cli.serve import ensure_demo_kb
from zhiwen.config import Settings

TOKEN = "live-token"
AUTH = {"authorization": f"Bearer {TOKEN}"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, home: Path, log: Path) -> None:
        self.home = home
        self.log = log
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | Forked | None = None

    def start(self) -> None:
        env = {
            **os.environ,
            "ZHIWEN_HOME": str(self.home),
            "ZHIWEN_API__ADMIN_TOKEN": TOKEN,
            "ZHIWEN_EMBEDDING__PROVIDER": "hash",
            "HF_HUB_OFFLINE": "1",  # never reach the network
        }
        env.pop("ZHIWEN_LLM__BASE_URL", None)
        with self.log.open("ab") as fh:  # forked from a pre-imported zhiwen (support.live_zhiwen)
            self.proc = spawn_serve(self.port, env=env, cwd=self.home.parent, log=fh.fileno())
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.log.read_text(errors='replace')[-2000:]}")
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.3)
        raise RuntimeError("server did not start in 90 s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("live") / "home"
    ensure_demo_kb(Settings(home=home), embedder="hash", progress=False)
    srv = Server(home, home.parent / "server.log")
    srv.start()
    yield srv
    srv.stop()


def post(server: Server, body: Any = None, *, content: bytes | None = None, **kw: Any) -> httpx.Response:
    # an admin token is configured: every route but /healthz and the UI needs a bearer (#29)
    headers = {"content-type": "application/json", **AUTH, **kw.pop("headers", {})}
    if content is None:
        return httpx.post(server.url + "/knowledge-base/search", json=body, headers=headers, timeout=30, **kw)
    return httpx.post(
        server.url + "/knowledge-base/search", content=content, headers=headers, timeout=30, **kw
    )


def envelope(resp: httpx.Response) -> dict[str, Any]:
    body = resp.json()
    assert set(body) == {"code", "message", "data"}, body
    return body


@pytest.mark.parametrize(
    ("name", "request_kwargs", "status", "code", "part"),
    [
        ("bad json", {"content": b'{"kb": "demo", "query": '}, 400, 3002, "JSON"),
        (
            "wrong type",
            {"body": {"kb": "demo", "query": "安装", "top_k": "abc"}},
            422,
            3002,
            "参数类型错误：top_k",
        ),
        ("missing field", {"body": {"kb": "demo"}}, 422, 3001, "缺少必需参数：query"),
        ("100 KB query", {"body": {"kb": "demo", "query": "长" * 35_000}}, 413, 3005, "请求内容过大"),
        ("unknown kb", {"body": {"kb": "nokb", "query": "安装"}}, 404, 3004, "知识库不存在"),
        ("top_k=-1", {"body": {"kb": "demo", "query": "安装", "top_k": -1}}, 422, 3003, "top_k"),
    ],
)
def test_bad_requests_get_4xx_envelopes(
    server: Server, name: str, request_kwargs: dict[str, Any], status: int, code: int, part: str
) -> None:
    resp = post(server, **request_kwargs)
    assert resp.status_code == status, (name, resp.text)
    body = envelope(resp)
    assert body["code"] == code and part in body["message"], (name, body)


def test_chunked_100kb_upload_refused(server: Server) -> None:
    def gen() -> Iterator[bytes]:
        yield b'{"kb": "demo", "query": "'
        for _ in range(100):
            yield b"x" * 1024
        yield b'"}'

    resp = post(server, content=b"".join(gen()))  # with Content-Length
    assert resp.status_code == 413
    resp = httpx.post(
        server.url + "/knowledge-base/search",
        content=gen(),
        headers={"content-type": "application/json", "authorization": f"Bearer {TOKEN}"},
    )  # chunked
    assert resp.status_code == 413 and envelope(resp)["code"] == 3005


def test_search_ok_and_ui(server: Server) -> None:
    body = envelope(post(server, {"kb": "demo", "query": "如何创建知识库", "top_k": 3}))
    assert body["code"] == 0 and 1 <= len(body["data"]["results"]) <= 3
    assert body["data"]["results"][0]["doc_id"]
    assert "知问" in httpx.get(server.url + "/").text


def test_admin_change_visible_and_survives_restart(server: Server) -> None:
    url = server.url + "/admin/settings"
    assert envelope(httpx.get(url))["code"] == 3006
    assert (
        httpx.put(url, json={"retrieval": {"rrf_k": 5}}, headers={"Authorization": "Bearer nope"}).status_code
        == 401
    )
    auth = {"Authorization": f"Bearer {TOKEN}"}
    missing_model = str(server.home / "no-such-cross-encoder")
    patch = {"retrieval": {"rrf_k": 17, "fusion": "rrf"}, "rerank": {"enabled": True, "model": missing_model}}
    resp = httpx.put(url, json=patch, headers=auth)
    assert resp.status_code == 200, resp.text
    params = envelope(post(server, {"kb": "demo", "query": "安装", "top_k": 3}))["data"]["params"]
    assert params["rrf_k"] == 17 and params["fusion"] == "rrf" and params["rerank"]["enabled"] is True
    server.stop()
    server.start()
    data = envelope(post(server, {"kb": "demo", "query": "安装", "top_k": 3}))["data"]
    assert data["params"]["rrf_k"] == 17 and data["params"]["rerank"]["enabled"] is True
    # the configured cross-encoder does not exist: the search still answers, in fused order
    assert data["diagnostics"]["reranked"] is False and data["results"]


def test_no_500_anywhere(server: Server) -> None:
    metrics = httpx.get(server.url + "/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).text
    assert 'status="5' not in metrics
    assert "zhiwen_http_requests_total" in metrics
