"""``POST /ask`` — seed 000's property search endpoint.

Request ``{"question": str, "max_results": int = 3, "kb": str = "listings"}``.

Response shape (a deliberate choice): on **success** the seed's bare object, so seed clients read
``answer`` / ``retrieved_properties`` at the top level, plus ``code: 0`` / ``message`` so clients
of the engine's ``{code, message, data}`` envelope still see a success code::

    {"code": 0, "message": "success",
     "answer": "…", "retrieved_properties": [{"id", "title", "location", "price", "match_score",
       "match_percentage", "match_reasons", "district", "xiaoqu", "area", "rooms", "layout",
       "floor", "build_year", "decoration", "elevator", "orientation", "unit_price", "city", …}],
     "llm_used": false, "requirements": {…}, "relaxed": [], "cached": false, "timings_ms": {…}}

On **error** the engine's envelope ``{code, message, data}`` with a 4xx status (seed 003 codes):
empty question / wrong types / ``max_results`` outside 1..``max_results_limit`` → 422, a body
over ``api.max_body_bytes`` → 413, unknown KB → 404.

A repeated question is answered from the result cache on the event loop (no thread hop, no
retrieval, no LLM call).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field, StrictInt
from starlette.concurrency import run_in_threadpool

from zhiwen.appkit.deps import KBName, KBRegistry, Question, get_kb_registry, get_settings_dep
from zhiwen.apps.listings.service import FAST_PATH, get_service
from zhiwen.config import Settings
from zhiwen.errors import InvalidParameter

router = APIRouter(tags=["listings"])


class AskIn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    question: Question = Field(description="找房问题，例如：浦东800万以内的两房，要有电梯")
    max_results: Annotated[StrictInt, Field(ge=1, le=10_000)] = Field(3, description="最多返回几套房源")
    kb: KBName = Field("listings", description="房源知识库名称")


def _kb_stamp(settings: Settings, name: str) -> float | None:
    try:
        return (Path(settings.kb_root) / name / "kb.json").stat().st_mtime
    except OSError:
        return None


@router.post("/ask", summary="房源问答（seed 000）")
async def ask(
    body: AskIn,
    registry: KBRegistry = Depends(get_kb_registry),
    settings: Settings = Depends(get_settings_dep),
) -> dict[str, Any]:
    limit = settings.listings.max_results_limit
    if body.max_results > limit:
        raise InvalidParameter(
            f"max_results must be in 1..{limit}", message=f"max_results 必须在 1 到 {limit} 之间"
        )
    key = (str(settings.home), body.kb)
    fast = FAST_PATH.get(key)
    stamp = _kb_stamp(settings, body.kb)
    if fast is not None and stamp is not None and fast[0] == stamp and fast[1].settings is settings:
        result = fast[1].cached(body.question, body.max_results)
        if result is not None:
            return {"code": 0, "message": "success", **result}
    kb = await registry.aget(body.kb)
    app = getattr(getattr(kb, "config", None), "app", None)
    if app not in (None, "listings"):
        raise InvalidParameter(
            f"knowledge base {body.kb!r} belongs to app {app!r}",
            message=f"知识库「{body.kb}」不是房源库（属于 {app}）",
        )
    service = get_service(kb, settings)
    if stamp is not None:
        FAST_PATH[key] = (stamp, service)
    result = service.cached(body.question, body.max_results)
    if result is None:
        result = await run_in_threadpool(service.ask, body.question, body.max_results)
    return {"code": 0, "message": "success", **result}
