"""``GET/PUT /admin/settings``: the runtime-editable knobs, behind ``Authorization: Bearer <token>``.

The token is ``settings.api.admin_token`` (env ``ZHIWEN_API__ADMIN_TOKEN``); when it is not
configured the admin API is disabled and every call gets 401 / 3006. An API key, whatever its
scope, gets 403 / 3012: only the admin token changes settings
(:func:`zhiwen.httpkit.deps.require_admin`).

Example::

    curl -X PUT localhost:8000/admin/settings -H 'Authorization: Bearer s3cret' \\
         -H 'Content-Type: application/json' -d '{"rerank": {"enabled": true}}'
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Depends
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, Field, ValidationError
from starlette.concurrency import run_in_threadpool

from zhiwen.config.runtime import DynamicSettings, DynamicSettingsService
from zhiwen.httpkit.deps import get_dynamic_settings_dep, require_admin
from zhiwen.httpkit.envelope import Envelope, ok

router = APIRouter(prefix="/admin", tags=["admin"])


class SettingsData(BaseModel):
    settings: DynamicSettings = Field(description="生效中的运行时设置")
    overrides: dict[str, dict[str, Any]] = Field(description="管理员的覆盖项")
    defaults: dict[str, dict[str, Any]] = Field(description="静态配置给出的默认值")
    path: str = Field(description="覆盖项保存的位置")


def _payload(service: DynamicSettingsService) -> dict[str, Any]:
    return {
        "settings": service.get().model_dump(mode="json"),
        "overrides": service.overrides(),
        "defaults": service.defaults(),
        "path": str(service.path),
    }


@router.get(
    "/settings",
    summary="查看运行时设置",
    dependencies=[Depends(require_admin)],
    response_model=Envelope[SettingsData],
)
def get_settings_route(service: DynamicSettingsService = Depends(get_dynamic_settings_dep)) -> dict[str, Any]:
    return ok(_payload(service))


@router.put(
    "/settings",
    summary="修改运行时设置（部分更新，null 恢复默认）",
    dependencies=[Depends(require_admin)],
    response_model=Envelope[SettingsData],
)
async def put_settings(
    patch: dict[str, dict[str, Any]] = Body(
        ..., examples=[{"rerank": {"enabled": True, "score_threshold": 0.3}, "retrieval": {"rrf_k": 30}}]
    ),
    service: DynamicSettingsService = Depends(get_dynamic_settings_dep),
) -> dict[str, Any]:
    try:
        await run_in_threadpool(service.update, patch)
    except ValidationError as exc:
        errors = [{**e, "loc": ("body", *e["loc"])} for e in exc.errors(include_url=False)]
        raise RequestValidationError(errors) from None
    return ok(_payload(service), message="设置已更新，下一次请求生效")


@router.delete(
    "/settings",
    summary="清除全部覆盖（恢复静态配置）",
    dependencies=[Depends(require_admin)],
    response_model=Envelope[SettingsData],
)
async def reset_settings(
    service: DynamicSettingsService = Depends(get_dynamic_settings_dep),
) -> dict[str, Any]:
    await run_in_threadpool(service.reset)
    return ok(_payload(service), message="已恢复默认设置")
