"""Cross-site and DNS-rebinding protection (#29), on in every mode, and the doors on a real
``zhiwen serve`` on loopback.

* the site guard on its own (:class:`~zhiwen.api.security.SiteGuard`): which ``Host`` and which
  ``Origin`` / ``Referer`` pass;
* in-process: a foreign ``Host`` → 421 / 3014, a cross-site write → 403 / 3013 (OpenAI's shape
  under ``/v1/``), a configured CORS origin and curl-like requests pass;
* live (``zhiwen serve`` on 127.0.0.1): the same attacks without keys — nothing is uploaded or
  deleted — and, with scoped keys, every door of the issue: 401 without a key, 403 on another
  KB, read-only keys never write, a key that may write uploads and deletes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from support.live_zhiwen import LiveServer
from zhiwen.api.app import create_app
from zhiwen.api.security import SiteGuard, host_site, origin_site
from zhiwen.config import Settings
from zhiwen.documents import Document
from zhiwen.kb import close_all, open_kb

EVIL = "https://evil.example"
MD = ("说明.md", "# 安装\n\n运行 pip install zhiwen 即可安装。".encode())


def _guard(**api: Any) -> SiteGuard:
    return SiteGuard(Settings(api=api))


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("127.0.0.1:8000", True),
        ("localhost:8000", True),
        ("LOCALHOST", True),
        ("[::1]:8000", True),
        ("10.0.0.5:8000", True),  # the address this connection reached (below)
        ("evil.example", False),
        ("evil.example:8000", False),
        ("localhost.evil.example", False),
        ("127.0.0.1.nip.io", False),
        ("localhost@evil.example", False),
        ("10.0.0.6:8000", False),
        ("[::1", False),
        ("", False),
    ],
)
def test_host(host: str, allowed: bool) -> None:
    assert _guard().host_allowed(host, "10.0.0.5") is allowed


def test_configured_hosts() -> None:
    guard = _guard(allowed_hosts=["zhiwen.lan", "*.corp.example"], host="192.168.1.9")
    assert guard.host_allowed("zhiwen.lan:8000", None)
    assert guard.host_allowed("kb.corp.example", None)
    assert not guard.host_allowed("corp.example.evil.example", None)
    assert guard.host_allowed("192.168.1.9:8000", None)  # the bound address
    assert not guard.host_allowed("evil.example", None)
    assert _guard(allowed_hosts=["*"]).host_allowed("anything.example", None)
    assert not _guard(host="0.0.0.0").host_allowed("0.0.0.0", None)  # a wildcard bind names no host
    assert _guard().host_allowed(None, None)  # no Host at all: no browser, nothing to rebind


@pytest.mark.parametrize(
    ("headers", "allowed"),
    [
        ({}, True),  # curl, SDKs
        ({"origin": "http://127.0.0.1:8000"}, True),
        ({"referer": "http://127.0.0.1:8000/#kbs"}, True),
        ({"origin": "http://localhost:8000"}, False),  # another site than the page's own
        ({"origin": "http://127.0.0.1:9000"}, False),
        ({"origin": EVIL}, False),
        ({"referer": f"{EVIL}/page"}, False),
        ({"origin": "null"}, False),
        ({"origin": "file://"}, False),
        ({"sec-fetch-site": "cross-site"}, False),
        ({"sec-fetch-site": "same-origin"}, True),
        ({"origin": "https://kb.team.example"}, True),  # a configured CORS origin
        ({"origin": "https://kb.team.example:8443"}, False),
    ],
)
def test_origin(headers: dict[str, str], allowed: bool) -> None:
    guard = _guard(cors_origins=["https://kb.team.example"])
    assert guard.origin_allowed({"host": "127.0.0.1:8000", **headers}) is allowed


def test_sites() -> None:
    assert host_site("127.0.0.1:8000") == origin_site("http://127.0.0.1:8000/x?y") == "127.0.0.1:8000"
    assert host_site("zhiwen.example") == origin_site("https://zhiwen.example") == "zhiwen.example"
    assert host_site("[::1]:8000") == origin_site("http://[::1]:8000") == "[::1]:8000"
    assert origin_site("null") is None and origin_site("ftp://a") is None


# -- in-process ---------------------------------------------------------------------------------
@pytest.fixture
def open_client(zhiwen_home: Path) -> Iterator[TestClient]:
    """No key configured: the protection is on anyway."""
    settings = Settings(home=zhiwen_home, api={"cors_origins": ["https://kb.team.example"]})
    with TestClient(create_app(settings, app_routers=False), raise_server_exceptions=False) as client:
        yield client


def test_foreign_host_is_421_everywhere(open_client: TestClient) -> None:
    for path in ("/api/v1/kbs", "/healthz", "/"):
        resp = open_client.get(path, headers={"host": "evil.example"})
        assert resp.status_code == 421, path
        body = resp.json()
        assert (
            body["code"] == 3014 and "evil.example" in body["message"] and "allowed_hosts" in body["message"]
        )
    resp = open_client.get("/v1/models", headers={"host": "evil.example:8000"})
    assert resp.status_code == 421 and resp.json()["error"]["code"] == "misdirected_request"
    assert open_client.get("/api/v1/kbs", headers={"host": "localhost:8000"}).status_code == 200


def test_cross_site_write_is_403_without_keys(open_client: TestClient, zhiwen_home: Path) -> None:
    files = {"files": (MD[0], MD[1], "text/markdown")}
    for resp in (
        open_client.post("/api/v1/kbs/pwned/documents", files=files, headers={"origin": EVIL}),
        open_client.delete("/api/v1/kbs/demo", headers={"origin": EVIL}),
        open_client.post(
            "/knowledge-base/search", json={"kb": "demo", "query": "x"}, headers={"origin": "null"}
        ),
        open_client.put("/admin/settings", json={}, headers={"referer": f"{EVIL}/x"}),
    ):
        assert resp.status_code == 403, resp.request.url
        body = resp.json()
        assert body["code"] == 3013 and "跨站" in body["message"]
    assert not (zhiwen_home / "kbs" / "pwned").exists()
    resp = open_client.post("/v1/embeddings", json={"model": "hash", "input": "x"}, headers={"origin": EVIL})
    assert resp.status_code == 403 and resp.json()["error"]["code"] == "cross_site_request"
    # reads are not writes: a foreign page may not read the answer anyway (no CORS for it)
    assert open_client.get("/api/v1/kbs", headers={"origin": EVIL}).status_code == 200


def test_own_page_configured_origin_and_curl_pass(open_client: TestClient) -> None:
    search = {"kb": "nokb", "query": "安装"}
    for headers in (
        {},  # curl, SDKs
        {"origin": "http://testserver"},  # the page the server itself served
        {"origin": "https://kb.team.example"},  # a configured CORS origin
    ):
        resp = open_client.post("/knowledge-base/search", json=search, headers=headers)
        assert resp.status_code == 404, (headers, resp.text)  # past the guard: the KB does not exist
    preflight = open_client.options(
        "/knowledge-base/search",
        headers={"origin": "https://kb.team.example", "access-control-request-method": "POST"},
    )
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "https://kb.team.example"


# -- live: a real zhiwen serve on loopback --------------------------------------------------------
KEYS = [
    "sk-all",
    {"key": "sk-demo", "kbs": ["demo"]},
    {"key": "sk-read", "write": False},
]
ADMIN = "live-admin"
OTHER_SEARCH = {"kb": "other", "query": "安装"}


def _home(root: Path) -> Path:
    home = root / "home"
    settings = Settings(home=home)
    for name in ("demo", "other"):
        kb = open_kb(name, settings=settings, create=True, embedder="hash")
        texts = [f"# 第{i}节\n\n{name} 的安装说明第{i}条。" for i in range(3)]
        docs = [Document(id=f"{name}{i}", title=f"第{i}节", text=text) for i, text in enumerate(texts)]
        kb.index_documents(docs, progress=False)
    close_all()
    return home


@pytest.fixture(scope="module")
def open_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    root = tmp_path_factory.mktemp("open")
    server = LiveServer(_home(root), root / "server.log").start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    root = tmp_path_factory.mktemp("keyed")
    server = LiveServer(
        _home(root), root / "server.log", ZHIWEN_API__KEYS=json.dumps(KEYS), ZHIWEN_API__ADMIN_TOKEN=ADMIN
    ).start()
    yield server
    server.stop()


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_live_attacks_without_keys(open_server: LiveServer) -> None:
    s = open_server
    # a page on another site posts an upload and a delete: refused, nothing changes
    assert s.upload("pwned", [MD], headers={"origin": EVIL}).status_code == 403
    assert s.delete("/api/v1/kbs/demo", headers={"origin": EVIL}).status_code == 403
    assert s.delete("/api/v1/kbs/demo/documents/demo0", headers={"referer": EVIL + "/"}).status_code == 403
    names = [kb["name"] for kb in s.get("/api/v1/kbs").json()["data"]["kbs"]]
    assert names == ["demo", "other"] and "demo0" in s.documents("demo")
    # DNS rebinding: the attacker's name, resolved to 127.0.0.1
    port = s.port
    assert s.get("/api/v1/kbs", headers={"host": f"evil.example:{port}"}).status_code == 421
    assert s.get("/api/v1/kbs", headers={"host": f"localhost:{port}"}).status_code == 200
    assert s.get("/api/v1/kbs", headers={"host": f"[::1]:{port}"}).status_code == 200
    # curl-like requests and the UI's own page keep working
    search = {"kb": "demo", "query": "安装"}
    assert httpx.post(s.url + "/knowledge-base/search", json=search, timeout=30).status_code == 200
    own = {"origin": s.url}
    assert (
        httpx.post(s.url + "/knowledge-base/search", json=search, headers=own, timeout=30).status_code == 200
    )


def test_live_every_door_needs_a_key(keyed_server: LiveServer) -> None:
    s = keyed_server
    doors = [
        ("POST", "/api/v1/kbs/demo/documents", None),
        ("DELETE", "/api/v1/kbs/demo/documents/demo0", None),
        ("DELETE", "/api/v1/kbs/demo", None),
        ("POST", "/knowledge-base/search", {"kb": "demo", "query": "安装"}),
        ("POST", "/api/v1/qa", {"kb": "demo", "question": "怎么安装"}),
        ("POST", "/ask", {"question": "浦东两房"}),
        ("POST", "/api/v1/chat", {"session_id": "s", "message": "房贷"}),
        ("GET", "/api/v1/kbs", None),
        ("GET", "/metrics", None),
        ("GET", "/v1/models", None),
        (
            "POST",
            "/v1/chat/completions",
            {"model": "demo", "messages": [{"role": "user", "content": "你好"}]},
        ),
    ]
    for method, path, body in doors:
        resp = httpx.request(method, s.url + path, json=body, timeout=30)
        assert resp.status_code == 401, (method, path, resp.text)
    assert s.get("/healthz").status_code == 200 and "知问" in s.get("/").text
    assert [kb["name"] for kb in s.get("/api/v1/kbs", headers=_auth("sk-all")).json()["data"]["kbs"]] == [
        "demo",
        "other",
    ]


def test_live_scoped_and_read_only_keys(keyed_server: LiveServer) -> None:
    s = keyed_server
    demo = _auth("sk-demo")
    assert [kb["name"] for kb in s.get("/api/v1/kbs", headers=demo).json()["data"]["kbs"]] == ["demo"]
    assert [m["id"] for m in s.get("/v1/models", headers=demo).json()["data"]] == ["demo"]
    ask = {"kb": "demo", "question": "怎么安装"}
    assert httpx.post(s.url + "/api/v1/qa", json=ask, headers=demo, timeout=30).status_code == 200
    for resp in (
        httpx.post(s.url + "/knowledge-base/search", json=OTHER_SEARCH, headers=demo, timeout=30),
        httpx.post(s.url + "/api/v1/qa", json={"kb": "other", "question": "安装"}, headers=demo, timeout=30),
        s.upload("other", [MD], headers=demo),
        s.delete("/api/v1/kbs/other/documents/other0", headers=demo),
        s.delete("/api/v1/kbs/other", headers=demo),
        httpx.post(s.url + "/ask", json={"question": "浦东两房"}, headers=demo, timeout=30),
    ):
        assert resp.status_code == 403, (resp.request.url, resp.text)
    read = _auth("sk-read")
    assert httpx.post(s.url + "/api/v1/qa", json=ask, headers=read, timeout=30).status_code == 200
    assert s.upload("demo", [MD], headers=read).status_code == 403
    assert s.delete("/api/v1/kbs/demo/documents/demo0", headers=read).status_code == 403
    assert s.delete("/api/v1/kbs/other", headers=read).status_code == 403
    assert s.get("/admin/settings", headers=_auth("sk-all")).status_code == 403
    assert s.get("/admin/settings", headers=_auth(ADMIN)).status_code == 200


def test_live_writer_key_uploads_and_deletes(keyed_server: LiveServer) -> None:
    s = keyed_server
    demo = _auth("sk-demo")
    resp = s.upload("demo", [MD], headers=demo)
    assert resp.status_code == 202, resp.text
    job_id = resp.json()["data"]["id"]
    job = s.get(f"/api/v1/jobs/{job_id}", headers=demo).json()["data"]
    end = time.monotonic() + 60
    while job["status"] not in ("done", "partial", "failed") and time.monotonic() < end:
        time.sleep(0.2)
        job = s.get(f"/api/v1/jobs/{job_id}", headers=demo).json()["data"]
    assert job["status"] == "done", job
    # another key's view of this job: only a key that may read the KB sees it
    assert s.get(f"/api/v1/jobs/{job_id}", headers=_auth("sk-read")).status_code == 200
    assert s.delete("/api/v1/kbs/demo/documents/demo1", headers=demo).status_code == 200
    assert s.delete("/api/v1/kbs/other", headers=_auth("sk-all")).status_code == 200
