"""Background document indexing for the upload API: durable jobs, per-file progress, the ledger.

An upload is saved under ``$ZHIWEN_HOME/uploads/<job id>/`` with sanitized names and becomes a
:class:`Job`, a row of the durable queue (:mod:`zhiwen.api.job_queue`, ``jobs.sqlite3``); one
worker thread indexes jobs in order (indexing is CPU-bound, and a KB takes one writer at a time
anyway). Each file is parsed and indexed on its own, so a bad file fails alone and leaves nothing
in the KB; an unchanged file (same SHA-256 as the indexed one) is skipped, a changed one replaces
its chunks (the store's per-document upsert). A file is "indexed" once its text is stored and
BM25-searchable; its vectors fill in behind, in the process's background filler
(:mod:`zhiwen.kb.background`), so a big upload never holds the queue. The ledger
``<kb>/documents.json`` keeps each uploaded file's last status and error, so the document list
shows failed uploads next to indexed documents.

Durability: the job's row is saved when the upload is accepted and after every file. A server
that stops (SIGTERM) finishes the file in hand and leaves the job queued; at the next start
(:meth:`JobManager.recover`) every unfinished job is resumed from its first unfinished file, or
failed with a Chinese reason (its spooled files are gone; the process died under it
:data:`MAX_CRASHES` times), spool folders of no unfinished job are removed, and a document left
「processing」 by a job that no longer runs is marked failed. A job's spool folder is removed as
soon as it ends. A KB with an unfinished job cannot be deleted (409), so a job never writes into
a deleted KB's folder.

Example::

    >>> jobs = job_manager(settings)
    >>> slot = jobs.open_upload("policies", declared=None)      # 429 / 507 / 409 before reading
    >>> job = jobs.submit(slot, ["通知.pdf"], ocr=None)          # files saved under slot.folder
    >>> jobs.get(job.id).files[0].status            # queued → parsing → indexing → indexed
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import shutil
import threading
import time
import unicodedata
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from zhiwen.api.job_queue import FileStatus, Job, JobFile, JobRow, JobStore, SpoolBudget
from zhiwen.config import Settings
from zhiwen.errors import KnowledgeBaseBusy, ZhiwenError
from zhiwen.fsutil import atomic_write_text

log = logging.getLogger(__name__)

MAX_NAME_BYTES = 255  # the file-name limit of ext4, XFS, btrfs, APFS (bytes, not characters)
MAX_CRASHES = 2  # a job under which the process died this often is failed, not resumed again
STOP_WAIT_S = 5.0  # a stopping server waits this long for the file in hand
_UNSAFE = re.compile(r"[^\w\u3400-\u9fff（）().\-+ ]")
_MAX_SUFFIX_BYTES = 16
_PENDING: tuple[FileStatus, ...] = ("queued", "parsing", "indexing")


def fit_name(stem: str, suffix: str = "", max_bytes: int = MAX_NAME_BYTES) -> str:
    """``stem + suffix`` in at most ``max_bytes`` of UTF-8, cut at a character boundary; the
    suffix (``.pdf``, ``-2.pdf``) is kept whole, so the type and uniqueness survive the cut."""
    room = max(max_bytes - len(suffix.encode("utf-8")), 1)
    return stem.encode("utf-8")[:room].decode("utf-8", "ignore") + suffix


def split_suffix(name: str) -> tuple[str, str]:
    """``通知.pdf`` → ``("通知", ".pdf")``; a name without a short extension has no suffix."""
    stem, dot, ext = name.rpartition(".")
    if dot and stem and 0 < len(ext.encode("utf-8")) <= _MAX_SUFFIX_BYTES:
        return stem, dot + ext
    return name, ""


def safe_filename(name: str | None, fallback: str = "file") -> str:
    """A file name that is safe on disk: no folders, no control characters, no leading dots, at
    most :data:`MAX_NAME_BYTES` bytes of UTF-8 (a long Chinese name is cut, its extension kept)."""
    raw = unicodedata.normalize("NFC", name or "")
    raw = raw.replace("\\", "/").rsplit("/", 1)[-1]
    raw = "".join(ch for ch in raw if unicodedata.category(ch)[0] != "C")
    raw = _UNSAFE.sub("_", raw).strip(" .")
    if not raw or set(raw) <= {"_", "."}:
        raw = fallback
    return fit_name(*split_suffix(raw))


class DocumentEntry(BaseModel):
    doc_id: str
    source: str | None = None
    title: str = ""
    type: str | None = None
    pages: int | None = None
    chunks: int | None = None
    status: Literal["indexed", "failed", "processing"] = "indexed"
    error: str | None = None
    bytes: int | None = None
    updated_at: float | None = None
    job_id: str | None = None


def interrupted_reason(name: str) -> str:
    return f"「{name}」导入中断：处理它的导入任务已不在运行（服务曾重启），请重新上传"


class DocumentLedger:
    """``<kb dir>/documents.json``: the last upload status of each file (failed ones included)."""

    _lock = threading.Lock()

    def __init__(self, kb_dir: Path) -> None:
        self.path = kb_dir / "documents.json"

    def read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def update(self, doc_id: str, entry: dict[str, Any] | None, *, create: bool = True) -> None:
        """Set (or with None drop) one entry; ``create=False`` never makes the KB's folder again
        (a job's late write must not resurrect a deleted KB)."""
        with self._lock:
            if not create and not self.path.parent.is_dir():
                return
            data = self.read()
            if entry is None:
                data.pop(doc_id, None)
            else:
                data[doc_id] = entry
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.path, json.dumps(data, ensure_ascii=False, indent=1))

    def fail_orphans(self, live_jobs: set[str]) -> int:
        """Entries 「processing」 whose job is not live → failed with the reason; how many."""
        with self._lock:
            data = self.read()
            stale = [
                doc_id
                for doc_id, raw in data.items()
                if raw.get("status") == "processing" and raw.get("job_id") not in live_jobs
            ]
            for doc_id in stale:
                data[doc_id] = {**data[doc_id], "status": "failed", "error": interrupted_reason(doc_id)}
            if stale:
                atomic_write_text(self.path, json.dumps(data, ensure_ascii=False, indent=1))
            return len(stale)


