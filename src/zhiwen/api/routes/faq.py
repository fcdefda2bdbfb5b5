"""A KB's FAQ entries (#36): list, add, edit, delete, import a file, export, the threshold.

| method | path | what |
|--------|------|------|
| GET | ``/api/v1/kbs/{kb}/faq?q=&limit=&offset=`` | ``{items, total, threshold}`` |
| POST | ``/api/v1/kbs/{kb}/faq`` | ``{question, answer, similar?, category?}`` → the entry |
| PATCH / DELETE | ``/api/v1/kbs/{kb}/faq/{entry_id}`` | change or delete one entry |
| POST | ``/api/v1/kbs/{kb}/faq/import`` | multipart ``file``/``files`` (CSV, XLSX, JSONL) |
| GET | ``/api/v1/kbs/{kb}/faq/export?format=csv|jsonl`` | a file the import reads back |
| PUT | ``/api/v1/kbs/{kb}/faq/settings`` | ``{threshold}`` |

An import is all or nothing: any bad row (an empty answer, a question repeated in the file or
asked by another entry, too long, wrong columns) is 422 / 3007 with every bad row in
``data.errors`` (``[{row, column, reason}]``) and nothing imported. Its body is streamed and
limited like a document upload (:mod:`zhiwen.api.upload_body`). The list needs read access;
every change needs write access and is one recorded, undoable change (``/changes/undo``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import quote

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from zhiwen.api.background import get_uploads
from zhiwen.api.upload_body import declared_upload_size, receive_files
from zhiwen.config import Settings
from zhiwen.errors import InvalidParameter
from zhiwen.faq import FAQEntry
from zhiwen.httpkit.auth import Access
from zhiwen.httpkit.deps import get_access, get_kb, get_settings_dep, require_kb_read, require_kb_write
from zhiwen.httpkit.envelope import Envelope, ok
from zhiwen.kb import KnowledgeBase
from zhiwen.kb.faq import faq_entries
from zhiwen.owner import faq as owner_faq
from zhiwen.uploads import UploadService

router = APIRouter(prefix="/api/v1", tags=["faq"])
TheKB = Annotated[KnowledgeBase, Depends(get_kb)]
Caller = Annotated[Access, Depends(get_access)]
READ = [Depends(require_kb_read)]
WRITE = [Depends(require_kb_write)]  # before the KB is looked up: 403 first


class FAQEntryOut(BaseModel):
    id: str
    question: str
    answer: str
    similar: list[str]
    category: str = ""
    enabled: bool = True


class FAQList(BaseModel):
    items: list[FAQEntryOut]
    total: int
    threshold: float = Field(description="相似度达到此值时直接返回 FAQ 答案")


class FAQNew(BaseModel):
    question: str
    answer: str
    similar: list[str] = Field(default_factory=list, description="相似问题")
    category: str = ""


class FAQPatch(BaseModel):
    question: str | None = None
    answer: str | None = None
    similar: list[str] | None = None
    category: str | None = None
    enabled: bool | None = None


class FAQDeleted(BaseModel):
    id: str
    deleted: bool = True


class FAQImported(BaseModel):
    added: int
    updated: int
    unchanged: int
    files: list[str]


class FAQSettingsIO(BaseModel):
    threshold: float = Field(ge=0.0, le=1.0, description="0–1；越高越严格")


def _out(entry: FAQEntry) -> dict[str, Any]:
    return owner_faq.entry_out(entry)


@router.get("/kbs/{kb}/faq", summary="FAQ 列表", response_model=Envelope[FAQList], dependencies=READ)
async def list_faq(
    kb: TheKB,
    q: Annotated[str | None, Query(max_length=200, description="在问题、答案、分类中查找")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> dict[str, Any]:
    def page() -> dict[str, Any]:
        items, total = owner_faq.list_entries(kb, q, limit=limit, offset=offset)
        return {"items": [_out(e) for e in items], "total": total, "threshold": owner_faq.threshold(kb)}

    return ok(await run_in_threadpool(page))


@router.post("/kbs/{kb}/faq", summary="新增 FAQ", response_model=Envelope[FAQEntryOut], dependencies=WRITE)
async def add_faq(kb: TheKB, body: FAQNew, access: Caller) -> dict[str, Any]:
    fields = owner_faq.EntryFields(
        question=body.question, answer=body.answer, similar=body.similar, category=body.category
    )
    entry = await run_in_threadpool(lambda: owner_faq.add_entry(kb, fields, actor=access.caller))
    return ok(_out(entry))


@router.patch(
    "/kbs/{kb}/faq/{entry_id}", summary="修改 FAQ", response_model=Envelope[FAQEntryOut], dependencies=WRITE
)
async def patch_faq(kb: TheKB, entry_id: str, body: FAQPatch, access: Caller) -> dict[str, Any]:
    fields = owner_faq.EntryFields(**body.model_dump())
    if fields == owner_faq.EntryFields():
        raise InvalidParameter(
            "nothing to change", message="没有要修改的内容（question、answer、similar、category、enabled）"
        )
    entry = await run_in_threadpool(lambda: owner_faq.update_entry(kb, entry_id, fields, actor=access.caller))
    return ok(_out(entry))


@router.delete(
    "/kbs/{kb}/faq/{entry_id}", summary="删除 FAQ", response_model=Envelope[FAQDeleted], dependencies=WRITE
)
async def delete_faq(kb: TheKB, entry_id: str, access: Caller) -> dict[str, Any]:
    await run_in_threadpool(lambda: owner_faq.delete_entry(kb, entry_id, actor=access.caller))
    return ok({"id": entry_id, "deleted": True})


@router.post(
    "/kbs/{kb}/faq/import",
    summary="导入 FAQ 文件（全部成功或全部不导入）",
    response_model=Envelope[FAQImported],
    dependencies=WRITE,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "properties": {"file": {"type": "string", "format": "binary"}},
                        "required": ["file"],
                    }
                }
            },
        }
    },
)
async def import_faq(
    request: Request,
    kb: TheKB,
    access: Caller,
    settings: Settings = Depends(get_settings_dep),
    uploads: UploadService = Depends(get_uploads),
) -> dict[str, Any]:
    limit = settings.ingest.max_upload_bytes
    size = declared_upload_size(request.headers, limit, " FAQ 文件（字段名 file）")
    slot = await run_in_threadpool(uploads.open_upload, kb.name, size)
    try:
        await receive_files(request.headers, request.stream(), slot, limit=limit)
        _, put = await run_in_threadpool(lambda: uploads.import_faq(slot, actor=access.caller))
    finally:
        slot.close()
    return ok({"added": put.added, "updated": put.updated, "unchanged": put.unchanged, "files": slot.names})


@router.get("/kbs/{kb}/faq/export", summary="导出 FAQ", response_class=StreamingResponse, dependencies=READ)
async def export_faq(
    kb: TheKB, fmt: Annotated[Literal["csv", "jsonl"], Query(alias="format")] = "csv"
) -> StreamingResponse:
    entries = await run_in_threadpool(faq_entries, kb)
    filename = quote(f"{kb.name}-faq.{fmt}")
    return StreamingResponse(
        owner_faq.export_entries(entries, fmt),
        media_type=owner_faq.MEDIA_TYPES[fmt],
        headers={"Content-Disposition": f"attachment; filename*=UTF-8''{filename}"},
    )


@router.put(
    "/kbs/{kb}/faq/settings", summary="FAQ 阈值", response_model=Envelope[FAQSettingsIO], dependencies=WRITE
)
async def faq_settings(kb: TheKB, body: FAQSettingsIO) -> dict[str, Any]:
    value = await run_in_threadpool(owner_faq.set_threshold, kb, body.threshold)
    return ok({"threshold": value})
