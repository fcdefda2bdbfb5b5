"""``GET /api/v1/kbs/{kb}/sync`` (sources, interval, running, the last result) and ``POST`` (start
a sync in the background; write access). The work is :mod:`zhiwen.sync.service`'s."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from zhiwen.config import Settings
from zhiwen.errors import InvalidParameter
from zhiwen.httpkit.deps import get_kb, get_settings_dep, require_kb_read, require_kb_write
from zhiwen.httpkit.envelope import Envelope, ok
from zhiwen.kb import KnowledgeBase
from zhiwen.sync.service import status, sync_service

router = APIRouter(prefix="/api/v1", tags=["sync"])


class SyncRun(BaseModel):
    started_at: float = Field(description="开始时间（Unix 秒）")
    seconds: float
    dry_run: bool
    added: int
    changed: int
    removed: int
    unchanged: int
    parsed: int = Field(description="重新解析的文档数")
    embedded: int = Field(description="送入嵌入模型的片段数")
    chunks: int
    errors: list[str]


class SyncStatus(BaseModel):
    kb: str
    sources: list[str] = Field(description="同步来源：文件夹、网址、站点地图网址")
    sync_interval: float | None = Field(None, description="自动同步间隔（秒），null 表示不自动同步")
    running: bool
    last: SyncRun | None = Field(None, description="最近一次同步的结果")
    started: bool | None = Field(None, description="POST：是否启动了新的同步（已在同步时为 false）")


@router.get(
    "/kbs/{kb}/sync",
    summary="同步状态",
    response_model=Envelope[SyncStatus],
    dependencies=[Depends(require_kb_read)],
)
async def sync_status(
    kb: KnowledgeBase = Depends(get_kb), settings: Settings = Depends(get_settings_dep)
) -> dict[str, Any]:
    return ok(await run_in_threadpool(status, settings, kb))


@router.post(
    "/kbs/{kb}/sync",
    summary="开始同步",
    response_model=Envelope[SyncStatus],
    dependencies=[Depends(require_kb_write)],
)
async def start_sync(
    kb: KnowledgeBase = Depends(get_kb), settings: Settings = Depends(get_settings_dep)
) -> dict[str, Any]:
    """Start a sync of the KB's sources in the background (``started: false`` when one runs)."""
    if not kb.config.sources:
        raise InvalidParameter(
            f"knowledge base {kb.name!r} has no sources", message=f"知识库「{kb.name}」没有同步来源"
        )
    started = sync_service(settings).start(kb.name)
    return ok({**await run_in_threadpool(status, settings, kb), "started": started})
