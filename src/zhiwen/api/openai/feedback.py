"""``POST /v1/feedback``: the front door's extension for 👍/👎 on an answer.

A chat client rates the answer whose ``zhiwen.answer_id`` it got (in the completion, or the last
chunk of a stream) with the body of ``POST /api/v1/feedback``
(:mod:`zhiwen.api.routes.feedback`: the same checks and access rule); the reply is the rating
as kept, and errors are OpenAI-shaped (404 ``not_found`` for an unknown answer, 403
``permission_denied``, 400 for a bad body).

Example::

    httpx.post(f"{base}/v1/feedback", json={"answer_id": reply.model_extra["zhiwen"]["answer_id"],
               "rating": "down", "reason": "内容过时"}, headers={"Authorization": "Bearer sk-…"})
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends

from zhiwen.api.openai.errors import OPENAI_ERROR_RESPONSES, guarded
from zhiwen.api.routes.feedback import FeedbackIn, FeedbackOut, rate_answer
from zhiwen.httpkit.auth import Access
from zhiwen.httpkit.deps import get_access, get_question_log
from zhiwen.questionlog import QuestionLog

router = APIRouter()


class RatedAnswer(FeedbackOut):
    """The rating as kept, with an OpenAI-style object name."""

    object: Literal["zhiwen.feedback"] = "zhiwen.feedback"


@router.post(
    "/feedback",
    summary="扩展：评价一条回答（有用 / 没用，可附原因）",
    response_model=RatedAnswer,
    responses=OPENAI_ERROR_RESPONSES,
)
async def feedback(
    body: FeedbackIn,
    access: Access = Depends(get_access),
    question_log: QuestionLog = Depends(get_question_log),
) -> RatedAnswer:
    rated = await guarded(rate_answer, question_log, body, access)
    return RatedAnswer(**FeedbackOut.of(rated).model_dump())
