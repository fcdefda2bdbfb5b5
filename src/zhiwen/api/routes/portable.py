"""``GET /api/v1/kbs/{kb}/export`` (the KB as one bundle file) and ``POST /api/v1/kbs/import``.

Neither holds a bundle in memory: the export is written to a spool file in the home
(``.spool/``) and streamed from there, then removed; the import's multipart upload is streamed
into a spool file as it arrives (:mod:`zhiwen.api.bundle_upload`, bounded by
``ingest.max_upload_bytes``), checked and imported all or nothing
(:mod:`zhiwen.portable.importer`), then removed. Export needs write access to the KB (a bundle
is all of it, curation included); import needs write access to the KB it creates or replaces.
Imports land in the home's store.
"""

from __future__ import annotations

import contextlib
import re
import secrets
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import FileResponse
from pydantic import BaseModel, Field
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool

from zhiwen.api.bundle_upload import receive_bundle
from zhiwen.config import Settings
from zhiwen.httpkit.auth import Access
from zhiwen.httpkit.deps import get_access, get_kb, get_settings_dep, require_kb_write
from zhiwen.httpkit.envelope import Envelope, ok
from zhiwen.kb import KnowledgeBase
from zhiwen.portable import import_bundle
from zhiwen.portable.export import SPOOL_DIR, export_to_spool

router = APIRouter(prefix="/api/v1", tags=["knowledge bases"])

BUNDLE_TYPE = "application/x-tar"
IMPORT_PATH = "/api/v1/kbs/import"
_IMPORT = re.compile(rf"^{re.escape(IMPORT_PATH)}/?$")
_FORM = {
    "required": True,
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "required": ["file"],
                "properties": {
                    "file": {"type": "string", "format": "binary", "description": "导出知识库得到的文件"},
                    "name": {"type": "string", "description": "导入后的名称（默认：导出时的名称）"},
                    "replace": {"type": "boolean", "description": "同名知识库已存在时整体替换"},
                },
            }
        }
    },
}


def is_import_path(path: str) -> bool:
    """True for the import route: it streams and limits its own body (see the module docstring)."""
    return bool(_IMPORT.match(path))


@router.get(
    "/kbs/{kb}/export",
    summary="导出知识库（一个文件）",
    response_class=FileResponse,
    responses={200: {"content": {BUNDLE_TYPE: {"schema": {"type": "string", "format": "binary"}}}}},
    dependencies=[Depends(require_kb_write)],
)
async def export_kb(
    kb: KnowledgeBase = Depends(get_kb), settings: Settings = Depends(get_settings_dep)
) -> FileResponse:
    """文档、段落、向量、人工整理、设置与调参，打包为一个可导入任何存储后端的文件。"""
    path = await run_in_threadpool(export_to_spool, kb, settings.home / SPOOL_DIR)
    return FileResponse(
        path,
        media_type=BUNDLE_TYPE,
        filename=f"{kb.name}.zwkb",
        background=BackgroundTask(path.unlink, missing_ok=True),
    )


class Imported(BaseModel):
    kb: str
    store: str = Field(description="存储后端")
    documents: int
    chunks: int
    vectors_reused: int = Field(description="直接复用的向量数")
    embedded: int = Field(description="重新向量化的段落数")
    replaced: bool = Field(description="是否替换了同名知识库")
    seconds: float


@router.post(
    "/kbs/import",
    summary="导入知识库",
    response_model=Envelope[Imported],
    openapi_extra={"requestBody": _FORM},
)
async def import_kb(
    request: Request, access: Access = Depends(get_access), settings: Settings = Depends(get_settings_dep)
) -> dict[str, Any]:
    """先校验完整性、校验和与格式版本；全部写入成功后知识库才出现。需要该知识库的写权限。"""
    folder = settings.home / SPOOL_DIR
    folder.mkdir(parents=True, exist_ok=True)
    spool = folder / f"import.{secrets.token_hex(6)}.zwkb"
    try:
        form = await receive_bundle(
            request.headers, request.stream(), spool, limit=settings.ingest.max_upload_bytes
        )
        report = await run_in_threadpool(
            import_bundle,
            spool,
            settings=settings,
            name=form.fields.get("name") or None,
            replace=form.fields.get("replace", "").strip().lower() in ("true", "1", "yes", "on"),
            authorize=lambda kb: access.require_kb(kb, write=True),
        )
    finally:
        with contextlib.suppress(OSError):
            spool.unlink()
    return ok(report.as_dict())
