"""Upload and manage documents of a knowledge base over HTTP.

| method | path | what |
|--------|------|------|
| POST | ``/api/v1/kbs/{kb}/documents`` | upload files (multipart ``files``): 202 + job |
| POST | ``/api/v1/kbs/{kb}/documents`` with ``format=faq`` | FAQ files, imported at once: 202 + done job |
| GET | ``/api/v1/jobs/{job_id}`` | per-file status, pages, chunks, errors |
| GET | ``/api/v1/kbs/{kb}/documents`` | type, pages, chunks, status, error (failed uploads too) |
| DELETE | ``/api/v1/kbs/{kb}/documents/{doc_id}`` | remove one document (its chunks and parent) |

Uploads return at once; one background worker indexes them (``?ocr=auto|always|never``); a
file goes queued → parsing → indexing → indexed / skipped (unchanged) / failed. The routes are
thin: the work is the home's :class:`~zhiwen.uploads.UploadService` (``app.state.uploads``).
Jobs are durable: ``GET /api/v1/jobs/{id}`` answers across restarts, and an unfinished job is
resumed or failed with a reason at the next start. The queue is capped: past
``ingest.max_queued_jobs`` unfinished jobs an upload is 429 (3010, ``Retry-After``), past
``ingest.max_spool_bytes`` spooled bytes (or a full disk) 507 (3011); an upload into a KB being
deleted is 409. A client that hangs up mid-upload is 499 and leaves nothing spooled.

The body is streamed part by part into the spool (:mod:`zhiwen.api.upload_body`): a request
declaring more than ``ingest.max_upload_bytes`` is refused with 413 before a byte is read, one
that turns out larger is cut off with 413 as soon as it passes the limit, and so is a file past
``ingest.max_file_bytes`` (413 naming the file), before it is spooled whole. File names are
sanitized before they touch the disk and cut to 255 bytes of UTF-8, extension kept
(:func:`zhiwen.uploads.names.safe_filename`).

Example::

    curl -F files=@通知.pdf -F files=@制度.docx http://127.0.0.1:8000/api/v1/kbs/policies/documents
    curl http://127.0.0.1:8000/api/v1/jobs/3f2a9c0d1e4b5a67
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from zhiwen.api.background import get_uploads
from zhiwen.api.upload_body import declared_upload_size, receive_files
from zhiwen.config import Settings
from zhiwen.errors import InvalidParameter
from zhiwen.httpkit.auth import Access
from zhiwen.httpkit.deps import (
    KBRegistry,
    get_access,
    get_kb_registry,
    get_settings_dep,
    require_kb_read,
    require_kb_write,
)
from zhiwen.httpkit.envelope import Envelope, ok
from zhiwen.httpkit.fields import KBName
from zhiwen.uploads import DocumentEntry, Job, UploadService

router = APIRouter(prefix="/api/v1", tags=["documents"])

_UPLOAD_PATH = re.compile(r"^/api/v1/kbs/[^/]+/(documents|faq/import)/?$")
#: ``format`` of an upload: documents (parsed and indexed by the worker) or FAQ files
UPLOAD_FORMATS = ("documents", "faq")


def is_upload_path(path: str) -> bool:
    """True for the upload routes (documents, FAQ import): they stream and limit their own body
    (``ingest.max_upload_bytes``), so the 64 KB JSON body limit of
    :class:`~zhiwen.api.middleware.BodyLimitMiddleware` must skip them."""
    return bool(_UPLOAD_PATH.match(path))


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
                            "files": {"type": "array", "items": {"type": "string", "format": "binary"}},
                            "format": {
                                "type": "string",
                                "enum": list(UPLOAD_FORMATS),
                                "description": "faq：作为 FAQ 文件（CSV/XLSX/JSONL）立即导入（全部或全不）",
                            },
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
    uploads: UploadService = Depends(get_uploads),
    access: Access = Depends(get_access),
) -> dict[str, Any]:
    limit = settings.ingest.max_upload_bytes
    size = declared_upload_size(request.headers, limit, "文件（字段名 files）")
    # 409 (KB being deleted) / 429 (queue full) / 507 (no room) before a byte is read
    slot = await run_in_threadpool(uploads.open_upload, kb, size)
    try:
        await receive_files(request.headers, request.stream(), slot, limit=limit)
        if _upload_format(slot.form.get("format")) == "faq":
            job, _ = await run_in_threadpool(lambda: uploads.import_faq(slot, actor=access.caller))
        else:
            job = await run_in_threadpool(uploads.submit, slot, ocr=ocr)
    finally:
        slot.close()  # a refused or broken upload leaves nothing under uploads/
    return ok(job.model_dump())


def _upload_format(value: str | None) -> str:
    fmt = (value or "documents").strip().lower()
    if fmt not in UPLOAD_FORMATS:
        raise InvalidParameter(
            f"bad upload format {value!r}", message=f"format 取值无效：{value}（可选 documents、faq）"
        )
    return fmt


@router.get("/jobs/{job_id}", summary="导入任务进度", response_model=Envelope[Job])
async def get_job(
    job_id: str, uploads: UploadService = Depends(get_uploads), access: Access = Depends(get_access)
) -> dict[str, Any]:
    job = await run_in_threadpool(uploads.job, job_id)
    access.require_kb(job.kb)
    return ok(job.model_dump())


@router.get(
    "/kbs/{kb}/documents",
    summary="列出文档",
    response_model=Envelope[DocumentList],
    dependencies=[Depends(require_kb_read)],
)
async def list_documents(
    kb: KBName, registry: KBRegistry = Depends(get_kb_registry), uploads: UploadService = Depends(get_uploads)
) -> dict[str, Any]:
    docs = await run_in_threadpool(uploads.documents, await registry.aget(kb))
    return ok({"kb": kb, "documents": [d.model_dump() for d in docs], "count": len(docs)})


@router.delete(
    "/kbs/{kb}/documents/{doc_id:path}",
    summary="删除文档",
    response_model=Envelope[Deleted],
    dependencies=[Depends(require_kb_write)],
)
async def delete_document(
    kb: KBName,
    doc_id: str,
    registry: KBRegistry = Depends(get_kb_registry),
    uploads: UploadService = Depends(get_uploads),
) -> dict[str, Any]:
    removed = await run_in_threadpool(uploads.delete_document, await registry.aget(kb), doc_id)
    return ok({"kb": kb, "doc_id": doc_id, "chunks_removed": removed})
