"""The durable upload queue: one row per upload job in ``$ZHIWEN_HOME/jobs.sqlite3`` (WAL).

A job's row holds its state (``queued → running → done | partial | failed``), its per-file
progress (the :class:`~zhiwen.uploads.model.Job` as JSON), its spool folder
(``$ZHIWEN_HOME/uploads/<job id>/``, the uploaded files), the bytes spooled there and how many
times a run of it was cut short by the process dying. The row is written when the upload is
accepted and after every file, so ``GET /api/v1/jobs/{id}`` and a restarted server see the same
job; the in-memory copy of the running job only adds the live page counter.

Example::

    >>> store = JobStore(home / "jobs.sqlite3")
    >>> store.insert(job, spool=folder, size=1234, ocr=None)
    >>> [row.job.id for row in store.unfinished()]
    ['3f2a9c0d1e4b5a67']
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zhiwen.uploads.model import Job
from zhiwen.versions import check_sqlite

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


@dataclass
class JobRow:
    """One unfinished job with what its next run needs."""

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
        check_sqlite(self._db, "upload-jobs", path)
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
