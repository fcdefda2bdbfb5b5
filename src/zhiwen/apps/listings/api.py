"""``POST /ask`` — the property search, inside the ``{code, message, data}`` envelope.

Request ``{"question": str, "max_results": int = 3, "kb": str = "listings"}``, optionally with
the conversation so far, ``history`` (OpenAI messages, oldest first), or a ``session_id`` whose
turns the server keeps (bound to the caller's API key). A follow-up (「预算放宽到700万」,
「换成普陀」, 「不限楼层了」) is searched with the constraints of every turn merged
(:mod:`.followup`). Response::

    {"code": 0, "message": "success",
     "data": {"answer": "…", "retrieved_properties": [{"id", "title", "location", "price",
                "match_score", "match_percentage", "match_reasons", "district", "bankuai", "xiaoqu",
                "area", "rooms", "layout", "floor", "build_year", "building_type", "decoration",
                "elevator", "orientation", "unit_price", "city", "relaxed"}],
              "llm_used": false, "requirements": {…}, "relaxed": [], "cached": false,
              "params": {…}, "timings_ms": {…},
              "standalone_question": "上海普陀区 700万以内 2室 南北通透",   # null: as asked
              "merged_requirements": {…}, "understood": "上海；位置: 普陀区；…",
              "merged_constraints": {"city": "上海", "district": "普陀", "max_price_wan": 700,
                                     "rooms": 2, "orientation": "南北通透"},
              "conversation": {"turns": 3, "follow_up": true, "fresh_start": false,
                               "added": […], "replaced": ["price_range"], "removed": […]},
              "total_matches": 57, "session_id": null}}

The search's fields (:class:`~.result.ListingsResult`); ``requirements`` is what was searched
(the merged constraints in a conversation, the question's own otherwise), ``total_matches`` how
many listings pass every hard constraint (the answer says how many match and how many are shown).

Errors: empty question / wrong types / ``max_results`` outside 1..``max_results_limit`` → 422,
a body over ``api.max_body_bytes`` → 413, unknown KB → 404, a KB of another app → 422.
Retrieval runs through the engine's pipeline, so the runtime rerank settings apply here too.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field, StrictInt
from starlette.concurrency import run_in_threadpool

from zhiwen.answer.model import AnswerFields
from zhiwen.appkit import AppContext, AskRequest
from zhiwen.appkit.app import BaseApp
from zhiwen.conversation import service as conversation
from zhiwen.errors import InvalidParameter
from zhiwen.httpkit.deps import app_dependency, get_app_context, get_caller
from zhiwen.httpkit.envelope import Envelope, ok
from zhiwen.httpkit.fields import MAX_HISTORY_MESSAGES, ChatTurn, KBName, Question

from .result import ListingsResult
from .settings import get_listings_settings

APP = "listings"  # the app these routes belong to (its name in the registry)
router = APIRouter(tags=["listings"])


class AskIn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    question: Question = Field(description="找房问题，例如：浦东800万以内的两房，要有电梯")
    max_results: Annotated[StrictInt, Field(ge=1, le=10_000)] = Field(3, description="最多返回几套房源")
    kb: KBName = Field("listings", description="房源知识库名称")
    history: list[ChatTurn] = Field(
        default_factory=list,
        max_length=MAX_HISTORY_MESSAGES,
        description="此前的对话（OpenAI messages 格式，按时间先后）；追问的条件与之前的合并",
    )
    session_id: str | None = Field(
        None, max_length=128, description="会话 ID：不带 history 时，服务端保存并续接这个会话的对话"
    )


class AskData(ListingsResult, AnswerFields):
    """``POST /ask``'s ``data``: the search's result, the conversation's session id, and which
    answer it is (``answer_id`` …)."""

    session_id: str | None = Field(None, description="会话 ID")


@router.post("/ask", summary="房源问答", response_model=Envelope[AskData])
async def ask(
    body: AskIn,
    ctx: AppContext = Depends(get_app_context),
    caller: str = Depends(get_caller),
    app: BaseApp = Depends(app_dependency(APP)),
) -> dict[str, Any]:
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
    request = AskRequest(
        question=body.question,
        kb=body.kb,
        history=[turn.model_dump() for turn in body.history],
        session_id=body.session_id,
        caller=caller,
        options={"max_results": body.max_results},
    )
    answer = await run_in_threadpool(conversation.ask, app, request, ctx)
    return ok({**answer.data, "session_id": answer.session_id, **answer.identity_fields()})
