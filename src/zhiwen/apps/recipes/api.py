"""``POST /api/v1/qa``: grounded answers for any KB (recipe QA for ``app=recipes`` KBs).

Request ``{"kb": "recipes", "question": "宫保鸡丁怎么做", "top_k": 3, "stream": false}``.

Response (envelope)::

    {"code": 0, "message": "success",
     "data": {"answer": "…[1]…", "route": "detail", "llm_used": true, "extractive_reason": null,
              "sources": [{"doc_id": "meat_dish/宫保鸡丁/宫保鸡丁", "title": "宫保鸡丁的做法",
                           "score": 0.93, "metadata": {"name": "宫保鸡丁", "category": "meat_dish",
                                                       "difficulty": 4, …}}]}}

With ``"stream": true`` the answer comes as server-sent events, each ``data`` JSON:
``sources`` (the list above), ``delta`` (``{"text": "…"}``, repeated), ``done``
(``{"llm_used", "route", "extractive_reason"}``) — or ``error`` (an envelope ``{code, message,
data}``) if retrieval fails mid-way. Without an LLM, or when it fails, the extractive answer is
streamed as a few deltas and ``done.llm_used`` is false. LLM failures never become HTTP errors.

KBs whose ``app`` is ``recipes`` get :func:`zhiwen.apps.recipes.service.answer_recipe` (routing,
filters, dish names); any other KB the generic :mod:`zhiwen.generate.qa`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field
from sse_starlette import EventSourceResponse
from starlette.concurrency import iterate_in_threadpool, run_in_threadpool

from zhiwen.appkit.deps import KBName, KBRegistry, Question, get_kb_registry, get_settings_dep
from zhiwen.appkit.envelope import error_body, ok
from zhiwen.config import Settings
from zhiwen.errors import ZhiwenError
from zhiwen.generate.base import ChatModel
from zhiwen.generate.llm import get_llm
from zhiwen.generate.qa import Answer, QAEvent, answer_question, stream_question

from .service import answer_recipe, stream_recipe

if TYPE_CHECKING:
    from zhiwen.kb import KnowledgeBase

log = logging.getLogger(__name__)

router = APIRouter(tags=["qa"])


class QARequest(BaseModel):
    kb: KBName = Field(description="知识库名称")
    question: Question = Field(description="问题")
    top_k: int | None = Field(None, ge=1, le=50, description="来源数量（列表类问题为菜品数量）")
    stream: bool = Field(False, description="以 SSE 流式返回答案")


def is_recipe_kb(kb: KnowledgeBase) -> bool:
    config = getattr(kb, "config", None)
    return getattr(config, "app", None) == "recipes"


def answer_for_kb(kb: KnowledgeBase, question: str, *, top_k: int | None, llm: ChatModel | None) -> Answer:
    """Recipe QA for recipe KBs, generic QA otherwise (also used by ``zhiwen ask``)."""
    if is_recipe_kb(kb):
        return answer_recipe(kb, question, top_k=top_k, llm=llm)
    return answer_question(kb, question, top_k=top_k or 5, llm=llm)


def stream_for_kb(
    kb: KnowledgeBase, question: str, *, top_k: int | None, llm: ChatModel | None
) -> Iterator[QAEvent]:
    if is_recipe_kb(kb):
        return stream_recipe(kb, question, top_k=top_k, llm=llm)
    return stream_question(kb, question, top_k=top_k or 5, llm=llm)


def _sse(event: str, data: Any) -> dict[str, str]:
    payload = {"text": data} if event == "delta" else data
    return {"event": event, "data": json.dumps(payload, ensure_ascii=False)}


async def _events(kb: KnowledgeBase, body: QARequest, llm: ChatModel | None) -> AsyncIterator[dict[str, str]]:
    try:
        events = await run_in_threadpool(stream_for_kb, kb, body.question, top_k=body.top_k, llm=llm)
        async for event, data in iterate_in_threadpool(events):
            yield _sse(event, data)
    except ZhiwenError as exc:
        log.warning("qa stream failed: %s", exc)
        yield _sse("error", error_body(exc.code, exc.message, {"detail": exc.detail} if exc.detail else None))
    except Exception as exc:  # the stream has started: report in-band, never a bare 500
        log.exception("qa stream failed unexpectedly")
        yield _sse("error", error_body(1099, "服务暂时不可用，请稍后重试", {"detail": type(exc).__name__}))


@router.post("/api/v1/qa", summary="知识库问答（菜谱问答 / 通用问答）")
async def qa(
    body: QARequest,
    kbs: KBRegistry = Depends(get_kb_registry),
    settings: Settings = Depends(get_settings_dep),
) -> Any:
    kb = await kbs.aget(body.kb)
    llm = get_llm(settings)
    if body.stream:
        return EventSourceResponse(_events(kb, body, llm), ping=15)
    answer = await run_in_threadpool(answer_for_kb, kb, body.question, top_k=body.top_k, llm=llm)
    return ok(answer.to_dict())