class UploadSlot:
    """One upload while its bytes arrive: its job id and spool folder, its share of the budget."""

    def __init__(self, manager: JobManager, kb: str) -> None:
        self.manager = manager
        self.kb = kb
        self.job_id = uuid.uuid4().hex[:16]
        self.folder = manager.spool_root / self.job_id
        self.received = 0
        self.queued = False
        self.folder.mkdir(parents=True, exist_ok=True)

    def take(self, size: int) -> None:
        """``size`` more bytes arrived; 507 once the queue's byte cap or the disk is full."""
        self.manager.budget.take(size)
        self.received += size

    def close(self) -> None:
        """The upload is over: a job now owns the folder, or it is removed."""
        if not self.queued:
            shutil.rmtree(self.folder, ignore_errors=True)
        self.manager.upload_over(self)


class JobManager:
    """The durable upload queue and its one worker thread (see the module docstring); one per
    home and process — get it from :func:`job_manager`."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.spool_root = settings.home / "uploads"
        self.store = JobStore(settings.home / "jobs.sqlite3")
        ingest = settings.ingest
        self.budget = SpoolBudget(ingest.max_queued_jobs, ingest.max_spool_bytes, self.spool_root)
        self._lock = threading.Lock()
        self._live: dict[str, Job] = {}  # the running job: its progress (pages) in memory
        self._arriving: Counter[str] = Counter()  # KB → uploads still arriving
        self._deleting: set[str] = set()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self.recover()
        # a daemon: a process that must exit (tests, a stop past STOP_WAIT_S) never waits for it;
        # the job it ran stays unfinished in the queue and is resumed at the next start
        self._worker = threading.Thread(target=self._work, name="zhiwen-index", daemon=True)
        self._worker.start()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    # -- uploads ------------------------------------------------------------------------------------
    def open_upload(self, kb: str, declared: int | None) -> UploadSlot:
        """Admit one upload into ``kb`` before its body is read: 409 while the KB is being
        deleted, 429 with the queue full, 507 when ``declared`` bytes do not fit."""
        with self._lock:
            if kb in self._deleting:
                raise _kb_deleting(kb)
            self.budget.admit(declared)
            self._arriving[kb] += 1
        return UploadSlot(self, kb)

    def upload_over(self, slot: UploadSlot) -> None:
        with self._lock:
            self._arriving[slot.kb] -= 1
            if self._arriving[slot.kb] <= 0:
                del self._arriving[slot.kb]
            self.budget.settle(slot.received, queued=slot.queued)

    def submit(self, slot: UploadSlot, names: list[str], *, ocr: str | None = None) -> Job:
        """The upload's files (saved under ``slot.folder``) become a queued job."""
        job = Job(id=slot.job_id, kb=slot.kb, created_at=time.time(), files=[JobFile(name=n) for n in names])
        self.store.insert(job, spool=slot.folder, size=slot.received, ocr=ocr)
        slot.queued = True
        ledger = DocumentLedger(self.settings.kb_root / slot.kb)
        for name in names:
            entry = {"doc_id": name, "source": name, "status": "processing", "job_id": job.id}
            ledger.update(name, {**entry, "updated_at": job.created_at})
        self._wake.set()
        return job

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            live = self._live.get(job_id)
            if live is not None:
                return live.model_copy(deep=True)
        return self.store.get(job_id)

    def live_job_ids(self) -> set[str]:
        """Jobs that will still run or run now: a 「processing」 document of any other is stale."""
        return {row.job.id for row in self.store.unfinished()}

    @contextlib.contextmanager
    def deleting(self, kb: str) -> Iterator[None]:
        """Hold off uploads into ``kb`` while it is deleted; 409 while a job of it is unfinished
        or an upload into it arrives (the job would write into the deleted folder)."""
        with self._lock:
            pending = [row.job.id for row in self.store.unfinished(kb)]
            if pending or self._arriving.get(kb):
                raise _kb_importing(kb, pending, self._arriving.get(kb, 0))
            self._deleting.add(kb)
        try:
            yield
        finally:
            with self._lock:
                self._deleting.discard(kb)

    def shutdown(self, timeout: float = STOP_WAIT_S) -> None:
        """Stop after the file in hand (its job stays queued, resumed at the next start)."""
        self._stop.set()
        self._wake.set()
        self._worker.join(timeout)
        with self._lock:
            cut_short = list(self._live.values())
        for job in cut_short:  # the file in hand outlived the wait: redo it at the next start
            self.store.save(_requeued(job))
        if not self._worker.is_alive():
            self.store.close()

    # -- start: resume or fail what the last process left -------------------------------------------
    def recover(self) -> None:
        live: set[str] = set()
        for row in self.store.unfinished():
            reason = self._resume(row)
            if reason is None:
                live.add(row.job.id)
            else:
                self._end(row, reason)
        self._remove_orphan_spools(live)
        self._fail_orphan_documents(live)
        self.budget.refresh(self.store)

    def _resume(self, row: JobRow) -> str | None:
        """Put an unfinished job back in the queue; or the reason it cannot run again."""
        job = row.job
        missing = [f.name for f in job.files if f.status in _PENDING and not (row.spool / f.name).is_file()]
        if missing:
            return f"服务重启后找不到暂存的上传文件（{'、'.join(missing[:3])}），请重新上传"
        if job.status == "running":  # the process died while it ran (kill -9, OOM, power)
            crashes = self.store.count_crash(job.id)
            if crashes >= MAX_CRASHES:
                return f"导入此任务时服务已 {crashes} 次意外退出，不再重试；请检查文件后重新上传"
            job.resumed += 1
        self.store.save(_requeued(job))
        log.info("upload job %s resumed after a restart (%d file(s) left)", job.id, _pending(job))
        return None

    def _remove_orphan_spools(self, live: set[str]) -> None:
        if not self.spool_root.is_dir():
            return
        for path in self.spool_root.iterdir():
            if path.name not in live:
                log.info("removing spooled upload %s: no unfinished job owns it", path.name)
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)

    def _fail_orphan_documents(self, live: set[str]) -> None:
        root = self.settings.kb_root
        for ledger_path in root.glob("*/documents.json") if root.is_dir() else ():
            fixed = DocumentLedger(ledger_path.parent).fail_orphans(live)
            if fixed:
                log.warning(
                    "%s: %d document(s) left 「processing」 by a lost job marked failed", ledger_path, fixed
                )

    # -- the worker ---------------------------------------------------------------------------------
    def _work(self) -> None:
        while not self._stop.is_set():
            try:
                row = self.store.next_queued()
            except Exception:  # the queue's database went away (tests removing a home): stop
                log.debug("upload queue unreadable; the worker stops", exc_info=True)
                return
            if row is None:
                self._wake.wait(5.0)
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
            finished = self._index_files(job, row)
        finally:
            with self._lock:
                self._live.pop(job.id, None)
        if finished:
            self._end(row, None)
        else:  # stopping: the rest waits in the queue for the next start
            self.store.save(_requeued(job))

    def _index_files(self, job: Job, row: JobRow) -> bool:
        """Index each pending file; False when the server stops before the last one."""
        from zhiwen.ingest.files import ocr_provider
        from zhiwen.kb import open_kb

        # submit made the KB's folder (its ledger): a folder gone since was deleted behind the
        # server's back (``zhiwen kb delete``); the job must not make it again
        folder = self.settings.kb_root / job.kb
        try:
            if not folder.is_dir():
                raise _KBGone(job.kb)
            kb = open_kb(job.kb, settings=self.settings, create=True)
            with ocr_provider(self.settings) as engine:
                for entry in job.files:
                    if entry.status != "queued":
                        continue
                    if self._stop.is_set():
                        return False
                    if not folder.is_dir():
                        raise _KBGone(job.kb)
                    self._one(kb, job, row.spool / entry.name, entry, row.ocr, engine)
                    self.store.save(job)
        except _KBGone as gone:
            job.error = gone.message
            self._fail_pending(job, gone.message)
        except Exception as exc:  # the KB itself failed (store down, bad config): every file fails
            log.exception("upload job %s failed", job.id)
            message = exc.message if isinstance(exc, ZhiwenError) else f"{type(exc).__name__}: {exc}"
            self._fail_pending(job, message)
        return True

    def _end(self, row: JobRow, reason: str | None) -> None:
        """The job is over (``reason``: why the rest of it cannot run): counts, row, no spool."""
        job = row.job
        if reason is not None:
            job.error = reason
            self._fail_pending(job, reason)
        job.indexed = sum(f.status == "indexed" for f in job.files)
        job.skipped = sum(f.status == "skipped" for f in job.files)
        job.failed = sum(f.status == "failed" for f in job.files)
        job.status = "done" if not job.failed else ("failed" if job.failed == len(job.files) else "partial")
        job.finished_at = time.time()
        self.store.save(job)
        shutil.rmtree(row.spool, ignore_errors=True)
        self.budget.refresh(self.store)
        self.store.forget_old()

    def _fail_pending(self, job: Job, message: str) -> None:
        for entry in job.files:
            if entry.status in _PENDING:
                entry.status, entry.error = "failed", f"「{entry.name}」导入失败：{message}"
                self._ledger_failed(job, entry)

    def _one(self, kb: Any, job: Job, path: Path, entry: JobFile, ocr: str | None, engine: Any) -> None:
        from zhiwen.ingest.files import parse_one
        from zhiwen.ingest.limits import IngestLimits

        start = time.perf_counter()
        entry.status = "parsing"

        def on_page(_: str, done: int, total: int) -> None:
            entry.pages_done = done

        result = parse_one(
            path,
            entry.name,
            kind=None,
            limits=IngestLimits.from_settings(self.settings),
            ocr=ocr or self.settings.ingest.ocr,
            engine=engine,
            ocr_scale=self.settings.ingest.ocr_scale,
            on_page=on_page,
        )
        entry.type = result.kind
        if result.status != "ok" or result.parsed is None:
            entry.status, entry.error = "failed", result.error
        else:
            entry.pages, entry.ocr_pages = result.parsed.pages, result.parsed.ocr_pages
            self._store_parsed(kb, result, entry)
        entry.seconds = round(time.perf_counter() - start, 3)
        if entry.status == "failed":
            self._ledger_failed(job, entry)
        else:  # the store is the record of indexed documents
            DocumentLedger(kb.path).update(entry.doc_id or entry.name, None, create=False)

    def _store_parsed(self, kb: Any, result: Any, entry: JobFile) -> None:
        from zhiwen.documents import Document
        from zhiwen.ingest.files import document_chunks, result_document

        doc = result_document(result, doc_id=entry.name)
        entry.doc_id = doc.id
        existing = kb.get_parents([doc.id])
        if existing and existing[0].metadata.get("file_sha256") == result.sha256:
            entry.status = "skipped"
            entry.chunks = existing[0].metadata.get("chunks")
            entry.error = "内容未变化，已跳过"
            return
        entry.status = "indexing"
        chunks = document_chunks(
            result, doc, kb.config.chunk_max_chars, self.settings.retrieval.chunk_overlap_chars
        )
        doc = Document(doc.id, doc.text, doc.title, {**doc.metadata, "chunks": len(chunks)})
        try:
            # lexical-first: searchable as soon as its text is stored; the process's
            # background filler embeds it behind (kb.info() shows the dense coverage)
            kb.index_documents([doc], chunks=chunks, prune=False, progress=False, dense="background")
        except ZhiwenError as exc:
            entry.status, entry.error = "failed", f"「{entry.name}」导入失败：{exc.message}"
            return
        entry.status, entry.chunks = "indexed", len(chunks)

    def _ledger_failed(self, job: Job, entry: JobFile) -> None:
        entry_data = {"doc_id": entry.name, "source": entry.name, "type": entry.type, "status": "failed"}
        DocumentLedger(self.settings.kb_root / job.kb).update(
            entry.name,
            {**entry_data, "error": entry.error, "job_id": job.id, "updated_at": time.time()},
            create=False,
        )


