"""The upload service without HTTP: what the routes and the CLI call.

A service that is never started only queues and reads (the CLI, an app without a worker); a
started one resumes what an earlier process queued, indexes it, and lists, deletes and
coordinates KB deletes the same way for every caller."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zhiwen.config import Settings, reset_settings_cache
from zhiwen.errors import KnowledgeBaseBusy, NotFound
from zhiwen.kb import close_all, open_kb
from zhiwen.uploads import Job, UploadService

TEXT = "第一条 单位应当按时缴存住房公积金。\n第二条 职工个人缴存的住房公积金归职工个人所有。\n".encode()


@pytest.fixture
def settings(zhiwen_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    monkeypatch.setenv("ZHIWEN_EMBEDDING__PROVIDER", "hash")
    reset_settings_cache()
    yield Settings(home=zhiwen_home, embedding={"provider": "hash"})
    close_all()


def queue(uploads: UploadService, kb: str, files: dict[str, bytes]) -> Job:
    slot = uploads.open_upload(kb, declared=None)
    try:
        for name, data in files.items():
            with slot.open_file(name) as out:
                out.write(data)
        return uploads.submit(slot)
    finally:
        slot.close()


def wait_done(uploads: UploadService, job_id: str, timeout: float = 60) -> Job:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = uploads.job(job_id)
        if job.status in ("done", "partial", "failed"):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish")


def test_queued_without_a_worker_then_resumed_by_a_started_service(settings: Settings) -> None:
    open_kb("laws", settings=settings, create=True)
    with UploadService(settings) as cli_side:  # never started: it queues and reads only
        job = queue(cli_side, "laws", {"公积金.txt": TEXT, "空.txt": b""})
        assert cli_side.job(job.id).status == "queued"
        docs = cli_side.documents(open_kb("laws", settings=settings))
        assert {d.doc_id: d.status for d in docs} == {"公积金.txt": "processing", "空.txt": "processing"}
        with pytest.raises(KnowledgeBaseBusy) as busy:
            cli_side.delete_kb("laws")
        assert busy.value.http_status == 409 and job.id in busy.value.message and "导入" in busy.value.message
    with UploadService(settings) as server_side:
        server_side.start()  # as a server's lifespan does: the queued job runs
        done = wait_done(server_side, job.id)
        assert (done.status, done.indexed, done.failed) == ("partial", 1, 1)
        kb = open_kb("laws", settings=settings)
        docs = {d.doc_id: d for d in server_side.documents(kb)}
        assert docs["公积金.txt"].status == "indexed" and docs["公积金.txt"].chunks
        assert docs["空.txt"].status == "failed" and "空文件" in (docs["空.txt"].error or "")
        assert server_side.delete_document(kb, "公积金.txt") >= 1
        assert server_side.delete_document(kb, "空.txt") == 0  # a failed upload leaves the list too
        assert server_side.documents(kb) == []
        with pytest.raises(NotFound):
            server_side.delete_document(kb, "公积金.txt")
        server_side.delete_kb("laws")
    assert not (settings.kb_root / "laws").exists()


def test_a_kb_with_an_upload_still_arriving_is_not_deleted(settings: Settings) -> None:
    open_kb("arriving", settings=settings, create=True)
    with UploadService(settings) as uploads:
        slot = uploads.open_upload("arriving", declared=None)
        with pytest.raises(KnowledgeBaseBusy, match="上传正在接收"):
            uploads.delete_kb("arriving")
        slot.close()
        uploads.delete_kb("arriving")
    assert not (settings.kb_root / "arriving").exists()


def test_cli_kb_delete_is_refused_while_an_upload_job_is_unfinished(settings: Settings) -> None:
    from zhiwen.cli.main import app

    open_kb("pending", settings=settings, create=True)
    with UploadService(settings) as uploads:
        job = queue(uploads, "pending", {"a.txt": TEXT})
    refused = CliRunner().invoke(app, ["kb", "delete", "pending", "--yes"])
    assert refused.exit_code != 0, refused.output
    assert "尚未完成" in refused.stderr and job.id in refused.stderr
    assert (settings.kb_root / "pending" / "kb.json").is_file()  # the KB is kept whole
