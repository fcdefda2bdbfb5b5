"""The upload API: background jobs with per-file progress, the document list, replace/skip, delete,
bad files, 413 before reading, sanitized names, and provenance in /api/v1/qa citations."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ingest"))

from doc_fixtures import md_to_docx, md_to_html, zip_bomb_docx

from zhiwen.api.app import create_app
from zhiwen.api.background import Background
from zhiwen.config import Settings

LAW = (
    "# 中华人民共和国契税法\n\n## 第一章 总则\n\n"
    "第一条 在中华人民共和国境内转移土地、房屋权属，承受的单位和个人为契税的纳税人。\n\n"
    "第三条 契税税率为百分之三至百分之五。\n"
)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        home=tmp_path / "home",
        embedding={"provider": "hash"},
        ingest={"max_upload_bytes": 8 * 1024 * 1024, "max_unzip_bytes": 16 * 1024 * 1024},
    )


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    app = create_app(settings, app_routers=False, background=Background(uploads=True))
    with TestClient(app) as c:
        yield c
    from zhiwen.kb import close_all

    close_all()


def wait(client: TestClient, job_id: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = client.get(f"/api/v1/jobs/{job_id}").json()["data"]
        if job["status"] in ("done", "partial", "failed"):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish")


def upload(client: TestClient, kb: str, files: list[tuple[str, bytes]], **params: str) -> dict[str, Any]:
    resp = client.post(
        f"/api/v1/kbs/{kb}/documents", files=[("files", (name, data)) for name, data in files], params=params
    )
    assert resp.status_code == 202, resp.text
    return resp.json()["data"]


def docx_bytes(tmp_path: Path, text: str, name: str = "x.docx") -> bytes:
    md_to_docx(text, tmp_path / name)
    return (tmp_path / name).read_bytes()


def test_upload_index_list_replace_skip_delete(client: TestClient, tmp_path: Path) -> None:
    html = md_to_html(LAW, "契税法").encode("utf-8")
    docx = docx_bytes(tmp_path, "# 考勤制度\n\n## 请假\n\n- 病假需提供医院证明\n\n年假每年五天。")
    job = upload(
        client, "policies", [("契税法.html", html), ("考勤制度.docx", docx), ("坏.pdf", b"%PDF-1.7 broken")]
    )
    assert job["status"] in ("queued", "running") and [f["name"] for f in job["files"]] == [
        "契税法.html",
        "考勤制度.docx",
        "坏.pdf",
    ]
    done = wait(client, job["id"])
    files = {f["name"]: f for f in done["files"]}
    assert done["status"] == "partial" and (done["indexed"], done["failed"]) == (2, 1)
    assert files["契税法.html"]["status"] == "indexed" and files["契税法.html"]["type"] == "html"
    assert files["考勤制度.docx"]["chunks"] >= 1
    assert files["坏.pdf"]["status"] == "failed" and files["坏.pdf"]["error"].startswith("「坏.pdf」")

    listing = client.get("/api/v1/kbs/policies/documents").json()["data"]
    docs = {d["doc_id"]: d for d in listing["documents"]}
    assert docs["契税法.html"]["status"] == "indexed" and docs["契税法.html"]["type"] == "html"
    assert docs["考勤制度.docx"]["chunks"] == files["考勤制度.docx"]["chunks"]
    assert docs["坏.pdf"]["status"] == "failed" and "坏.pdf" in docs["坏.pdf"]["error"]

    # unchanged → skipped; changed → its chunks replaced
    again = wait(client, upload(client, "policies", [("考勤制度.docx", docx)])["id"])
    assert again["files"][0]["status"] == "skipped"
    changed = docx_bytes(tmp_path, "# 考勤制度\n\n## 请假\n\n婚假十天。", "y.docx")
    replaced = wait(client, upload(client, "policies", [("考勤制度.docx", changed)])["id"])
    assert replaced["files"][0]["status"] == "indexed"
    hits = client.post("/knowledge-base/search", json={"kb": "policies", "query": "婚假", "top_k": 10}).json()
    texts = " ".join(h["text"] for h in hits["data"]["results"])
    assert "婚假十天" in texts and "病假需提供医院证明" not in texts

    deleted = client.delete("/api/v1/kbs/policies/documents/考勤制度.docx")
    assert deleted.status_code == 200 and deleted.json()["data"]["chunks_removed"] >= 1
    listing = client.get("/api/v1/kbs/policies/documents").json()["data"]
    assert "考勤制度.docx" not in {d["doc_id"] for d in listing["documents"]}
    missing = client.delete("/api/v1/kbs/policies/documents/nope.pdf")
    assert missing.status_code == 404 and missing.json()["code"] == 3004
    assert client.get("/api/v1/jobs/nope").status_code == 404


def test_bad_files_fail_alone_and_nothing_is_left(client: TestClient, tmp_path: Path) -> None:
    zip_bomb_docx(tmp_path / "bomb.docx", megabytes=32)
    good = md_to_html(LAW, "契税法").encode("utf-8")
    job = wait(
        client,
        upload(
            client,
            "kb1",
            [("炸弹.docx", (tmp_path / "bomb.docx").read_bytes()), ("空.txt", b""), ("ok.html", good)],
        )["id"],
    )
    files = {f["name"]: f for f in job["files"]}
    assert "压缩炸弹" in files["炸弹.docx"]["error"] and "空文件" in files["空.txt"]["error"]
    assert files["ok.html"]["status"] == "indexed"
    info = client.get("/api/v1/kbs/kb1").json()["data"]["info"]
    assert info["documents"] == 1


def test_upload_too_large_is_refused_before_reading(client: TestClient, settings: Settings) -> None:
    big = b"0" * (settings.ingest.max_upload_bytes + 1024)
    resp = client.post("/api/v1/kbs/kb2/documents", files=[("files", ("big.txt", big))])
    assert resp.status_code == 413 and resp.json()["code"] == 3005
    assert not any((settings.home / "uploads").glob("*/*")) if (settings.home / "uploads").exists() else True


def test_filenames_are_sanitized(client: TestClient, settings: Settings) -> None:
    text = "第一条 单位应当按时缴存住房公积金。".encode()
    job = wait(client, upload(client, "kb3", [("../../../evil.txt", text), ("a\\b\\..\\c.txt", text)])["id"])
    names = [f["name"] for f in job["files"]]
    assert names == ["evil.txt", "c.txt"] and job["status"] == "done"
    assert not (settings.home.parent / "evil.txt").exists()


def test_upload_errors(client: TestClient) -> None:
    resp = client.post("/api/v1/kbs/kb4/documents", json={"x": 1})
    assert resp.status_code == 422 and "multipart" in resp.json()["message"]
    resp = client.post("/api/v1/kbs/kb4/documents", data={"note": "x"}, files=[("other", ("a.txt", b""))])
    assert resp.status_code == 422 and resp.json()["code"] == 3001
    assert (
        client.post("/api/v1/kbs/bad name!/documents", files=[("files", ("a.txt", b"x"))]).status_code == 422
    )


def test_citations_carry_page_and_label(client: TestClient, tmp_path: Path) -> None:
    from pptx import Presentation

    prs = Presentation()
    for title, body in (("总则", "本制度适用于全体员工。"), ("请假", "婚假十天，产假九十八天。")):
        slide = prs.slides.add_slide(prs.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    prs.save(str(tmp_path / "制度.pptx"))
    wait(client, upload(client, "hr", [("制度.pptx", (tmp_path / "制度.pptx").read_bytes())])["id"])
    hits = client.post("/knowledge-base/search", json={"kb": "hr", "query": "婚假几天", "top_k": 3}).json()
    top = hits["data"]["results"][0]
    assert "婚假" in top["text"] and top["metadata"]["page"] == 2 and top["metadata"]["source"] == "制度.pptx"
    assert top["metadata"]["section"] == "请假"
    resp = client.post("/api/v1/qa", json={"kb": "hr", "question": "婚假几天"})
    assert resp.status_code == 200, resp.text
    source = resp.json()["data"]["sources"][0]
    assert source["source"] == "制度.pptx" and source["label"].startswith("《制度》")


def test_delete_a_whole_kb(client: TestClient) -> None:
    job = upload(client, "tax", [("契税法.md", LAW.encode())])
    assert wait(client, job["id"])["status"] == "done"
    assert "tax" in {k["name"] for k in client.get("/api/v1/kbs").json()["data"]["kbs"]}
    resp = client.delete("/api/v1/kbs/tax")
    assert resp.status_code == 200 and resp.json()["data"] == {"kb": "tax", "deleted": True}
    assert "tax" not in {k["name"] for k in client.get("/api/v1/kbs").json()["data"]["kbs"]}
    gone = client.delete("/api/v1/kbs/tax")
    assert gone.status_code == 404 and gone.json()["code"] == 3004