class _KBGone(ZhiwenError):
    def __init__(self, kb: str) -> None:
        super().__init__(f"knowledge base {kb!r} was deleted", message=f"知识库「{kb}」已被删除，导入已取消")


def _requeued(job: Job) -> Job:
    """The job as it waits for its next run: files cut short go back to queued."""
    copy = job.model_copy(deep=True)
    copy.status = "queued"
    for entry in copy.files:
        if entry.status in ("parsing", "indexing"):
            entry.status, entry.pages_done = "queued", 0
    return copy


def _pending(job: Job) -> int:
    return sum(f.status in _PENDING for f in job.files)


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


_MANAGERS: dict[str, JobManager] = {}
_MANAGERS_LOCK = threading.Lock()


def job_manager(settings: Settings) -> JobManager:
    """The upload queue of ``settings.home`` in this process (made, and recovered, on first use)."""
    key = str(settings.home.resolve())
    with _MANAGERS_LOCK:
        manager = _MANAGERS.get(key)
        if manager is None or manager.stopped:
            manager = _MANAGERS[key] = JobManager(settings)
        return manager


def stop_job_manager(settings: Settings, timeout: float = STOP_WAIT_S) -> None:
    """Stop the home's upload worker (server shutdown); unfinished jobs wait in the queue."""
    with _MANAGERS_LOCK:
        manager = _MANAGERS.pop(str(settings.home.resolve()), None)
    if manager is not None:
        manager.shutdown(timeout)
