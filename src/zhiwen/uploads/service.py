"""Uploads and documents of a home: the one object the routes and the CLI call.

| operation | what |
|-----------|------|
| :meth:`UploadService.open_upload` | admit one upload before its body is read (409 / 429 / 507) |
| :meth:`UploadService.submit` | the upload's spooled files become a queued job |
| :meth:`UploadService.import_faq` | FAQ files (``format=faq``) imported at once, all or nothing |
| :meth:`UploadService.job` | a job's per-file progress (live while it runs) |
| :meth:`UploadService.documents` | a KB's document list: the store and the ledger merged |
| :meth:`UploadService.delete_document` | one document out of the store and the ledger |
| :meth:`UploadService.delete_kb` | a whole KB, refused (409) while an import of it is unfinished |
| :meth:`UploadService.start` / :meth:`~UploadService.stop` | the index worker, for the life of a server |

The queue (``$ZHIWEN_HOME/jobs.sqlite3``, :mod:`zhiwen.uploads.jobqueue`) is opened on first use;
a service that is never started only queues and reads (the CLI, an app without a worker). A
server starts it once per home (``create_app`` with the upload worker, :mod:`zhiwen.api.app`):
one server per home (:mod:`zhiwen.home_lock`), so one worker per queue.

Durability: the job's row is saved when the upload is accepted and after every file. A server
that stops finishes the file in hand and leaves the job queued; at the next start every
unfinished job is resumed or failed with a reason (:mod:`zhiwen.uploads.recovery`). A job's spool
folder is removed as soon as it ends. A KB with an unfinished job cannot be deleted (409), so a
job never writes into a deleted KB's folder.

Example::

    >>> uploads = UploadService(settings)
    >>> uploads.start()                                        # a server's lifespan does this
    >>> slot = uploads.open_upload("policies", declared=None)  # 409 / 429 / 507 before reading
    >>> with slot.open_file("通知.pdf") as out:                 # 413 past ingest.max_file_bytes
    ...     out.write(pdf_bytes)
    >>> job = uploads.submit(slot, ocr=None); slot.close()
    >>> uploads.job(job.id).files[0].status                    # queued → parsing → indexing → indexed
    >>> [d.status for d in uploads.documents(open_kb("policies"))]
    >>> uploads.delete_kb("policies")                          # 409 while the job is unfinished
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING

from zhiwen.config import Settings
from zhiwen.errors import KnowledgeBaseBusy, NotFound
from zhiwen.uploads.budget import SpoolBudget
from zhiwen.uploads.jobqueue import JobStore
from zhiwen.uploads.ledger import DocumentEntry, DocumentLedger, has_processing, listing, stored_documents
from zhiwen.uploads.model import Job, JobFile, finish
from zhiwen.uploads.spool import UploadSlot
from zhiwen.uploads.worker import STOP_WAIT_S, IndexWorker

if TYPE_CHECKING:
    from zhiwen.kb import KnowledgeBase
    from zhiwen.kb.faq import FAQPut


class UploadService:
    """See the module docstring; safe to share between threads."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.spool_root = settings.home / "uploads"
        ingest = settings.ingest
        self.budget = SpoolBudget(ingest.max_queued_jobs, ingest.max_spool_bytes, self.spool_root)
        self._lock = threading.Lock()  # uploads arriving, KBs being deleted
        self._open_lock = threading.Lock()
        self._store: JobStore | None = None
        self._worker: IndexWorker | None = None
        self._arriving: Counter[str] = Counter()  # KB → uploads still arriving
        self._deleting: set[str] = set()

    @property
    def store(self) -> JobStore:
        """The durable queue, opened on first use (and again after :meth:`stop`)."""
        with self._open_lock:
            if self._store is None:
                self._store = JobStore(self.settings.home / "jobs.sqlite3")
                self.budget.refresh(self._store)
            return self._store

    def _counted(self) -> None:
        """Open the queue: from then on the budget counts its unfinished jobs."""
        _ = self.store

    # -- the worker -----------------------------------------------------------------------------
    def start(self) -> None:
        """Resume or fail what the last process left, then index the queue in one thread."""
        if self._worker is not None:
            return
        worker = IndexWorker(self.settings, self.store, self.budget, spool_root=self.spool_root)
        worker.start()
        self._worker = worker

    def stop(self, timeout: float = STOP_WAIT_S) -> None:
        """Stop the worker after the file in hand (its job waits for the next start) and close
        the queue (it opens again on the next use)."""
        worker, self._worker = self._worker, None
        stopped = worker.stop(timeout) if worker is not None else True
        with self._open_lock:
            store, self._store = self._store, None
        if store is not None and stopped:  # a worker still in a file keeps its connection
            store.close()

    def __enter__(self) -> UploadService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- uploads --------------------------------------------------------------------------------
    def open_upload(self, kb: str, declared: int | None) -> UploadSlot:
        """Admit one upload into ``kb`` before its body is read: 409 while the KB is being
        deleted, 429 with the queue full, 507 when ``declared`` bytes do not fit."""
        self._counted()
        with self._lock:
            if kb in self._deleting:
                raise _kb_deleting(kb)
            self.budget.admit(declared)
            self._arriving[kb] += 1
        return UploadSlot(
            kb,
            self.spool_root,
            self.budget,
            max_file_bytes=self.settings.ingest.max_file_bytes,
            on_close=self._upload_over,
        )

    def _upload_over(self, slot: UploadSlot) -> None:
        with self._lock:
            self._arriving[slot.kb] -= 1
            if self._arriving[slot.kb] <= 0:
                del self._arriving[slot.kb]
            self.budget.settle(slot.received, queued=slot.queued)

    def submit(self, slot: UploadSlot, *, ocr: str | None = None) -> Job:
        """The upload's files (saved under ``slot.folder``) become a queued job."""
        job = Job(
            id=slot.job_id, kb=slot.kb, created_at=time.time(), files=[JobFile(name=n) for n in slot.names]
        )
        self.store.insert(job, spool=slot.folder, size=slot.received, ocr=ocr)
        slot.queued = True
        ledger = DocumentLedger(self.settings.kb_root / slot.kb)
        for name in slot.names:
            entry = {"doc_id": name, "source": name, "status": "processing", "job_id": job.id}
            ledger.update(name, {**entry, "updated_at": job.created_at})
        if self._worker is not None:
            self._worker.wake()
        return job

    def import_faq(self, slot: UploadSlot, *, actor: str) -> tuple[Job, FAQPut]:
        """The upload's files imported as FAQ entries of ``slot.kb`` now (a few thousand rows
        take seconds, no parsing queue): every file checked before any entry is written, one bad
        row and nothing is imported (422 naming the rows). Kept as a finished job, so
        ``GET /api/v1/jobs/{id}`` answers as for any upload. A KB this call created for a file
        that was refused is removed again."""
        from zhiwen.kb import delete_kb, list_kbs, open_kb
        from zhiwen.kb.faq import FAQ_DOC
        from zhiwen.owner.faq import import_folder

        started = time.time()
        existed = slot.kb in list_kbs(self.settings)
        kb = open_kb(slot.kb, settings=self.settings, create=True)
        try:
            put = import_folder(kb, slot.folder, slot.names, actor=actor)
        except BaseException:
            if not existed:
                delete_kb(slot.kb, self.settings)
            raise
        files = [JobFile(name=n, status="indexed", type="faq", doc_id=FAQ_DOC) for n in slot.names]
        job = Job(id=slot.job_id, kb=slot.kb, created_at=started, started_at=started, files=files)
        finish(job)
        self.store.insert(job, spool=slot.folder, size=slot.received, ocr=None)  # finished: never run
        return job, put

    def job(self, job_id: str) -> Job:
        """The job's progress (live while it runs); 404 for an unknown (or long finished) job."""
        worker = self._worker
        job = (worker.live(job_id) if worker is not None else None) or self.store.get(job_id)
        if job is None:
            raise NotFound(f"no job {job_id!r}", message=f"导入任务不存在：{job_id}")
        return job

    def live_job_ids(self) -> set[str]:
        """Jobs that will still run or run now: a 「processing」 document of any other is stale."""
        return {row.job.id for row in self.store.unfinished()}

    # -- documents ------------------------------------------------------------------------------
    def documents(self, kb: KnowledgeBase) -> list[DocumentEntry]:
        """``kb``'s documents: the indexed ones and the uploads that failed or are in progress."""
        ledger = DocumentLedger(kb.path).read()
        live = self.live_job_ids() if has_processing(ledger) else set()
        return listing(stored_documents(kb), ledger, live)

    def delete_document(self, kb: KnowledgeBase, doc_id: str) -> int:
        """Remove one document (its chunks and parent, its ledger entry); the chunks removed.
        404 when neither the store nor the ledger knows it."""
        ledger = DocumentLedger(kb.path)
        known = doc_id in kb.store.doc_ids()
        if not known and doc_id not in ledger.read():
            raise NotFound(f"no document {doc_id!r} in {kb.name}", message=f"文档不存在：{doc_id}")
        removed = kb.delete_documents([doc_id]) if known else 0
        ledger.update(doc_id, None)
        return removed

    def delete_kb(self, name: str) -> None:
        """Delete a whole KB (:func:`zhiwen.kb.delete_kb`: 404 when unknown); 409 while a job of it
        is unfinished or an upload into it arrives, and uploads into it wait meanwhile."""
        from zhiwen.kb import delete_kb

        with self._deleting_kb(name):
            delete_kb(name, self.settings)

    @contextlib.contextmanager
    def _deleting_kb(self, kb: str) -> Iterator[None]:
        store = self.store
        with self._lock:  # no upload into it is admitted between the look and the mark
            pending = [row.job.id for row in store.unfinished(kb)]
            if pending or self._arriving.get(kb):
                raise _kb_importing(kb, pending, self._arriving.get(kb, 0))
            self._deleting.add(kb)
        try:
            yield
        finally:
            with self._lock:
                self._deleting.discard(kb)


def _kb_deleting(kb: str) -> KnowledgeBaseBusy:
    return KnowledgeBaseBusy(
        f"knowledge base {kb!r} is being deleted",
        message=f"知识库「{kb}」正在被删除，请稍后再上传",
        data={"kb": kb},
    )


def _kb_importing(kb: str, jobs: list[str], arriving: int) -> KnowledgeBaseBusy:
    what = (
        f"{len(jobs)} 个导入任务尚未完成（{'、'.join(jobs[:5])}）" if jobs else f"{arriving} 个上传正在接收"
    )
    return KnowledgeBaseBusy(
        f"knowledge base {kb!r} has unfinished imports: {jobs or arriving}",
        message=f"知识库「{kb}」有{what}，请等导入完成后再删除",
        data={"kb": kb, "jobs": jobs},
    )
