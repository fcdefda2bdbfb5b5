"""``POST /api/v1/policy/ask`` — the policy QA inside the ``{code, message, data}`` envelope.

Request ``{"question": str, "top_n": 20, "as_of": "2026-01-15", "stream": false}``, optionally with
the conversation so far (``history``) or a ``session_id`` (kept by the server, returned as sent).
Response::

    {"code": 0, "message": "success",
     "data": {"answer": "【免签政策表】\\n塞尔维亚（Serbia）：免签停留 30 天…[1]…",
              "intent": "airline_visa_free", "rewritten_question": "…（国家：塞尔维亚 Serbia；…）",
              "strategy": "dual", "fallback_reason": null,
              "sources": [{"kb": "policy_visa", "id": "country/RS#0", "title": "…", "text": "…",
                           "score": 0.91, "rerank_score": null, "metadata": {…}}],
              "llm_used": false, "extractive_reason": "no_llm", "as_of": "2026-01-15",
              "timings_ms": {"classify": 1.2, "rewrite": 0.1, "retrieve": 40.5, "answer": 0.4, …},
              "session_id": null}}

With ``"stream": true`` the answer comes as server-sent events: ``meta`` (intent, rewritten
question, strategy, fallback_reason), ``sources``, ``delta`` (``{"text": …}``, repeated), ``done``
(everything else) — or ``error`` in-band if something fails after the first byte.

Errors: empty question → 422 / 3003; ``top_n`` outside 1..``max_top_n`` → 422 / 3003; wrong
types (``top_n: "x"``, a bad ``as_of`` date) → 422 / 3002; missing question → 422 / 3001. LLM,
classifier, rewrite and KB failures are never errors: they fall back (``fallback_reason``); but
before ``zhiwen policy setup`` (none of its KBs built) → 404 / 3004 naming that command.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt
from sse_starlette import EventSourceResponse
from starlette.concurrency import run_in_threadpool

from zhiwen.answer.model import Answer, AnswerFields
from zhiwen.appkit import AppContext, AskRequest, Citation
from zhiwen.appkit.app import BaseApp
from zhiwen.conversation import service as conversation
from zhiwen.httpkit.deps import app_set_up, get_app_context, get_caller
from zhiwen.httpkit.envelope import Envelope, ok
from zhiwen.httpkit.fields import MAX_HISTORY_MESSAGES, ChatTurn, Question
from zhiwen.httpkit.sse import SSE_RESPONSE, sse_stream
from zhiwen.validation import Day

from .service import APP, check_top_n
from .settings import policy_settings

log = logging.getLogger(__name__)

router = APIRouter(tags=["policy"])


class PolicyAskIn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    question: Question = Field(description="问题，例如：关于塞尔维亚的机组人员入出境，下列说法正确的有")
    top_n: Annotated[StrictInt, Field(ge=1, le=1000)] | None = Field(
        None, description="返回来源数（默认 20：专业库 10 + 通用库 10）"
    )
    as_of: Day | None = Field(None, description="按哪天判断政策是否到期（默认今天），YYYY-MM-DD")
    stream: StrictBool = Field(False, description="以 SSE 流式返回答案")
    history: list[ChatTurn] = Field(
        default_factory=list,
        max_length=MAX_HISTORY_MESSAGES,
        description="此前的对话（OpenAI messages 格式）；追问（「那西班牙呢？」「需要什么材料？」）据此理解",
    )
    session_id: str | None = Field(
        None, max_length=128, description="会话 ID：不带 history 时，服务端保存并续接这个会话的对话"
    )


class PolicySource(Citation):
    """The one citation, with the group of KBs it came from."""

    group: str = Field("specialist", description="来源分组：specialist（专业库）| general（通用库）")


class PolicyCountry(BaseModel):
    iso2: str
    zh: str
    en: str


class PolicyAskData(AnswerFields):
    answer: str
    standalone_question: str | None = Field(None, description="结合对话理解后的完整问题（检索用的就是它）")
    intent: str = Field("other", description="visa_free | airline_visa_free | both | other")
    rewritten_question: str | None = Field(None, description="改写后的问题（通用问题不改写）")
    strategy: str | None = Field(None, description="dual | single（FAQ 条目逐字回答时为 null）")
    fallback_reason: str | None = Field(None, description="降级为单问题检索的原因")
    sources: list[PolicySource]
    llm_used: bool
    extractive_reason: str | None = None
    as_of: str | None = Field(None, description="按哪天判断政策是否到期（FAQ 条目逐字回答时为 null）")
    countries: list[PolicyCountry] = Field(default_factory=list)
    classification: dict[str, Any] = Field(default_factory=dict)
    kb_errors: dict[str, str] = Field(default_factory=dict)
    timings_ms: dict[str, float] = Field(default_factory=dict)
    session_id: str | None = Field(None, description="会话 ID（请求带了 session_id 时原样返回）")


@router.post(
    "/api/v1/policy/ask",
    summary="政策问答（免签 / 机组 / 法规）",
    response_model=Envelope[PolicyAskData],
    responses=SSE_RESPONSE,
)
async def policy_ask(
    body: PolicyAskIn,
    ctx: AppContext = Depends(get_app_context),
    caller: str = Depends(get_caller),
    app: BaseApp = Depends(app_set_up(APP)),
) -> Any:
    settings = policy_settings(ctx.settings)
    top_n = check_top_n(body.top_n, settings)  # 4xx before any work or stream starts
    request = AskRequest(
        question=body.question,
        history=[turn.model_dump() for turn in body.history],
        session_id=body.session_id,
        caller=caller,
        options={"top_n": top_n, "as_of": body.as_of},
    )
    if body.stream:
        events = await run_in_threadpool(conversation.stream, app, request, ctx)
        return EventSourceResponse(sse_stream(events, log=log), ping=15)
    answer = await run_in_threadpool(conversation.ask, app, request, ctx)
    return ok(policy_data(answer))


def policy_data(answer: Answer) -> dict[str, Any]:
    """The route's data: the app's own fields (``Answer.data``) over the answer's text and
    sources — all an answer the app did not write has (an FAQ entry, word for word) — and which
    answer it is."""
    generic = {
        "answer": answer.answer,
        "llm_used": answer.llm_used,
        "extractive_reason": answer.extractive_reason,
        "standalone_question": answer.standalone_question,
        "sources": [PolicySource(**c.model_dump()) for c in answer.citations],
    }
    return {**generic, **answer.data, "session_id": answer.session_id, **answer.identity_fields()}
