"""``POST /api/v1/qa``: grounded answers for any KB, by the KB's app or by generic QA.

Request ``{"kb": "demo", "question": "怎么创建知识库", "top_k": 3, "stream": false}``, optionally
with the conversation so far (``history``: OpenAI messages) or a ``session_id`` whose turns the
server keeps: a follow-up (「它支持哪些格式？」) is answered as its standalone form, returned as
``standalone_question``.
The registry says who answers (:meth:`zhiwen.appkit.registry.AppRegistry.ready`, as ``/v1`` and
the CLI): the app the KB's ``kb.json`` names, or generic QA for a KB no app claims; an app's own
name is that app over its KBs; an app whose required KBs are not all built is refused (404 / 3004
naming its setup). The turn runs through the conversation service
(:mod:`zhiwen.conversation.service`): a ``session_id`` is answered in its session and returned.
Both retrieve through the one pipeline, so runtime settings (rerank, MMR, thresholds) apply, and
``params`` reports what ran.

Response data::

    {"answer": "…[1]…", "route": "detail", "llm_used": false, "extractive_reason": "no_llm",
     "sources": [{"kb", "id", "title", "text", "score", "rerank_score", "metadata"}], "params": {…},
     "answerable": true, "standalone_question": "…", "session_id": "s1",
     "answer_id": "0k3j9x2m4n5p6q7r", "answer_type": "extractive", "faq": null, "suggestions": []}

``answer_id`` names the answer (rate it: ``POST /api/v1/feedback``; the question log keeps it).
An FAQ entry that answers the question is given word for word: ``answer_type: "faq"``,
``faq: {question, score, entry_id}``, the entry as the one source. A question close to an entry
but not close enough is answered as usual, with the entries' questions in ``suggestions``
(「您是不是想问：」).

``answer`` is markdown (a short cited lead, then 相关段落; lists, tables and code kept).
``answerable: false``: nothing in the KB passed its relevance floor — the answer says so and
lists the closest passages as 可能相关.

With ``"stream": true`` the answer comes as server-sent events: ``sources``, ``delta``
(repeated, ``{"text"}``), ``done`` (``{answer_id, answer_type, faq, suggestions, llm_used, route,
extractive_reason, params, answerable, standalone_question, session_id}``), or an in-band
``error`` (``{code, message}``). LLM failures never become HTTP errors: the answer is extractive
and says so.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field, StrictBool, StrictInt
from sse_starlette import EventSourceResponse
from starlette.concurrency import run_in_threadpool

from zhiwen.answer.model import AnswerFields
from zhiwen.appkit import Answer, AppContext, AskRequest, Citation
from zhiwen.appkit.registry import AppRegistry
from zhiwen.conversation import service as conversation
from zhiwen.httpkit.auth import Access
from zhiwen.httpkit.deps import KBRegistry, get_access, get_app_context, get_apps, get_caller, get_kb_registry
from zhiwen.httpkit.envelope import Envelope, ok
from zhiwen.httpkit.fields import MAX_HISTORY_MESSAGES, ChatTurn, KBName, Question
from zhiwen.httpkit.sse import SSE_RESPONSE, sse_stream
from zhiwen.tables.schema import TableData, answer_table

log = logging.getLogger(__name__)
router = APIRouter(tags=["qa"])


class QARequest(BaseModel):
    kb: KBName = Field(description="知识库名称")
    question: Question = Field(description="问题")
    top_k: StrictInt | None = Field(None, ge=1, le=50, description="来源数量（推荐类问题为条目数量）")
    stream: StrictBool = Field(False, description="以 SSE 流式返回答案")
    history: list[ChatTurn] = Field(
        default_factory=list,
        max_length=MAX_HISTORY_MESSAGES,
        description="此前的对话（OpenAI messages 格式，按时间先后）；追问据此理解",
    )
    session_id: str | None = Field(
        None, max_length=128, description="会话 ID：不带 history 时，服务端保存并续接这个会话的对话"
    )

    model_config = {"json_schema_extra": {"examples": [{"kb": "demo", "question": "怎么创建知识库？"}]}}


class QAData(AnswerFields):
    answer: str
    route: str | None = None
    sources: list[Citation]
    llm_used: bool
    extractive_reason: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    answerable: bool | None = Field(
        None, description="来源是否达到知识库的相关度下限；false 表示知识库中没有相关内容（null：应用未判断）"
    )
    standalone_question: str | None = Field(
        None, description="结合对话理解后的完整问题（理解为：…），检索用的就是它"
    )
    session_id: str | None = Field(None, description="会话 ID")
    table: TableData | None = Field(
        None, description="表格答案所依据的表格（单元格所在行或 SQL 结果）；其他答案为 null"
    )


def qa_data(answer: Answer) -> QAData:
    return QAData(
        **answer.identity_fields(),
        answer=answer.answer,
        route=answer.route,
        sources=answer.citations,
        llm_used=answer.llm_used,
        extractive_reason=answer.extractive_reason,
        params=answer.params,
        answerable=answer.answerable,
        standalone_question=answer.standalone_question,
        session_id=answer.session_id,
        table=answer_table(answer.data),
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
    caller: str = Depends(get_caller),
    access: Access = Depends(get_access),
    kbs: KBRegistry = Depends(get_kb_registry),
) -> Any:
    access.require_kb(body.kb)  # 403 first; an app answering opens only KBs the key may read
    who = await run_in_threadpool(apps.ready, body.kb, kbs)
    answerer = who.answerer
    request = AskRequest(
        question=body.question,
        kb=who.kb,
        top_k=body.top_k,
        history=[turn.model_dump() for turn in body.history],
        session_id=body.session_id,
        caller=caller,
    )
    if body.stream:
        events = await run_in_threadpool(conversation.stream, answerer, request, ctx)
        return EventSourceResponse(sse_stream(events, log=log), ping=15)
    answer = await run_in_threadpool(conversation.ask, answerer, request, ctx)
    return ok(qa_data(answer))
