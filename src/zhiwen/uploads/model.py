"""An upload job and its files: what ``GET /api/v1/jobs/{id}`` shows and the queue keeps.

A job goes ``queued → running → done | partial | failed``; each of its files
``queued → parsing → indexing → indexed | skipped | failed``. The job is kept whole, as JSON, in
its row of the durable queue (:mod:`zhiwen.uploads.jobqueue`).

Example::

    >>> job = Job(id="3f2a9c0d1e4b5a67", kb="policies", created_at=0.0, files=[JobFile(name="通知.pdf")])
    >>> pending(job), job.files[0].status
    (1, 'queued')
    >>> finish(job).status          # nothing failed, nothing left to do
    'done'
"""

from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel, Field

FileStatus = Literal["queued", "parsing", "indexing", "indexed", "skipped", "failed"]
JobStatus = Literal["queued", "running", "done", "partial", "failed"]
#: a file in one of these still has to be (or is being) indexed
PENDING: tuple[FileStatus, ...] = ("queued", "parsing", "indexing")


class JobFile(BaseModel):
    name: str = Field(description="文件名（已规范化）")
    status: FileStatus = "queued"
    type: str | None = Field(None, description="识别出的类型：pdf、docx、pptx、xlsx、html、text、image…")
    doc_id: str | None = None
    pages: int | None = None
    ocr_pages: int = 0
    pages_done: int = Field(0, description="已 OCR 的页数")
    chunks: int | None = None
    error: str | None = Field(None, description="失败原因（中文，含文件名）")
    seconds: float = 0.0


class Job(BaseModel):
    id: str
    kb: str
    status: JobStatus = "queued"
    created_at: float
    started_at: float | None = None
    finished_at: float | None = None
    files: list[JobFile]
    indexed: int = 0
    skipped: int = 0
    failed: int = 0
    error: str | None = Field(None, description="整个任务失败或中断的原因（中文）")
    resumed: int = Field(0, description="服务重启后续做此任务的次数")


def pending(job: Job) -> int:
    """How many of the job's files are still to be indexed."""
    return sum(f.status in PENDING for f in job.files)


def requeued(job: Job) -> Job:
    """The job as it waits for its next run: files cut short go back to queued."""
    copy = job.model_copy(deep=True)
    copy.status = "queued"
    for entry in copy.files:
        if entry.status in ("parsing", "indexing"):
            entry.status, entry.pages_done = "queued", 0
    return copy


def finish(job: Job) -> Job:
    """The job is over: its counts and final status (``partial`` when some files failed)."""
    job.indexed = sum(f.status == "indexed" for f in job.files)
    job.skipped = sum(f.status == "skipped" for f in job.files)
    job.failed = sum(f.status == "failed" for f in job.files)
    job.status = "done" if not job.failed else ("failed" if job.failed == len(job.files) else "partial")
    job.finished_at = time.time()
    return job
