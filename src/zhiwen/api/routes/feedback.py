"""``POST /api/v1/feedback``: 👍/👎 on one answer, by the ``answer_id`` every answer carries.

Request ``{"answer_id": "…", "rating": "up"|"down", "reason"?: "答非所问", "comment"?: "…"}``;
the reason (only with ``down``) is one of 「答非所问」「内容过时」「没有引用」「其他」 or its code
(``off_topic``, ``outdated``, ``no_citation``, ``other``). A caller rates once per answer: a
later rating replaces its earlier one. Response data ``{answer_id, rating, reason, reason_label,
comment}``.

Who may rate: a key that may read the answer's KB (whoever may ask there may rate there): else
403 / 3012. An id the log does not hold (never answered, purged, or the log is off) → 404 / 3004;
a bad rating, reason or comment → 422 / 3003. The rating is kept for the KB's owner (the
question log, :mod:`zhiwen.questionlog`): it never changes a ranking.

The OpenAI front door has the same route as an extension (``POST /v1/feedback``,
:mod:`zhiwen.api.openai.feedback`) over :func:`rate_answer`.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from zhiwen.errors import Forbidden
from zhiwen.httpkit.auth import Access
from zhiwen.httpkit.deps import get_access, get_question_log
from zhiwen.httpkit.envelope import Envelope, ok
from zhiwen.questionlog import Feedback, QuestionLog, may_rate

router = APIRouter(tags=["feedback"])


class FeedbackIn(BaseModel):
    """A rating of one answer."""

    answer_id: str = Field(min_length=1, max_length=64, description="回答编号（回答中的 answer_id）")
    rating: Literal["up", "down"] = Field(description="up：有用；down：没用")
    reason: str | None = Field(
        None, max_length=32, description="没用的原因：答非所问、内容过时、没有引用、其他（或其代码）"
    )
    comment: str | None = Field(None, max_length=4000, description="补充说明（最多 1000 字）")

    model_config = {
        "json_schema_extra": {
            "examples": [{"answer_id": "0k3j9x2m4n5p6q7r", "rating": "down", "reason": "内容过时"}]
        }
    }


class FeedbackOut(BaseModel):
    """The rating as kept."""

    answer_id: str
    rating: Literal["up", "down"]
    reason: str | None = Field(None, description="原因代码：off_topic、outdated、no_citation、other")
    reason_label: str | None = Field(None, description="原因：答非所问、内容过时、没有引用、其他")
    comment: str | None = Field(None, description="补充说明")

    @classmethod
    def of(cls, feedback: Feedback) -> FeedbackOut:
        return cls(
            answer_id=feedback.answer_id,
            rating=feedback.rating,
            reason=feedback.reason,
            reason_label=feedback.reason_label,
            comment=feedback.comment,
        )


def rate_answer(question_log: QuestionLog, body: FeedbackIn, access: Access) -> Feedback:
    """Keep ``access``'s rating of ``body.answer_id``: 404 for an unknown answer, 403 when the
    caller may not read its KB, 422 for a bad reason or comment (the log's checks)."""
    record = question_log.find(body.answer_id)
    if not may_rate(access, record.kb):
        raise Forbidden(
            f"key may not rate answers of {record.kb!r}",
            message="无权评价这条回答：它来自此 API Key 无权访问的知识库",
        )
    return question_log.rate(
        body.answer_id, body.rating, reason=body.reason, comment=body.comment, caller=access.caller
    )


@router.post(
    "/api/v1/feedback", summary="评价一条回答（有用 / 没用，可附原因）", response_model=Envelope[FeedbackOut]
)
async def feedback(
    body: FeedbackIn,
    access: Access = Depends(get_access),
    question_log: QuestionLog = Depends(get_question_log),
) -> dict[str, object]:
    rated = await run_in_threadpool(rate_answer, question_log, body, access)
    return ok(FeedbackOut.of(rated))
