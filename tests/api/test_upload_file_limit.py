"""Issue 35: a file over ``ingest.max_file_bytes`` is refused when it is uploaded — 413 with a
Chinese message naming it, in the envelope — before it is spooled: nothing is left under
``uploads/``, no job is made, no KB folder appears. A part that declares its size is refused
before a byte of it is read; the multipart body is parsed the same whatever its chunking."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.api.app import create_app
from zhiwen.api.upload_body import receive_files
from zhiwen.config import Settings
from zhiwen.errors import PayloadTooLarge
from zhiwen.uploads import UploadService

LIMIT = 4096
BOUNDARY = "zhiwen-test-boundary"


def home_settings(home: Path) -> Settings:
    return Settings(home=home, embedding={"provider": "hash"}, ingest={"max_file_bytes": LIMIT})


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def client(home: Path) -> Iterator[TestClient]:
    with TestClient(create_app(home_settings(home), app_routers=False), raise_server_exceptions=False) as c:
        yield c


def nothing_left(home: Path, kb: str) -> bool:
    spool = home / "uploads"
    return not (home / "kbs" / kb).exists() and (not spool.exists() or not any(spool.iterdir()))


def multipart(files: list[tuple[str, bytes]], *, declare: int | None = None) -> bytes:
    out = b""
    for name, data in files:
        out += f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="{name}"\r\n'.encode()
        if declare is not None:
            out += f"Content-Length: {declare}\r\n".encode()
        out += b"Content-Type: application/octet-stream\r\n\r\n" + data + b"\r\n"
    return out + f"--{BOUNDARY}--\r\n".encode()


def test_a_file_over_the_limit_is_refused_with_413_and_nothing_spooled(
    client: TestClient, home: Path
) -> None:
    files = [("小.txt", b"a" * 100), ("大文件.txt", b"b" * (LIMIT + 1))]
    resp = client.post("/api/v1/kbs/big/documents", files=[("files", f) for f in files])
    assert resp.status_code == 413, resp.text
    body = resp.json()
    assert set(body) == {"code", "message", "data"} and body["code"] == 3005
    assert "「大文件.txt」文件过大" in body["message"] and "上限" in body["message"]
    assert body["data"]["extra"] == {"file": "大文件.txt", "max_file_bytes": LIMIT}
    assert nothing_left(home, "big")


def test_a_file_at_the_limit_is_accepted(client: TestClient, home: Path) -> None:
    resp = client.post("/api/v1/kbs/edge/documents", files=[("files", ("正好.txt", b"c" * LIMIT))])
    assert resp.status_code == 202, resp.text
    assert [f["name"] for f in resp.json()["data"]["files"]] == ["正好.txt"]
    job_id = resp.json()["data"]["id"]
    assert (home / "uploads" / job_id / "正好.txt").stat().st_size == LIMIT  # queued, no worker here


def test_a_declared_part_size_over_the_limit_is_refused_before_reading(
    client: TestClient, home: Path
) -> None:
    body = multipart([("声明.pdf", b"%PDF tiny")], declare=10 * LIMIT)  # the bytes sent are few
    resp = client.post(
        "/api/v1/kbs/declared/documents",
        content=body,
        headers={"content-type": f"multipart/form-data; boundary={BOUNDARY}"},
    )
    assert resp.status_code == 413, resp.text
    assert resp.json()["data"]["extra"] == {
        "file": "声明.pdf",
        "max_file_bytes": LIMIT,
        "declared_bytes": 10 * LIMIT,
    }
    assert nothing_left(home, "declared")


def test_an_unfinished_body_is_422_and_leaves_nothing(client: TestClient, home: Path) -> None:
    body = multipart([("a.txt", b"abc")])[: -len(f"--{BOUNDARY}--\r\n")]
    resp = client.post(
        "/api/v1/kbs/cut/documents",
        content=body,
        headers={"content-type": f"multipart/form-data; boundary={BOUNDARY}"},
    )
    assert resp.status_code == 422 and "不完整" in resp.json()["message"], resp.text
    assert nothing_left(home, "cut")


async def _chunks(data: bytes, cuts: list[int]) -> AsyncIterator[bytes]:
    last = 0
    for cut in [*sorted({min(c, len(data)) for c in cuts}), len(data)]:
        if cut > last:
            yield data[last:cut]
            last = cut


async def _receive(uploads: UploadService, body: bytes, cuts: list[int]) -> dict[str, bytes]:
    slot = uploads.open_upload("kb", declared=None)
    try:
        headers = {"content-type": f"multipart/form-data; boundary={BOUNDARY}"}
        names = await receive_files(headers, _chunks(body, cuts), slot, limit=1 << 20)
        return {name: (slot.folder / name).read_bytes() for name in names}
    finally:
        slot.close()


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=0, max_value=LIMIT + 64), min_size=1, max_size=4),
    cuts=st.lists(st.integers(min_value=1, max_value=4 * (LIMIT + 300)), max_size=12),
)
def test_any_chunking_spools_the_files_exactly_or_refuses_the_big_one(
    tmp_path_factory: pytest.TempPathFactory, sizes: list[int], cuts: list[int]
) -> None:
    uploads = UploadService(home_settings(tmp_path_factory.mktemp("home")))
    files = [(f"f{i}.bin", bytes([65 + i]) * size) for i, size in enumerate(sizes)]
    body = multipart(files)
    try:
        if max(sizes) > LIMIT:
            with pytest.raises(PayloadTooLarge):
                asyncio.run(_receive(uploads, body, cuts))
        else:
            assert asyncio.run(_receive(uploads, body, cuts)) == dict(files)
        assert not any((uploads.spool_root).iterdir())  # closed without a job: the folder is gone
        assert uploads.budget.uploads == 0 and uploads.budget.receiving == 0
    finally:
        uploads.stop()
