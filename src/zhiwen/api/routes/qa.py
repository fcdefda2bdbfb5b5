"""``POST /api/v1/qa``: grounded answers for any KB, by the KB's app or by generic QA.

Request ``{"kb": "demo", "question": "怎么创建知识库", "top_k": 3, "stream": false}``.
The registry's answerer for the KB's ``app`` (``kb.json``) answers: that app, or generic QA for a
KB no app claims (:meth:`zhiwen.appkit.registry.AppRegistry.answerer`). Both retrieve through the
one pipeline, so runtime settings (rerank, MMR, thresholds) apply, and ``params`` reports what ran.

Response data::

    {"answer": "…[1]…", "route": "detail", "llm_used": false, "extractive_reason": "no_llm",
     "sources": [{"kb", "id", "title", "text", "score", "rerank_score", "metadata"}], "params": {…},
     "answerable": true}

``answer`` is markdown (a short cited lead, then 相关段落; lists, tables and code kept).
``answerable: false``: nothing in the KB passed its relevance floor — the answer says so and
lists the closest passages as 可能相关.

With ``"stream": true`` the answer comes as server-sent events: ``sources``, ``delta``
(repeated, ``{"text"}``), ``done`` (``{llm_used, route, extractive_reason, params, answerable}``), or an
in-band ``error`` (``{code, message}``). LLM failures never become HTTP errors: the answer is
extractive and says so.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field, StrictBool, StrictInt
from sse_starlette import EventSourceResponse
from starlette.concurrency import run_in_threadpool

from zhiwen.appkit import Answer, AppContext, AskRequest, Citation
from zhiwen.appkit.deps import KBName, Question, get_app_context, get_apps
from zhiwen.appkit.envelope import Envelope, ok
from zhiwen.appkit.events import SSE_RESPONSE, sse_stream
from zhiwen.appkit.registry import AppRegistry

log = logging.getLogger(__name__)
router = APIRouter(tags=["qa"])


class QARequest(BaseModel):
    kb: KBName = Field(description="知识库名称")
    question: Question = Field(description="问题")
    top_k: StrictInt | None = Field(None, ge=1, le=50, description="来源数量（推荐类问题为条目数量）")
    stream: StrictBool = Field(False, description="以 SSE 流式返回答案")

    model_config = {"json_schema_extra": {"examples": [{"kb": "demo", "question": "怎么创建知识库？"}]}}


class QAData(BaseModel):
    answer: str
    route: str | None = None
    sources: list[Citation]
    llm_used: bool
    extractive_reason: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    answerable: bool | None = Field(
        None, description="来源是否达到知识库的相关度下限；false 表示知识库中没有相关内容（null：应用未判断）"
    )


def qa_data(answer: Answer) -> QAData:
    return QAData(
        answer=answer.answer,
        route=answer.route,
        sources=answer.citations,
        llm_used=answer.llm_used,
        extractive_reason=answer.extractive_reason,
        params=answer.params,
        answerable=answer.answerable,
    )


@router.post(
    "/api/v1/qa",
    summary="知识库问答（按知识库所属应用回答，或通用问答）",
    response_model=Envelope[QAData],
    responses=SSE_RESPONSE,
)
async def qa(
    body: QARequest,
    ctx: AppContext = Depends(get_app_context),
    apps: AppRegistry = Depends(get_apps),
) -> Any:
    kb = await run_in_threadpool(ctx.open_kb, body.kb)
    answerer = apps.answerer(kb.config.app)
    request = AskRequest(question=body.question, kb=body.kb, top_k=body.top_k)
    if body.stream:
        events = await run_in_threadpool(answerer.stream, request, ctx)
        return EventSourceResponse(sse_stream(events, log=log), ping=15)
    answer = await run_in_threadpool(answerer.ask, request, ctx)
    return ok(qa_data(answer))
