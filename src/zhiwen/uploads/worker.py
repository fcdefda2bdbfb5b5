"""The one thread that indexes upload jobs, oldest first.

Indexing is CPU-bound and a KB takes one writer at a time anyway, so one thread runs the queue.
Each file is indexed on its own (:mod:`zhiwen.uploads.indexing`) and the job's row is saved after
every file. A stopping worker finishes the file in hand and leaves the rest of the job queued; a
file still in hand when :meth:`IndexWorker.stop` gives up waiting is redone at the next start.
At its start the worker first resumes or fails what the last process left
(:mod:`zhiwen.uploads.recovery`).

Example::

    >>> worker = IndexWorker(settings, store, budget, spool_root=home / "uploads")
    >>> worker.start()                 # recovery, then the thread
    >>> worker.wake()                  # a job was queued
    >>> worker.live("3f2a9c0d1e4b5a67").files[0].pages_done   # the running job's live progress
    >>> worker.stop(timeout=5.0)       # True once the thread has ended
    True
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from zhiwen.config import Settings
from zhiwen.errors import ZhiwenError
from zhiwen.uploads.budget import SpoolBudget
from zhiwen.uploads.finish import end_job, fail_pending, record_failure
from zhiwen.uploads.indexing import index_file
from zhiwen.uploads.jobqueue import JobRow, JobStore
from zhiwen.uploads.ledger import DocumentLedger
from zhiwen.uploads.model import Job, JobFile, requeued
from zhiwen.uploads.recovery import recover

log = logging.getLogger(__name__)

STOP_WAIT_S = 5.0  # a stopping server waits this long for the file in hand
IDLE_POLL_S = 5.0  # an idle worker looks at the queue this often even when nobody wakes it


class KBGone(ZhiwenError):
    """The job's KB was deleted (behind the server's back): the rest of the job is cancelled."""

    def __init__(self, kb: str) -> None:
        super().__init__(f"knowledge base {kb!r} was deleted", message=f"知识库「{kb}」已被删除，导入已取消")


class IndexWorker:
    """See the module docstring; one per home and process (its service's)."""

    def __init__(self, settings: Settings, store: JobStore, budget: SpoolBudget, *, spool_root: Path) -> None:
        self.settings = settings
        self.store = store
        self.budget = budget
        self.spool_root = spool_root
        self._lock = threading.Lock()
        self._live: dict[str, Job] = {}  # the running job: its progress (pages) in memory
        self._wake = threading.Event()
        self._stop = threading.Event()
        # a daemon: a process that must exit (tests, a stop past STOP_WAIT_S) never waits for it;
        # the job it ran stays unfinished in the queue and is resumed at the next start
        self._thread = threading.Thread(target=self._work, name="zhiwen-index", daemon=True)

    def start(self) -> None:
        """Resume or fail what the last process left, then run the queue."""
        recover(self.store, self.budget, kb_root=self.settings.kb_root, spool_root=self.spool_root)
        self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    def live(self, job_id: str) -> Job | None:
        """A copy of the running job ``job_id`` (with its page counter), or None."""
        with self._lock:
            job = self._live.get(job_id)
            return None if job is None else job.model_copy(deep=True)

    def stop(self, timeout: float = STOP_WAIT_S) -> bool:
        """Stop after the file in hand (its job stays queued); True once the thread has ended."""
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        with self._lock:
            cut_short = list(self._live.values())
        for job in cut_short:  # the file in hand outlived the wait: redo it at the next start
            self.store.save(requeued(job))
        return not self._thread.is_alive()

    # -- the thread -----------------------------------------------------------------------------
    def _work(self) -> None:
        while not self._stop.is_set():
            try:
                row = self.store.next_queued()
            except Exception:  # the queue's database went away (tests removing a home): stop
                log.debug("upload queue unreadable; the worker stops", exc_info=True)
                return
            if row is None:
                self._wake.wait(IDLE_POLL_S)
                self._wake.clear()
                continue
            try:
                self._run(row)
            except Exception:  # the queue's database failed under the job: keep the worker alive
                log.exception("upload job %s could not be run", row.job.id)
                self._stop.wait(1.0)

    def _run(self, row: JobRow) -> None:
        job = row.job
        job.status, job.started_at = "running", job.started_at or time.time()
        with self._lock:
            self._live[job.id] = job
        self.store.save(job)
        try:
            finished = self._index_files(row)
        finally:
            with self._lock:
                self._live.pop(job.id, None)
        if finished:
            end_job(row, None, store=self.store, budget=self.budget, kb_root=self.settings.kb_root)
        else:  # stopping: the rest waits in the queue for the next start
            self.store.save(requeued(job))

    def _index_files(self, row: JobRow) -> bool:
        """Index each pending file; False when the worker stops before the last one."""
        from zhiwen.ingest.files import ocr_provider
        from zhiwen.kb import open_kb

        job = row.job
        # submit made the KB's folder (its ledger): a folder gone since was deleted behind the
        # server's back (``rm -r``); the job must not make it again
        folder = self.settings.kb_root / job.kb
        try:
            if not folder.is_dir():
                raise KBGone(job.kb)
            kb = open_kb(job.kb, settings=self.settings, create=True)
            with ocr_provider(self.settings) as engine:
                for entry in job.files:
                    if entry.status != "queued":
                        continue
                    if self._stop.is_set():
                        return False
                    if not folder.is_dir():
                        raise KBGone(job.kb)
                    index_file(
                        kb, row.spool / entry.name, entry, settings=self.settings, ocr=row.ocr, engine=engine
                    )
                    self._record(job, entry)
                    self.store.save(job)
        except KBGone as gone:
            job.error = gone.message
            fail_pending(job, gone.message, self.settings.kb_root)
        except Exception as exc:  # the KB itself failed (store down, bad config): every file fails
            log.exception("upload job %s failed", job.id)
            message = exc.message if isinstance(exc, ZhiwenError) else f"{type(exc).__name__}: {exc}"
            fail_pending(job, message, self.settings.kb_root)
        return True

    def _record(self, job: Job, entry: JobFile) -> None:
        """The file's outcome in the ledger: a failure is kept; the store is the record of the rest."""
        if entry.status == "failed":
            record_failure(job, entry, self.settings.kb_root)
        else:
            DocumentLedger(self.settings.kb_root / job.kb).update(
                entry.doc_id or entry.name, None, create=False
            )
