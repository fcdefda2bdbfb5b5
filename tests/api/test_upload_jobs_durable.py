"""Issue 29: durable upload jobs and the smaller upload defects, against a real ``zhiwen serve``.

The import is held deterministically the way a real one is held: this test process takes the
KB's write lock (as a ``zhiwen index`` of the same KB would), so the server's job for that KB
waits in phase 1, 「running」, for as long as the test needs — through kill -9, SIGTERM,
restarts, a full queue and a DELETE of the KB.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from support.live_zhiwen import LiveServer
from zhiwen.config import Settings
from zhiwen.kb.writer import kb_lock

TEXT = "第一条 单位应当按时缴存住房公积金。\n第二条 职工个人缴存的住房公积金归职工个人所有。\n".encode()
MAX_JOBS = 2
MAX_SPOOL = 1024 * 1024


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def server(home: Path, tmp_path: Path) -> Iterator[LiveServer]:
    srv = LiveServer(
        home,
        tmp_path / "server.log",
        ZHIWEN_INGEST__MAX_QUEUED_JOBS=str(MAX_JOBS),
        ZHIWEN_INGEST__MAX_SPOOL_BYTES=str(MAX_SPOOL),
    )
    try:
        yield srv.start()
    finally:
        srv.stop()


@contextmanager
def kb_held(home: Path, kb: str) -> Iterator[None]:
    """Hold ``kb``'s write lock in this process: the server's import of it waits until released."""
    lock = kb_lock(Settings(home=home), kb)
    lock.acquire(timeout=10)
    try:
        yield
    finally:
        lock.release()


def running(job: dict) -> bool:
    return bool(job["status"] == "running")


def spooled(home: Path) -> list[str]:
    folder = home / "uploads"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def wait_until_no_spool(home: Path, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while spooled(home) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert spooled(home) == [], spooled(home)


def accepted(server: LiveServer, kb: str, files: list[tuple[str, bytes]]) -> dict:
    resp = server.upload(kb, files)
    assert resp.status_code == 202, resp.text
    data: dict = resp.json()["data"]
    return data


def test_kill9_mid_import_then_restart_resumes_the_job(server: LiveServer, home: Path) -> None:
    with kb_held(home, "kbx"):
        first = accepted(server, "kbx", [("a.txt", TEXT), ("b.txt", TEXT)])
        server.wait_job(first["id"], running)
        second = accepted(server, "kbx", [("c.txt", TEXT)])
        assert spooled(home) == sorted([first["id"], second["id"]])
        server.kill()
        server.start()
        # the job survived the restart: resumed (the process died under it once), not 404
        job = server.job(first["id"])
        assert job["resumed"] == 1 and job["status"] in ("queued", "running"), job
        assert server.job(second["id"])["status"] == "queued"
        # its documents are 「processing」 only because a live job will still index them
        docs = server.documents("kbx")
        assert {d["status"] for d in docs.values()} == {"processing"}, docs
    done = server.wait_job(first["id"])
    assert (done["status"], done["indexed"], done["resumed"]) == ("done", 2, 1), done
    assert server.wait_job(second["id"])["status"] == "done"
    docs = server.documents("kbx")
    assert {name: d["status"] for name, d in docs.items()} == {
        n: "indexed" for n in ("a.txt", "b.txt", "c.txt")
    }
    wait_until_no_spool(home)


def test_a_job_that_kills_the_server_twice_fails_with_a_reason(server: LiveServer, home: Path) -> None:
    with kb_held(home, "kbx"):
        job_id = accepted(server, "kbx", [("a.txt", TEXT), ("b.txt", TEXT)])["id"]
        for _ in range(2):
            server.wait_job(job_id, running)
            server.kill()
            server.start()
        job = server.job(job_id)
        assert job["status"] == "failed" and "意外退出" in job["error"], job
        assert all(f["status"] == "failed" and "意外退出" in f["error"] for f in job["files"]), job
        assert spooled(home) == []  # the spool went with the job
        ledger = json.loads((home / "kbs" / "kbx" / "documents.json").read_text("utf-8"))["documents"]
        assert {e["status"] for e in ledger.values()} == {"failed"}, ledger


def test_sigterm_mid_import_leaves_the_job_queued_for_the_next_start(server: LiveServer, home: Path) -> None:
    with kb_held(home, "kbx"):
        job_id = accepted(server, "kbx", [("a.txt", TEXT)])["id"]
        server.wait_job(job_id, running)
        t0 = time.monotonic()
        server.stop()
        assert time.monotonic() - t0 < 25  # bounded: the worker is waited for a few seconds only
        server.start()
        job = server.job(job_id)
        assert job["resumed"] == 0 and job["status"] in ("queued", "running"), job  # a stop, not a crash
    assert server.wait_job(job_id)["status"] == "done"
    assert server.documents("kbx")["a.txt"]["status"] == "indexed"
    wait_until_no_spool(home)


def test_start_removes_orphan_spools_and_stale_processing(home: Path, tmp_path: Path) -> None:
    (home / "uploads" / "0123456789abcdef").mkdir(parents=True)
    (home / "uploads" / "0123456789abcdef" / "大文件.pdf").write_bytes(b"%PDF" + b"0" * 100_000)
    ledger = home / "kbs" / "old" / "documents.json"
    ledger.parent.mkdir(parents=True)
    ledger.write_text(json.dumps({"x.pdf": {"doc_id": "x.pdf", "status": "processing", "job_id": "gone"}}))
    srv = LiveServer(home, tmp_path / "server.log")
    try:
        srv.start()
        assert spooled(home) == []
        stored = json.loads(ledger.read_text("utf-8"))  # the flat ledger of layout 0, migrated
        entry = stored["documents"]["x.pdf"]
        assert stored["format_version"] == 1 and entry["status"] == "failed" and "导入中断" in entry["error"]
        assert "x.pdf" in json.loads((ledger.parent / "documents.json.v0.bak").read_text("utf-8"))
    finally:
        srv.stop()


def test_queue_caps_answer_429_and_507(server: LiveServer, home: Path) -> None:
    with kb_held(home, "kbx"):
        first = accepted(server, "kbx", [("a.txt", TEXT)])
        server.wait_job(first["id"], running)
        second = accepted(server, "kbx", [("b.txt", TEXT)])
        full = server.upload("kbx", [("c.txt", TEXT)])
        assert full.status_code == 429 and full.headers.get("retry-after"), full.text
        body = full.json()
        assert body["code"] == 3010 and "导入队列已满" in body["message"], body
    for job in (first, second):  # the queue drains, and takes uploads again
        assert server.wait_job(job["id"])["status"] == "done"
    accepted(server, "kbx", [("c.txt", TEXT)])
    big = server.upload("kby", [("big.txt", TEXT * (MAX_SPOOL // len(TEXT) + 10))])
    assert big.status_code == 507, big.text
    body = big.json()
    assert set(body) == {"code", "message", "data"} and body["code"] == 3011 and "空间不足" in body["message"]
    wait_until_no_spool(home)


def test_a_300_character_chinese_file_name_is_cut_by_bytes(server: LiveServer) -> None:
    long_name = "关于进一步加强住房公积金管理的通知" * 18  # 306 CJK characters, 918 bytes
    job = accepted(server, "names", [(long_name + ".txt", TEXT), (long_name + ".txt", TEXT)])
    names = [f["name"] for f in job["files"]]
    assert all(len(n.encode("utf-8")) <= 255 and n.endswith(".txt") for n in names), names
    assert len(set(names)) == 2 and names[0].startswith("关于进一步加强")
    assert server.wait_job(job["id"])["status"] == "done"
    assert set(server.documents("names")) == set(names)


def test_delete_of_a_kb_during_its_import_is_409_and_leaves_no_debris(server: LiveServer, home: Path) -> None:
    with kb_held(home, "tmpkb"):
        job_id = accepted(server, "tmpkb", [("a.txt", TEXT)])["id"]
        server.wait_job(job_id, running)
        refused = server.delete("/api/v1/kbs/tmpkb")
        assert refused.status_code == 409, refused.text
        body = refused.json()
        assert body["code"] == 3008 and job_id in body["message"] and "导入" in body["message"]
    assert server.wait_job(job_id)["status"] == "done"
    assert server.documents("tmpkb")["a.txt"]["status"] == "indexed"  # the KB was kept whole
    assert server.delete("/api/v1/kbs/tmpkb").status_code == 200
    time.sleep(1.0)  # nothing comes back behind the delete
    assert not (home / "kbs" / "tmpkb").exists()
    assert server.get("/api/v1/kbs/tmpkb").status_code == 404


def test_a_kb_deleted_behind_the_servers_back_is_not_made_again(server: LiveServer, home: Path) -> None:
    with kb_held(home, "kba"):
        first = accepted(server, "kba", [("a.txt", TEXT)])
        server.wait_job(first["id"], running)
        queued = accepted(server, "kbb", [("b.txt", TEXT)])
        shutil.rmtree(home / "kbs" / "kbb")  # as `zhiwen kb delete kbb` would, outside the server
    assert server.wait_job(first["id"])["status"] == "done"
    job = server.wait_job(queued["id"])
    assert job["status"] == "failed" and "已被删除" in job["error"], job
    assert not (home / "kbs" / "kbb").exists()
    wait_until_no_spool(home)
