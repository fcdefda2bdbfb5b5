"""``POST /ask`` — seed 000's property search, inside the ``{code, message, data}`` envelope.

Request ``{"question": str, "max_results": int = 3, "kb": str = "listings"}``. Response::

    {"code": 0, "message": "success",
     "data": {"answer": "…", "retrieved_properties": [{"id", "title", "location", "price",
                "match_score", "match_percentage", "match_reasons", "district", "bankuai", "xiaoqu",
                "area", "rooms", "layout", "floor", "build_year", "building_type", "decoration",
                "elevator", "orientation", "unit_price", "city", "relaxed"}],
              "llm_used": false, "requirements": {…}, "relaxed": [], "cached": false,
              "params": {…}, "timings_ms": {…}}}

Errors: empty question / wrong types / ``max_results`` outside 1..``max_results_limit`` → 422,
a body over ``api.max_body_bytes`` → 413, unknown KB → 404, a KB of another app → 422.
Retrieval runs through the engine's pipeline, so the runtime rerank settings apply here too.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field, StrictInt
from starlette.concurrency import run_in_threadpool

from zhiwen.appkit import AppContext
from zhiwen.appkit.deps import KBName, Question, get_app_context
from zhiwen.appkit.envelope import Envelope, ok
from zhiwen.errors import InvalidParameter

from .settings import get_listings_settings

router = APIRouter(tags=["listings"])


class AskIn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    question: Question = Field(description="找房问题，例如：浦东800万以内的两房，要有电梯")
    max_results: Annotated[StrictInt, Field(ge=1, le=10_000)] = Field(3, description="最多返回几套房源")
    kb: KBName = Field("listings", description="房源知识库名称")


class Property(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    title: str
    location: str
    price: float | None = Field(None, description="总价（万）")
    match_score: float
    match_percentage: int
    match_reasons: list[str]
    city: str | None = None
    district: str | None = None
    bankuai: str | None = None
    xiaoqu: str | None = None
    area: float | None = None
    rooms: int | None = None
    layout: str | None = None
    floor: str | None = None
    build_year: int | None = None
    building_type: str | None = None
    decoration: str | None = None
    elevator: bool | None = None
    orientation: str | None = None
    unit_price: float | None = Field(None, description="单价（元/㎡）")
    relaxed: bool = False


class AskData(BaseModel):
    model_config = ConfigDict(extra="allow")

    answer: str
    retrieved_properties: list[Property]
    llm_used: bool
    requirements: dict[str, Any]
    relaxed: list[str]
    cached: bool
    kb: str
    params: dict[str, Any] = Field(default_factory=dict)
    timings_ms: dict[str, float] = Field(default_factory=dict)


@router.post("/ask", summary="房源问答（seed 000）", response_model=Envelope[AskData])
async def ask(body: AskIn, ctx: AppContext = Depends(get_app_context)) -> dict[str, Any]:
    from .app import app

    limit = get_listings_settings().max_results_limit
    if body.max_results > limit:
        raise InvalidParameter(
            f"max_results must be in 1..{limit}", message=f"max_results 必须在 1 到 {limit} 之间"
        )
    kb = await run_in_threadpool(ctx.open_kb, body.kb)
    owner = kb.config.app
    if owner not in (None, app.name):
        raise InvalidParameter(
            f"knowledge base {body.kb!r} belongs to app {owner!r}",
            message=f"知识库「{body.kb}」不是房源库（属于 {owner}）",
        )
    result = await run_in_threadpool(app.result, body.question, body.max_results, ctx, body.kb)
    return ok(result)
