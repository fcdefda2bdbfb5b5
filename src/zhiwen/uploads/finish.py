"""How an upload job ends: failed files in the ledger, final counts, the row saved, the spool gone.

Shared by the worker (a job that ran to its end) and the start's recovery (a job that cannot
run again: its reason fails every file it had left).

Example::

    >>> end_job(row, None, store=store, budget=budget, kb_root=settings.kb_root)     # ran through
    >>> end_job(row, "服务重启后找不到暂存的上传文件（a.pdf），请重新上传", store=store, budget=budget,
    ...         kb_root=settings.kb_root)
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from zhiwen.uploads.budget import SpoolBudget
from zhiwen.uploads.jobqueue import JobRow, JobStore
from zhiwen.uploads.ledger import DocumentLedger
from zhiwen.uploads.model import PENDING, Job, JobFile, finish


def record_failure(job: Job, entry: JobFile, kb_root: Path) -> None:
    """The file failed: its ledger entry says so (never making a deleted KB's folder again)."""
    fields = {"doc_id": entry.name, "source": entry.name, "type": entry.type, "status": "failed"}
    DocumentLedger(kb_root / job.kb).update(
        entry.name,
        {**fields, "error": entry.error, "job_id": job.id, "updated_at": time.time()},
        create=False,
    )


def fail_pending(job: Job, message: str, kb_root: Path) -> None:
    """Every file the job had left fails with ``message``."""
    for entry in job.files:
        if entry.status in PENDING:
            entry.status, entry.error = "failed", f"「{entry.name}」导入失败：{message}"
            record_failure(job, entry, kb_root)


def end_job(row: JobRow, reason: str | None, *, store: JobStore, budget: SpoolBudget, kb_root: Path) -> None:
    """The job is over (``reason``: why the rest of it cannot run): counts, row, no spool."""
    job = row.job
    if reason is not None:
        job.error = reason
        fail_pending(job, reason, kb_root)
    store.save(finish(job))
    shutil.rmtree(row.spool, ignore_errors=True)
    budget.refresh(store)
    store.forget_old()
