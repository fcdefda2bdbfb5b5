"""Upload and manage documents of a knowledge base over HTTP.

| method | path | what |
|--------|------|------|
| POST | ``/api/v1/kbs/{kb}/documents`` | upload files (multipart ``files``): 202 + job |
| GET | ``/api/v1/jobs/{job_id}`` | per-file status, pages, chunks, errors |
| GET | ``/api/v1/kbs/{kb}/documents`` | type, pages, chunks, status, error (failed uploads too) |
| DELETE | ``/api/v1/kbs/{kb}/documents/{doc_id}`` | remove one document (its chunks and parent) |

Uploads return at once; one background worker indexes them (``?ocr=auto|always|never``); a
file goes queued → parsing → indexing → indexed / skipped (unchanged) / failed. Jobs are durable
(:mod:`zhiwen.api.jobs`): ``GET /api/v1/jobs/{id}`` answers across restarts, and an unfinished
job is resumed or failed with a reason at the next start. The queue is capped: past
``ingest.max_queued_jobs`` unfinished jobs an upload is 429 (3010, ``Retry-After``), past
``ingest.max_spool_bytes`` spooled bytes (or a full disk) 507 (3011); an upload into a KB being
deleted is 409. A client that hangs up mid-upload is 499 and leaves nothing spooled.

The body is streamed through a byte counter: a request declaring more than
``ingest.max_upload_bytes`` is refused with 413 before a byte is read, one that turns out larger
is cut off with 413 as soon as it passes the limit. File names are sanitized before they touch
the disk and cut to 255 bytes of UTF-8, extension kept (:func:`zhiwen.api.jobs.safe_filename`).

Example::

    curl -F files=@通知.pdf -F files=@制度.docx http://127.0.0.1:8000/api/v1/kbs/policies/documents
    curl http://127.0.0.1:8000/api/v1/jobs/3f2a9c0d1e4b5a67
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import ClientDisconnect

from zhiwen.api.jobs import (
    DocumentEntry,
    DocumentLedger,
    Job,
    JobManager,
    UploadSlot,
    fit_name,
    interrupted_reason,
    job_manager,
    safe_filename,
    split_suffix,
)
from zhiwen.api.middleware import ClientClosed
from zhiwen.appkit.deps import (
    Access,
    KBName,
    KBRegistry,
    get_access,
    get_kb_registry,
    get_settings_dep,
    require_kb_read,
    require_kb_write,
)
from zhiwen.appkit.envelope import Envelope, ok
from zhiwen.config import Settings
from zhiwen.errors import InvalidParameter, MissingParameter, NotFound, PayloadTooLarge

router = APIRouter(prefix="/api/v1", tags=["documents"])
MAX_FILES = 200
_CHUNK = 1 << 20


_UPLOAD_PATH = re.compile(r"^/api/v1/kbs/[^/]+/documents/?$")


def is_upload_path(path: str) -> bool:
    """True for the upload route: it streams and limits its own body (``ingest.max_upload_bytes``),
    so the 64 KB JSON body limit of :class:`~zhiwen.api.middleware.BodyLimitMiddleware` must skip it."""
    return bool(_UPLOAD_PATH.match(path))


def get_job_manager(request: Request) -> JobManager:
    """The home's durable upload queue (made and recovered on first use, or at server start)."""
    return job_manager(get_settings_dep(request))


def _too_large(limit: int, size: int | None = None) -> PayloadTooLarge:
    data: dict[str, Any] = {"max_bytes": limit}
    if size is not None:
        data["content_length"] = size
    return PayloadTooLarge(
        f"upload over {limit} bytes", message=f"上传内容过大（上限 {limit // 1024 // 1024} MB）", data=data
    )


async def _limited(stream: AsyncIterator[bytes], limit: int, slot: UploadSlot) -> AsyncGenerator[bytes, None]:
    """The body, cut off with 413 past ``limit`` and with 507 once the upload queue is full."""
    seen = 0
    async for chunk in stream:
        seen += len(chunk)
        if seen > limit:
            raise _too_large(limit)
        slot.take(len(chunk))
        yield chunk


class DocumentList(BaseModel):
    kb: str
    documents: list[DocumentEntry]
    count: int


class Deleted(BaseModel):
    kb: str
    doc_id: str
    chunks_removed: int


@router.post(
    "/kbs/{kb}/documents",
    summary="上传文档（后台导入）",
    status_code=202,
    dependencies=[Depends(require_kb_write)],  # 401 / 403 before a byte of the body is read
    response_model=Envelope[Job],
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "properties": {
                            "files": {"type": "array", "items": {"type": "string", "format": "binary"}}
                        },
                        "required": ["files"],
                    }
                }
            },
        }
    },
)
async def upload_documents(
    request: Request,
    kb: Annotated[KBName, Path(description="知识库名称（不存在时自动创建）")],
    ocr: Annotated[
        str | None, Query(pattern="^(auto|always|never)$", description="OCR：auto | always | never")
    ] = None,
    settings: Settings = Depends(get_settings_dep),
    jobs: JobManager = Depends(get_job_manager),
) -> dict[str, Any]:
    limit = settings.ingest.max_upload_bytes
    declared = request.headers.get("content-length")
    size = int(declared) if declared and declared.isdigit() else None
    if size is not None and size > limit:
        raise _too_large(limit, size)
    if not request.headers.get("content-type", "").lower().startswith("multipart/form-data"):
        raise InvalidParameter(
            "expected multipart/form-data", message="请用 multipart/form-data 上传文件（字段名 files）"
        )
    # 409 (KB being deleted) / 429 (queue full) / 507 (no room) before a byte is read
    slot = await run_in_threadpool(jobs.open_upload, kb, size)
    try:
        names = await _receive(request, slot, limit)
        job = await run_in_threadpool(jobs.submit, slot, names, ocr=ocr)
    finally:
        slot.close()  # a refused or broken upload leaves nothing under uploads/
    return ok(job.model_dump())


