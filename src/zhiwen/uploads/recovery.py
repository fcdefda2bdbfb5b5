"""At the worker's start: resume or fail what the last process left.

Every unfinished job is resumed from its first unfinished file, or failed with a Chinese reason
(its spooled files are gone; the process died under it :data:`MAX_CRASHES` times); spool folders
of no unfinished job are removed, and a document left 「processing」 by a job that no longer runs
is marked failed.

Example::

    >>> live = recover(store, budget, kb_root=settings.kb_root, spool_root=home / "uploads")
    >>> sorted(live)                       # the jobs that will run again
    ['3f2a9c0d1e4b5a67']
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from zhiwen.uploads.budget import SpoolBudget
from zhiwen.uploads.finish import end_job
from zhiwen.uploads.jobqueue import JobRow, JobStore
from zhiwen.uploads.ledger import LEDGER_NAME, DocumentLedger
from zhiwen.uploads.model import PENDING, pending, requeued

log = logging.getLogger(__name__)

MAX_CRASHES = 2  # a job under which the process died this often is failed, not resumed again


def recover(store: JobStore, budget: SpoolBudget, *, kb_root: Path, spool_root: Path) -> set[str]:
    """Resume or fail every unfinished job, clean the spool and the ledgers; the live job ids."""
    live: set[str] = set()
    for row in store.unfinished():
        reason = _resume(store, row)
        if reason is None:
            live.add(row.job.id)
        else:
            end_job(row, reason, store=store, budget=budget, kb_root=kb_root)
    _remove_orphan_spools(spool_root, live)
    _fail_orphan_documents(kb_root, live)
    budget.refresh(store)
    return live


def _resume(store: JobStore, row: JobRow) -> str | None:
    """Put an unfinished job back in the queue; or the reason it cannot run again."""
    job = row.job
    missing = [f.name for f in job.files if f.status in PENDING and not (row.spool / f.name).is_file()]
    if missing:
        return f"服务重启后找不到暂存的上传文件（{'、'.join(missing[:3])}），请重新上传"
    if job.status == "running":  # the process died while it ran (kill -9, OOM, power)
        crashes = store.count_crash(job.id)
        if crashes >= MAX_CRASHES:
            return f"导入此任务时服务已 {crashes} 次意外退出，不再重试；请检查文件后重新上传"
        job.resumed += 1
    store.save(requeued(job))
    log.info("upload job %s resumed after a restart (%d file(s) left)", job.id, pending(job))
    return None


def _remove_orphan_spools(spool_root: Path, live: set[str]) -> None:
    if not spool_root.is_dir():
        return
    for path in spool_root.iterdir():
        if path.name not in live:
            log.info("removing spooled upload %s: no unfinished job owns it", path.name)
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def _fail_orphan_documents(kb_root: Path, live: set[str]) -> None:
    for ledger_path in kb_root.glob(f"*/{LEDGER_NAME}") if kb_root.is_dir() else ():
        fixed = DocumentLedger(ledger_path.parent).fail_orphans(live)
        if fixed:
            log.warning(
                "%s: %d document(s) left 「processing」 by a lost job marked failed", ledger_path, fixed
            )
