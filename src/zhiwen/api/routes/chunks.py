"""A KB's chunks in its owners' hands, and the change log with undo (#36).

| method | path | what |
|--------|------|------|
| GET | ``/api/v1/kbs/{kb}/documents/{doc_id}/chunks`` | a document's chunks in order |
| GET | ``/api/v1/kbs/{kb}/chunks?q=…`` | search chunks (words of their text, questions, keywords) |
| GET / PATCH / DELETE | ``/api/v1/kbs/{kb}/chunks/{chunk_id}`` | one chunk: read, change, delete |
| POST | ``/api/v1/kbs/{kb}/chunks`` | add a chunk by hand |
| GET | ``/api/v1/kbs/{kb}/changes`` | the change log, newest first |
| POST | ``/api/v1/kbs/{kb}/changes/undo`` | undo the latest (or one) change |

Every route needs write access to the KB (owners only: a chunk list shows disabled text). The
work is :mod:`zhiwen.curation`'s (``kb.curation``); each change is recorded with the caller's key
fingerprint (:attr:`~zhiwen.httpkit.auth.Access.caller`) and is searchable when the call returns.
A chunk id holds ``#`` (``guide.md#3``): clients percent-encode it (``guide.md%233``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from zhiwen.curation import NewChunk
from zhiwen.httpkit.auth import Access
from zhiwen.httpkit.deps import get_kb, require_kb_write
from zhiwen.httpkit.envelope import Envelope, ok
from zhiwen.kb import KnowledgeBase
from zhiwen.owner.views import change_out, chunk_out, chunks_out

# write access first: a key of another KB gets 403 before the KB is looked up
router = APIRouter(prefix="/api/v1", tags=["curation"], dependencies=[Depends(require_kb_write)])
Writer = Annotated[Access, Depends(require_kb_write)]
TheKB = Annotated[KnowledgeBase, Depends(get_kb)]
#: a document's chunks for the owner's manual additions
MANUAL_DOC = "manual"


class ChunkOut(BaseModel):
    id: str
    doc_id: str
    title: str = ""
    text: str
    enabled: bool
    questions: list[str]
    keywords: list[str]
    hits: int = Field(0, description="被检索命中的次数")
    state: Literal["original", "edited", "added", "source_changed"]
    review: bool = Field(False, description="原文已更新：导入的原文在修改之后变了，请复核")
    origin: str = Field("parsed", description="parsed（导入）| manual（手工添加）| faq（FAQ 条目）")
    position: float = 0.0
    source_text: str | None = Field(None, description="修改过的段落：导入时的原文")
    updated_at: float | None = None
    updated_by: str | None = Field(None, description="最后修改者的 API Key 指纹")


class ChunkList(BaseModel):
    items: list[ChunkOut]
    total: int


class ChunkPatch(BaseModel):
    text: str | None = None
    enabled: bool | None = None
    questions: list[str] | None = None
    keywords: list[str] | None = None


class ChunkNew(BaseModel):
    doc_id: str | None = Field(None, description=f"所属文档（默认「{MANUAL_DOC}」）")
    title: str = ""
    text: str
    questions: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)


class ChunkDeleted(BaseModel):
    id: str
    deleted: bool = True


class ChangeOut(BaseModel):
    id: int
    at: float
    actor: str
    action: str
    label: str = Field(description="操作的中文名")
    target: str
    undone: bool
    before: Any = None
    after: Any = None


class ChangeList(BaseModel):
    items: list[ChangeOut]


class UndoIn(BaseModel):
    change_id: int | None = Field(None, description="要撤销的修改编号；不填则撤销最近一次")


@router.get(
    "/kbs/{kb}/documents/{doc_id:path}/chunks",
    summary="文档的段落（按顺序）",
    response_model=Envelope[ChunkList],
)
async def document_chunks(kb: TheKB, doc_id: str) -> dict[str, Any]:
    def listing() -> list[dict[str, Any]]:
        return chunks_out(kb, kb.curation.list_chunks(doc_id))

    items = await run_in_threadpool(listing)
    return ok({"items": items, "total": len(items)})


@router.get("/kbs/{kb}/chunks", summary="查找段落", response_model=Envelope[ChunkList])
async def search_chunks(
    kb: TheKB,
    q: Annotated[str, Query(min_length=1, max_length=200, description="要查找的文字")],
    limit: Annotated[int, Query(ge=1, le=500)] = 20,
    offset: Annotated[int, Query(ge=0, le=10_000)] = 0,
    doc_id: str | None = None,
) -> dict[str, Any]:
    def found() -> list[dict[str, Any]]:
        views = kb.curation.search_chunks(q, limit=min(offset + limit, 500), doc_id=doc_id)
        return chunks_out(kb, views[offset : offset + limit])

    items = await run_in_threadpool(found)
    return ok({"items": items, "total": len(items)})


@router.get("/kbs/{kb}/chunks/{chunk_id:path}", summary="段落详情", response_model=Envelope[ChunkOut])
async def get_chunk(kb: TheKB, chunk_id: str) -> dict[str, Any]:
    return ok(await run_in_threadpool(lambda: chunk_out(kb, kb.curation.get_chunk(chunk_id))))


@router.patch(
    "/kbs/{kb}/chunks/{chunk_id:path}",
    summary="修改段落（文字、启用、问题、关键词）",
    response_model=Envelope[ChunkOut],
)
async def patch_chunk(kb: TheKB, chunk_id: str, body: ChunkPatch, access: Writer) -> dict[str, Any]:
    def change() -> dict[str, Any]:
        view = kb.curation.update(
            chunk_id,
            actor=access.caller,
            text=body.text,
            enabled=body.enabled,
            questions=body.questions,
            keywords=body.keywords,
        )
        return chunk_out(kb, view)

    return ok(await run_in_threadpool(change))


@router.post("/kbs/{kb}/chunks", summary="手工添加段落", response_model=Envelope[ChunkOut])
async def add_chunk(kb: TheKB, body: ChunkNew, access: Writer) -> dict[str, Any]:
    new = NewChunk(
        doc_id=(body.doc_id or "").strip() or MANUAL_DOC,
        title=body.title,
        text=body.text,
        questions=body.questions,
        keywords=body.keywords,
    )
    return ok(await run_in_threadpool(lambda: chunk_out(kb, kb.curation.add(new, actor=access.caller))))


@router.delete("/kbs/{kb}/chunks/{chunk_id:path}", summary="删除段落", response_model=Envelope[ChunkDeleted])
async def delete_chunk(kb: TheKB, chunk_id: str, access: Writer) -> dict[str, Any]:
    await run_in_threadpool(kb.curation.delete, chunk_id, actor=access.caller)
    return ok({"id": chunk_id, "deleted": True})


@router.get("/kbs/{kb}/changes", summary="修改记录", response_model=Envelope[ChangeList])
async def list_changes(
    kb: TheKB,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    chunk_id: str | None = Query(None, description="只看这个段落的修改"),
) -> dict[str, Any]:
    changes = await run_in_threadpool(kb.curation.changes, limit=limit, chunk_id=chunk_id)
    return ok({"items": [change_out(c) for c in changes]})


@router.post("/kbs/{kb}/changes/undo", summary="撤销修改", response_model=Envelope[ChangeOut])
async def undo_change(kb: TheKB, access: Writer, body: UndoIn | None = None) -> dict[str, Any]:
    change_id = body.change_id if body is not None else None
    done = await run_in_threadpool(kb.curation.undo, change_id, actor=access.caller)
    return ok(change_out(done))