async def _receive(request: Request, slot: UploadSlot, limit: int) -> list[str]:
    """Stream the multipart body into the slot's folder; the saved (sanitized, unique) names."""
    parser = MultiPartParser(
        request.headers, _limited(request.stream(), limit, slot), max_files=MAX_FILES, max_fields=50
    )
    try:
        form = await parser.parse()
    except MultiPartException as exc:
        raise InvalidParameter(str(exc), message=f"上传内容格式有误：{exc.message}") from exc
    except ClientDisconnect as exc:  # the client hung up mid-body: a 499, not a server error
        raise ClientClosed("client disconnected during the upload") from exc
    uploads = [v for key in ("files", "file") for v in form.getlist(key) if not isinstance(v, str)]
    taken: set[str] = set()
    names: list[str] = []
    for upload in uploads:
        name = _unique(safe_filename(upload.filename), taken)
        with (slot.folder / name).open("wb") as out:
            while block := await upload.read(_CHUNK):
                out.write(block)
        await upload.close()
        names.append(name)
    await form.close()
    if not names:
        raise MissingParameter("no files in the upload", message="缺少必需参数：files（至少一个文件）")
    return names


def _unique(name: str, taken: set[str]) -> str:
    """``name``, or ``name-2.pdf``, ``name-3.pdf``… (still within the byte limit) if taken."""
    candidate, n = name, 2
    stem, suffix = split_suffix(name)
    while candidate in taken:
        candidate = fit_name(stem, f"-{n}{suffix}")
        n += 1
    taken.add(candidate)
    return candidate


@router.get("/jobs/{job_id}", summary="导入任务进度", response_model=Envelope[Job])
async def get_job(
    job_id: str, jobs: JobManager = Depends(get_job_manager), access: Access = Depends(get_access)
) -> dict[str, Any]:
    job = jobs.get(job_id)
    if job is None:
        raise NotFound(f"no job {job_id!r}", message=f"导入任务不存在：{job_id}")
    access.require_kb(job.kb)
    return ok(job.model_dump())


def _list(registry: KBRegistry, name: str) -> list[DocumentEntry]:
    kb = registry.get(name)
    ids = sorted(kb.store.doc_ids())
    entries: dict[str, DocumentEntry] = {}
    for doc in kb.get_parents(ids):
        meta = doc.metadata
        source = meta.get("source")
        entries[doc.id] = DocumentEntry(
            doc_id=doc.id,
            source=source,
            title=doc.title,
            type=meta.get("format")
            or (str(source).rsplit(".", 1)[-1].lower() if source and "." in str(source) else None),
            pages=meta.get("pages"),
            chunks=meta.get("chunks"),
            bytes=meta.get("bytes"),
        )
    ledger = DocumentLedger(kb.path).read()
    if any(raw.get("status") == "processing" for raw in ledger.values()):
        _unless_live(ledger, job_manager(registry.settings).live_job_ids())
    for doc_id, raw in ledger.items():
        if doc_id in entries and raw.get("status") == "failed":
            continue  # the last upload failed; the indexed version is still what answers
        if doc_id in entries:
            entries[doc_id].status = raw.get("status", "indexed")
            continue
        entries[doc_id] = DocumentEntry.model_validate(raw)
    return sorted(entries.values(), key=lambda e: e.doc_id)


def _unless_live(ledger: dict[str, dict[str, Any]], live: set[str]) -> None:
    """A document is 「processing」 only while its job will still run; otherwise it failed."""
    for doc_id, raw in ledger.items():
        if raw.get("status") == "processing" and raw.get("job_id") not in live:
            ledger[doc_id] = {**raw, "status": "failed", "error": interrupted_reason(doc_id)}


@router.get(
    "/kbs/{kb}/documents",
    summary="列出文档",
    response_model=Envelope[DocumentList],
    dependencies=[Depends(require_kb_read)],
)
async def list_documents(kb: KBName, registry: KBRegistry = Depends(get_kb_registry)) -> dict[str, Any]:
    docs = await run_in_threadpool(_list, registry, kb)
    return ok({"kb": kb, "documents": [d.model_dump() for d in docs], "count": len(docs)})


def _delete(registry: KBRegistry, name: str, doc_id: str) -> int:
    kb = registry.get(name)
    ledger = DocumentLedger(kb.path)
    known = doc_id in kb.store.doc_ids()
    in_ledger = doc_id in ledger.read()
    if not known and not in_ledger:
        raise NotFound(f"no document {doc_id!r} in {name}", message=f"文档不存在：{doc_id}")
    removed = kb.delete_documents([doc_id]) if known else 0
    ledger.update(doc_id, None)
    return removed


@router.delete(
    "/kbs/{kb}/documents/{doc_id:path}",
    summary="删除文档",
    response_model=Envelope[Deleted],
    dependencies=[Depends(require_kb_write)],
)
async def delete_document(
    kb: KBName, doc_id: str, registry: KBRegistry = Depends(get_kb_registry)
) -> dict[str, Any]:
    removed = await run_in_threadpool(_delete, registry, kb, doc_id)
    return ok({"kb": kb, "doc_id": doc_id, "chunks_removed": removed})
