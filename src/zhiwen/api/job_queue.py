"""The durable upload queue: one row per upload job in ``$ZHIWEN_HOME/jobs.sqlite3`` (WAL).

A job's row holds its state (``queued → running → done | partial | failed``), its per-file
progress (the :class:`Job` as JSON), its spool folder
(``$ZHIWEN_HOME/uploads/<job id>/``, the uploaded files), the bytes spooled there and how many
times a run of it was cut short by the process dying. The row is written when the upload is
accepted and after every file, so ``GET /api/v1/jobs/{id}`` and a restarted server see the same
job; the in-memory copy of the running job only adds the live page counter.

The queue is bounded: unfinished jobs (``ingest.max_queued_jobs``) → :class:`UploadQueueFull`
(429), spooled bytes of unfinished jobs (``ingest.max_spool_bytes``) or a disk without room →
:class:`UploadSpoolFull` (507).

Example::

    >>> store = JobStore(home / "jobs.sqlite3")
    >>> store.insert(job, spool=folder, size=1234, ocr=None)
    >>> [row.job.id for row in store.unfinished()]
"""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from zhiwen.errors import ZhiwenError

UNFINISHED = ("queued", "running")
KEEP_FINISHED = 500  # finished jobs kept for GET /api/v1/jobs/{id}; older ones are forgotten

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    kb TEXT NOT NULL,
    status TEXT NOT NULL,
    ocr TEXT,
    spool TEXT NOT NULL,
    bytes INTEGER NOT NULL DEFAULT 0,
    crashes INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_status ON jobs (status, created_at);
