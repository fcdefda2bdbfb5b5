"""Upload and manage documents of a knowledge base over HTTP.

| method | path | what |
|--------|------|------|
| POST | ``/api/v1/kbs/{kb}/documents`` | upload files (multipart ``files``): 202 + job |
| GET | ``/api/v1/jobs/{job_id}`` | per-file status, pages, chunks, errors |
| GET | ``/api/v1/kbs/{kb}/documents`` | type, pages, chunks, status, error (failed uploads too) |
| DELETE | ``/api/v1/kbs/{kb}/documents/{doc_id}`` | remove one document (its chunks and parent) |

Uploads return at once; one background worker indexes them (``?ocr=auto|always|never``); a
file goes queued → parsing → indexing → indexed / skipped (unchanged) / failed.

The body is streamed through a byte counter: a request declaring more than
``ingest.max_upload_bytes`` is refused with 413 before a byte is read, one that turns out larger
is cut off with 413 as soon as it passes the limit. File names are sanitized before they touch
the disk (:func:`zhiwen.api.jobs.safe_filename`).

Example::

    curl -F files=@通知.pdf -F files=@制度.docx http://127.0.0.1:8000/api/v1/kbs/policies/documents
    curl http://127.0.0.1:8000/api/v1/jobs/3f2a9c0d1e4b5a67
"""

from __future__ import annotations

import re
import shutil
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool
from starlette.formparsers import MultiPartException, MultiPartParser

from zhiwen.api.jobs import DocumentEntry, DocumentLedger, Job, JobManager, safe_filename
from zhiwen.appkit.deps import KBName, KBRegistry, get_kb_registry, get_settings_dep
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
    jobs = getattr(request.app.state, "document_jobs", None)
    if jobs is None:
        jobs = request.app.state.document_jobs = JobManager(get_settings_dep(request))
    return jobs


def _too_large(limit: int, size: int | None = None) -> PayloadTooLarge:
    data: dict[str, Any] = {"max_bytes": limit}
    if size is not None:
        data["content_length"] = size
    return PayloadTooLarge(
        f"upload over {limit} bytes", message=f"上传内容过大（上限 {limit // 1024 // 1024} MB）", data=data
    )


async def _limited(stream: AsyncIterator[bytes], limit: int) -> AsyncGenerator[bytes, None]:
    seen = 0
    async for chunk in stream:
        seen += len(chunk)
        if seen > limit:
            raise _too_large(limit)
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
    if declared and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit, int(declared))
    if not request.headers.get("content-type", "").lower().startswith("multipart/form-data"):
        raise InvalidParameter(
            "expected multipart/form-data", message="请用 multipart/form-data 上传文件（字段名 files）"
        )
    job_id, folder = jobs.new_job_dir()
    saved: list[tuple[Any, str]] = []
    try:
        parser = MultiPartParser(
            request.headers, _limited(request.stream(), limit), max_files=MAX_FILES, max_fields=50
        )
        try:
            form = await parser.parse()
        except MultiPartException as exc:
            raise InvalidParameter(str(exc), message=f"上传内容格式有误：{exc.message}") from exc
        uploads = [v for key in ("files", "file") for v in form.getlist(key) if not isinstance(v, str)]
        taken: set[str] = set()
        for upload in uploads:
            name = _unique(safe_filename(upload.filename), taken)
            target = folder / name
            with target.open("wb") as out:
                while block := await upload.read(_CHUNK):
                    out.write(block)
            await upload.close()
            saved.append((target, name))
        await form.close()
        if not saved:
            raise MissingParameter("no files in the upload", message="缺少必需参数：files（至少一个文件）")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    job = await run_in_threadpool(jobs.submit, job_id, kb, saved, ocr=ocr)
    return ok(job.model_dump())


def _unique(name: str, taken: set[str]) -> str:
    candidate, n = name, 2
    while candidate in taken:
        stem, dot, suffix = name.rpartition(".")
        candidate = f"{stem}-{n}.{suffix}" if dot else f"{name}-{n}"
        n += 1
    taken.add(candidate)
    return candidate


@router.get("/jobs/{job_id}", summary="导入任务进度", response_model=Envelope[Job])
async def get_job(job_id: str, jobs: JobManager = Depends(get_job_manager)) -> dict[str, Any]:
    job = jobs.get(job_id)
    if job is None:
        raise NotFound(f"no job {job_id!r}", message=f"导入任务不存在：{job_id}")
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
    for doc_id, raw in DocumentLedger(kb.path).read().items():
        if doc_id in entries and raw.get("status") == "failed":
            continue  # the last upload failed; the indexed version is still what answers
        if doc_id in entries:
            entries[doc_id].status = raw.get("status", "indexed")
            continue
        entries[doc_id] = DocumentEntry.model_validate(raw)
    return sorted(entries.values(), key=lambda e: e.doc_id)


@router.get("/kbs/{kb}/documents", summary="列出文档", response_model=Envelope[DocumentList])
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


@router.delete("/kbs/{kb}/documents/{doc_id:path}", summary="删除文档", response_model=Envelope[Deleted])
async def delete_document(
    kb: KBName, doc_id: str, registry: KBRegistry = Depends(get_kb_registry)
) -> dict[str, Any]:
    removed = await run_in_threadpool(_delete, registry, kb, doc_id)
    return ok({"kb": kb, "doc_id": doc_id, "chunks_removed": removed})
