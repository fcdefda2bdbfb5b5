"""Background document indexing for the upload API: jobs, per-file progress, the document ledger.

An upload is saved under ``$ZHIWEN_HOME/uploads/<job id>/`` with sanitized names and becomes a
:class:`Job`; one worker thread indexes jobs in order (indexing is CPU-bound, and a KB takes one
writer at a time anyway). Each file is parsed and indexed on its own, so a bad file fails alone
and leaves nothing in the KB; an unchanged file (same SHA-256 as the indexed one) is skipped, a
changed one replaces its chunks (the store's per-document upsert). A file is "indexed" once its
text is stored and BM25-searchable; its vectors fill in behind, in the process's background
filler (:mod:`zhiwen.kb.background`), so a big upload never holds the queue. The ledger
``<kb>/documents.json`` keeps each uploaded file's last status and error, so the document list
shows failed uploads next to indexed documents.

Example::

    >>> jobs = JobManager(settings)
    >>> job = jobs.submit("policies", [(Path("/tmp/up/通知.pdf"), "通知.pdf")], ocr=None)
    >>> jobs.get(job.id).files[0].status            # queued → parsing → indexing → indexed
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import threading
import time
import unicodedata
import uuid
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from zhiwen.config import Settings
from zhiwen.errors import ZhiwenError
from zhiwen.fsutil import atomic_write_text

log = logging.getLogger(__name__)

FileStatus = Literal["queued", "parsing", "indexing", "indexed", "skipped", "failed"]
JobStatus = Literal["queued", "running", "done", "partial", "failed"]
_KEEP_JOBS = 500
_UNSAFE = re.compile(r"[^\w\u3400-\u9fff（）().\-+ ]")


def safe_filename(name: str | None, fallback: str = "file") -> str:
    """A file name that is safe on disk: no folders, no control characters, no leading dots."""
    raw = unicodedata.normalize("NFC", name or "")
    raw = raw.replace("\\", "/").rsplit("/", 1)[-1]
    raw = "".join(ch for ch in raw if unicodedata.category(ch)[0] != "C")
    raw = _UNSAFE.sub("_", raw).strip(" .")
    if not raw or set(raw) <= {"_", "."}:
        raw = fallback
    if len(raw) > 120:
        stem, dot, suffix = raw.rpartition(".")
        raw = (stem[:110] + dot + suffix[:9]) if dot and len(suffix) <= 9 else raw[:120]
    return raw


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

    def update(self, doc_id: str, entry: dict[str, Any] | None) -> None:
        with self._lock:
            data = self.read()
            if entry is None:
                data.pop(doc_id, None)
            else:
                data[doc_id] = entry
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.path, json.dumps(data, ensure_ascii=False, indent=1))


class JobManager:
    """Runs upload jobs one after another in a background thread (see the module docstring)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="zhiwen-index")

    def new_job_dir(self) -> tuple[str, Path]:
        job_id = uuid.uuid4().hex[:16]
        path = self.settings.home / "uploads" / job_id
        path.mkdir(parents=True, exist_ok=True)
        return job_id, path

    def submit(self, job_id: str, kb: str, files: list[tuple[Path, str]], *, ocr: str | None = None) -> Job:
        job = Job(id=job_id, kb=kb, created_at=time.time(), files=[JobFile(name=name) for _, name in files])
        with self._lock:
            self._jobs[job.id] = job
            while len(self._jobs) > _KEEP_JOBS:
                self._jobs.popitem(last=False)
        ledger = DocumentLedger(self.settings.kb_root / kb)
        for _, name in files:
            ledger.update(
                name,
                {
                    "doc_id": name,
                    "source": name,
                    "status": "processing",
                    "job_id": job.id,
                    "updated_at": job.created_at,
                },
            )
        self._pool.submit(self._run, job, files, ocr)
        return job.model_copy(deep=True)

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            job = self._jobs.get(job_id)
            return job.model_copy(deep=True) if job is not None else None

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True)

    # -- the worker ---------------------------------------------------------------------------------
    def _run(self, job: Job, files: list[tuple[Path, str]], ocr: str | None) -> None:
        from zhiwen.ingest.files import ocr_provider

        job.status = "running"
        job.started_at = time.time()
        try:
            from zhiwen.kb import open_kb

            kb = open_kb(job.kb, settings=self.settings, create=True)
            with ocr_provider(self.settings) as engine:
                for (path, _), entry in zip(files, job.files, strict=True):
                    self._one(kb, job, path, entry, ocr, engine)
        except Exception as exc:  # the KB itself failed (store down, bad config): every file fails
            log.exception("upload job %s failed", job.id)
            message = exc.message if isinstance(exc, ZhiwenError) else f"{type(exc).__name__}: {exc}"
            for entry in job.files:
                if entry.status not in ("indexed", "skipped", "failed"):
                    entry.status, entry.error = "failed", f"「{entry.name}」导入失败：{message}"
                    self._ledger_failed(job, entry)
        finally:
            job.indexed = sum(f.status == "indexed" for f in job.files)
            job.skipped = sum(f.status == "skipped" for f in job.files)
            job.failed = sum(f.status == "failed" for f in job.files)
            job.status = (
                "done" if not job.failed else ("failed" if job.failed == len(job.files) else "partial")
            )
            job.finished_at = time.time()
            shutil.rmtree(self.settings.home / "uploads" / job.id, ignore_errors=True)

    def _one(self, kb: Any, job: Job, path: Path, entry: JobFile, ocr: str | None, engine: Any) -> None:
        from zhiwen.ingest.files import document_chunks, parse_one, result_document
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
            entry.seconds = round(time.perf_counter() - start, 3)
            self._ledger_failed(job, entry)
            return
        entry.pages, entry.ocr_pages = result.parsed.pages, result.parsed.ocr_pages
        doc = result_document(result, doc_id=entry.name)
        entry.doc_id = doc.id
        existing = kb.get_parents([doc.id])
        if existing and existing[0].metadata.get("file_sha256") == result.sha256:
            entry.status = "skipped"
            entry.chunks = existing[0].metadata.get("chunks")
            entry.error = "内容未变化，已跳过"
        else:
            entry.status = "indexing"
            chunks = document_chunks(
                result, doc, kb.config.chunk_max_chars, self.settings.retrieval.chunk_overlap_chars
            )
            from zhiwen.documents import Document

            doc = Document(doc.id, doc.text, doc.title, {**doc.metadata, "chunks": len(chunks)})
            try:
                # lexical-first: searchable as soon as its text is stored; the process's
                # background filler embeds it behind (kb.info() shows the dense coverage)
                kb.index_documents([doc], chunks=chunks, prune=False, progress=False, dense="background")
            except ZhiwenError as exc:
                entry.status, entry.error = "failed", f"「{entry.name}」导入失败：{exc.message}"
                entry.seconds = round(time.perf_counter() - start, 3)
                self._ledger_failed(job, entry)
                return
            entry.status, entry.chunks = "indexed", len(chunks)
        entry.seconds = round(time.perf_counter() - start, 3)
        DocumentLedger(kb.path).update(doc.id, None)  # the store is the record of indexed documents

    def _ledger_failed(self, job: Job, entry: JobFile) -> None:
        DocumentLedger(self.settings.kb_root / job.kb).update(
            entry.name,
            {
                "doc_id": entry.name,
                "source": entry.name,
                "type": entry.type,
                "status": "failed",
                "error": entry.error,
                "job_id": job.id,
                "updated_at": time.time(),
            },
        )
