"""The API's export download and import upload: streamed, all or nothing, errors as envelopes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from curation.manual import manual_docs
from portable.conftest import curate, top10
from zhiwen.api.app import create_app
from zhiwen.config import Settings
from zhiwen.kb import close_all, open_kb
from zhiwen.portable.export import SPOOL_DIR

TOKEN = "t0ken"


@pytest.fixture
def settings(zhiwen_home: Path) -> Iterator[Settings]:
    cfg = Settings(home=zhiwen_home, api={"admin_token": TOKEN}, _env_file=None)  # type: ignore[call-arg]
    kb = open_kb("manual", settings=cfg, create=True, embedder="hash")
    kb.index_documents(manual_docs(), progress=False)
    curate(kb)
    yield cfg
    close_all()


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(
        create_app(settings, app_routers=False),
        raise_server_exceptions=False,
        headers={"Authorization": f"Bearer {TOKEN}"},
    ) as c:
        yield c


def _import(client: TestClient, data: bytes, **fields: str) -> dict:  # type: ignore[type-arg]
    response = client.post("/api/v1/kbs/import", files={"file": ("m.zwkb", data)}, data=fields)
    return {"status": response.status_code, **response.json()}


def test_a_downloaded_export_imports_as_another_kb_with_the_same_answers(
    client: TestClient, settings: Settings
) -> None:
    response = client.get("/api/v1/kbs/manual/export")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/x-tar"
    assert "manual.zwkb" in response.headers["content-disposition"]
    assert not any((settings.home / SPOOL_DIR).iterdir())  # the spool file went after the download
    answer = _import(client, response.content, name="copy")
    assert answer["status"] == 200, answer
    assert answer["data"]["kb"] == "copy" and answer["data"]["vectors_reused"] == answer["data"]["chunks"]
    original, copy = open_kb("manual", settings=settings), open_kb("copy", settings=settings)
    assert top10(copy) == top10(original)
    again = _import(client, response.content, name="copy")
    assert again["status"] == 422 and again["code"] == 3003 and "--replace" in again["message"]
    replaced = _import(client, response.content, name="copy", replace="true")
    assert replaced["status"] == 200 and replaced["data"]["replaced"]
    assert not any((settings.home / SPOOL_DIR).iterdir())


def test_a_damaged_upload_is_a_422_envelope_and_leaves_nothing(
    client: TestClient, settings: Settings
) -> None:
    data = client.get("/api/v1/kbs/manual/export").content
    answer = _import(client, data[: len(data) // 2], name="copy")
    assert answer["status"] == 422 and answer["code"] == 3007
    assert answer["data"]["extra"]["reason"] in ("truncated", "checksum")
    assert "copy" not in [k["name"] for k in client.get("/api/v1/kbs").json()["data"]["kbs"]]
    missing = client.post("/api/v1/kbs/import", data={"name": "copy"}, files={"other": ("x", b"1")})
    assert missing.status_code == 422


def test_an_unknown_kb_cannot_be_exported(client: TestClient) -> None:
    response = client.get("/api/v1/kbs/nope/export")
    assert response.status_code == 404 and response.json()["code"] == 3004
