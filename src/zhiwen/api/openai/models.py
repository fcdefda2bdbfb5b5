"""``GET /v1/models`` and ``GET /v1/models/{model}``: one model per app and per knowledge base.

A scoped key lists only the models over KBs it may read (``GET /v1/models/{model}`` of another
→ 403 ``permission_denied``).

Example::

    >>> [m.id for m in client.models.list()][-1]                # the apps by name, then the KBs
    'demo'
    >>> client.models.retrieve("demo").model_extra["metadata"]["kind"]
    'kb'
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from zhiwen.api.openai.catalog import find_model, list_models
from zhiwen.api.openai.chat import get_apps
from zhiwen.api.openai.errors import OPENAI_ERROR_RESPONSES, guarded
from zhiwen.api.openai.schemas import ModelCard, ModelList
from zhiwen.appkit.registry import AppRegistry
from zhiwen.httpkit.auth import Access
from zhiwen.httpkit.deps import KBRegistry, get_access, get_kb_registry

router = APIRouter()


@router.get(
    "/models",
    summary="模型列表（OpenAI 兼容）：每个应用、每个知识库各一个",
    response_model=ModelList,
    responses=OPENAI_ERROR_RESPONSES,
)
async def models(
    apps: AppRegistry = Depends(get_apps),
    kbs: KBRegistry = Depends(get_kb_registry),
    access: Access = Depends(get_access),
) -> Any:
    return ModelList(data=await guarded(list_models, apps, kbs, access))


@router.get(
    "/models/{model}",
    summary="模型详情（OpenAI 兼容）",
    response_model=ModelCard,
    responses=OPENAI_ERROR_RESPONSES,
)
async def model(
    model: str,
    apps: AppRegistry = Depends(get_apps),
    kbs: KBRegistry = Depends(get_kb_registry),
    access: Access = Depends(get_access),
) -> Any:
    return await guarded(find_model, model, apps, kbs, access)
