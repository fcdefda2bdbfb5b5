"""``GET /api/v1/kbs`` (every KB with its app and info), ``GET`` and ``DELETE /api/v1/kbs/{kb}``."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from zhiwen.api.background import get_uploads
from zhiwen.errors import ZhiwenError
from zhiwen.httpkit.auth import Access
from zhiwen.httpkit.deps import (
    KBRegistry,
    get_access,
    get_kb,
    get_kb_registry,
    get_question_log,
    require_kb_read,
    require_kb_write,
)
from zhiwen.httpkit.envelope import Envelope, ok
from zhiwen.httpkit.fields import KBName
from zhiwen.kb import KnowledgeBase
from zhiwen.questionlog import QuestionLog
from zhiwen.uploads import UploadService

router = APIRouter(prefix="/api/v1", tags=["knowledge bases"])
log = logging.getLogger(__name__)


def _config(registry: KBRegistry, name: str) -> dict[str, Any]:
    path = Path(registry.settings.kb_root) / name / "kb.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _describe(registry: KBRegistry, name: str) -> dict[str, Any]:
    cfg = _config(registry, name)
    out: dict[str, Any] = {"name": name, "app": cfg.get("app"), "embedder": cfg.get("embedder")}
    try:
        kb = registry.get(name)
        info = kb.info()
        out["info"] = info
        out["app"] = kb.config.app or out["app"]
    except ZhiwenError as exc:
        out["error"] = exc.message
    except Exception as exc:  # one broken KB must not hide the others
        log.warning("cannot open KB %s: %s", name, exc)
        out["error"] = f"无法打开知识库：{type(exc).__name__}"
    return out


class KBInfo(BaseModel):
    name: str
    app: str | None = None
    embedder: str | None = None
    info: dict[str, Any] | None = Field(None, description="文档数、片段数、版本、存储统计等")
    error: str | None = Field(None, description="无法打开时的原因")


class KBList(BaseModel):
    kbs: list[KBInfo]
    count: int


@router.get("/kbs", summary="列出知识库", response_model=Envelope[KBList])
async def list_kbs(
    kbs: KBRegistry = Depends(get_kb_registry), access: Access = Depends(get_access)
) -> dict[str, Any]:
    def collect() -> list[dict[str, Any]]:
        return [_describe(kbs, name) for name in access.readable(kbs.names())]

    items = await run_in_threadpool(collect)
    return ok({"kbs": items, "count": len(items)})


@router.get(
    "/kbs/{kb}",
    summary="知识库详情",
    response_model=Envelope[KBInfo],
    dependencies=[Depends(require_kb_read)],
)
async def kb_info(kb: KnowledgeBase = Depends(get_kb)) -> dict[str, Any]:
    info = await run_in_threadpool(kb.info)
    return ok(
        {
            "name": kb.name,
            "app": kb.config.app,
            "embedder": kb.config.embedder,
            "info": info,
        }
    )


class KBDeleted(BaseModel):
    kb: str
    deleted: bool = True


@router.delete(
    "/kbs/{kb}",
    summary="删除知识库",
    response_model=Envelope[KBDeleted],
    dependencies=[Depends(require_kb_write)],
)
async def delete_kb(
    kb: KBName,
    uploads: UploadService = Depends(get_uploads),
    question_log: QuestionLog = Depends(get_question_log),
) -> dict[str, Any]:
    """Delete a whole KB (its directory and, on PostgreSQL or Qdrant, its data there) and its
    question log (questions and ratings).

    An unknown KB is 404 / 3004; a KB an import is writing is refused (409 / 3008) and kept, and
    so is a KB with an unfinished upload job (queued or running) or an upload still arriving:
    the job would otherwise write its files into the deleted KB's folder again.
    """
    await run_in_threadpool(uploads.delete_kb, kb)  # 409 first, then 404 for an unknown KB
    await run_in_threadpool(question_log.delete_kb, kb)
    return ok({"kb": kb, "deleted": True})