"""


class UploadQueueFull(ZhiwenError):
    """Too many unfinished upload jobs (``ingest.max_queued_jobs``)."""

    code = 3010
    http_status = 429
    user_message = "导入队列已满，请等待已有的导入任务完成后再上传"

    @property
    def headers(self) -> dict[str, str]:
        return {"Retry-After": "30"}


class UploadSpoolFull(ZhiwenError):
    """The spooled uploads would pass ``ingest.max_spool_bytes``, or the disk has no room."""

    code = 3011
    http_status = 507
    user_message = "暂存上传文件的空间不足，请等待已有的导入任务完成后再上传"



FileStatus = Literal["queued", "parsing", "indexing", "indexed", "skipped", "failed"]
JobStatus = Literal["queued", "running", "done", "partial", "failed"]


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


@dataclass
class JobRow:
    job: Job
    ocr: str | None
    spool: Path
    size: int
    crashes: int


class JobStore:
    """The ``jobs`` table (see the module docstring); safe to share between threads."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        # autocommit; WAL: readers (GET /jobs) never wait for the worker's writes
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=10)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _query(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    def insert(self, job: Job, *, spool: Path, size: int, ocr: str | None) -> None:
        self._query(
            "INSERT INTO jobs (id, kb, status, ocr, spool, bytes, created_at, body) VALUES (?,?,?,?,?,?,?,?)",
            (job.id, job.kb, job.status, ocr, str(spool), size, job.created_at, job.model_dump_json()),
        )

    def save(self, job: Job) -> None:
        self._query(
            "UPDATE jobs SET status=?, body=? WHERE id=?", (job.status, job.model_dump_json(), job.id)
        )

    def count_crash(self, job_id: str) -> int:
        """One more run of the job was cut short (the process died while it ran); the new count."""
        rows = self._query("UPDATE jobs SET crashes = crashes + 1 WHERE id=? RETURNING crashes", (job_id,))
        return int(rows[0][0]) if rows else 0

    def get(self, job_id: str) -> Job | None:

        rows = self._query("SELECT body FROM jobs WHERE id=?", (job_id,))
        return Job.model_validate_json(rows[0][0]) if rows else None

    def unfinished(self, kb: str | None = None) -> list[JobRow]:
        """Queued and running jobs, oldest first (``kb``: of that KB only)."""

        sql = "SELECT body, ocr, spool, bytes, crashes FROM jobs WHERE status IN (?, ?)"
        args: tuple[Any, ...] = UNFINISHED
        if kb is not None:
            sql, args = sql + " AND kb=?", (*args, kb)
        rows = self._query(sql + " ORDER BY created_at", args)
        return [
            JobRow(Job.model_validate_json(body), ocr, Path(spool), size, crashes)
            for body, ocr, spool, size, crashes in rows
        ]

    def next_queued(self) -> JobRow | None:
        rows = [row for row in self.unfinished() if row.job.status == "queued"]
        return rows[0] if rows else None

    def load(self) -> tuple[int, int]:
        """(unfinished jobs, bytes they keep spooled)."""
        rows = self._query(
            "SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM jobs WHERE status IN (?, ?)", UNFINISHED
        )
        return int(rows[0][0]), int(rows[0][1])

    def forget_old(self, keep: int = KEEP_FINISHED) -> None:
        self._query(
            "DELETE FROM jobs WHERE status NOT IN (?, ?) AND id NOT IN "
            "(SELECT id FROM jobs WHERE status NOT IN (?, ?) ORDER BY created_at DESC LIMIT ?)",
            (*UNFINISHED, *UNFINISHED, keep),
        )


class SpoolBudget:
    """The queue's caps, checked before an upload is read and while its bytes arrive.

    ``spooled``: bytes kept by unfinished jobs (from the table); ``receiving``: bytes of uploads
    still arriving. Both live in this process: one server per home (:mod:`zhiwen.home_lock`).
    """

    def __init__(self, max_jobs: int, max_bytes: int, folder: Path) -> None:
        self.max_jobs = max_jobs
        self.max_bytes = max_bytes
        self.folder = folder
        self._lock = threading.Lock()
        self.jobs = 0
        self.spooled = 0
        self.receiving = 0
        self.uploads = 0  # uploads still arriving: they become jobs

    def refresh(self, store: JobStore) -> None:
        with self._lock:
            self.jobs, self.spooled = store.load()

    def admit(self, declared: int | None) -> None:
        """Room for one more upload (of ``declared`` bytes, if known), else 429 / 507."""
        with self._lock:
            if self.jobs + self.uploads >= self.max_jobs:
                raise UploadQueueFull(
                    f"{self.jobs} unfinished jobs, {self.uploads} uploads arriving",
                    message=f"导入队列已满（最多 {self.max_jobs} 个未完成的任务），请等已有任务完成后再上传",
                    data={"max_queued_jobs": self.max_jobs},
                )
            if declared:
                self._check_room(declared)
            self.uploads += 1

    def take(self, size: int) -> None:
        """``size`` more bytes arrived for an upload; 507 past the cap or the disk's free space."""
        with self._lock:
            self._check_room(size)
            self.receiving += size

    def settle(self, received: int, *, queued: bool) -> None:
        """An upload is over: its bytes become a job's (``queued``) or are gone."""
        with self._lock:
            self.uploads -= 1
            self.receiving -= received
            if queued:
                self.jobs += 1
                self.spooled += received

    def _check_room(self, size: int) -> None:
        used = self.spooled + self.receiving
        if used + size > self.max_bytes:
            raise UploadSpoolFull(
                f"spool {used} + {size} bytes over {self.max_bytes}",
                message=(
                    f"暂存上传文件的空间不足（上限 {_mb(self.max_bytes)}，已用 {_mb(used)}），"
                    "请等待已有的导入任务完成后再上传"
                ),
                data={"max_spool_bytes": self.max_bytes, "spooled_bytes": used},
            )
        if size > _free_bytes(self.folder):
            raise UploadSpoolFull(
                f"disk full under {self.folder}",
                message="磁盘空间不足，无法暂存上传的文件；请清理磁盘后再上传",
            )


def _mb(size: int) -> str:
    return f"{size / 1024 / 1024:.0f} MB"


_FREE_CACHE: dict[str, tuple[float, int]] = {}


def _free_bytes(folder: Path) -> int:
    """Free bytes of the disk under ``folder``, less a 64 MB margin (asked at most once a second)."""
    import shutil

    key = str(folder)
    now = time.monotonic()
    cached = _FREE_CACHE.get(key)
    if cached is None or now - cached[0] > 1.0:
        folder.mkdir(parents=True, exist_ok=True)
        cached = _FREE_CACHE[key] = (now, shutil.disk_usage(folder).free - 64 * 1024 * 1024)
    return cached[1]
