"""What people ask a KB, for its owners (#37): the question log, the most asked, the numbers,
an export, and a logged question turned into an FAQ entry.

| method | path | what |
|--------|------|------|
| GET | ``/api/v1/kbs/{kb}/questions?status=&since=&until=&app=&limit=&offset=`` | the list, newest first |
| GET | ``/api/v1/kbs/{kb}/questions/top?days=&app=`` | the most asked, same questions grouped |
| GET | ``/api/v1/kbs/{kb}/stats?days=&app=`` | per day and overall numbers |
| GET | ``/api/v1/kbs/{kb}/questions/export?format=csv|jsonl`` | the log, streamed |
| POST | ``/api/v1/kbs/{kb}/questions/{answer_id}/faq`` | ``{answer, question?}`` → the FAQ entry |

Reading needs write access to the KB or the admin token
(:func:`zhiwen.questionlog.require_log_reader`): a read-only key, or a key of another KB, is 403
before anything is read. The log is the app's (:func:`zhiwen.httpkit.deps.get_question_log`).
The FAQ entry answers the next identical or paraphrased question word for word
(:func:`zhiwen.owner.faq.entry_from_log`).
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal
from urllib.parse import quote

from fastapi import APIRouter, Depends, Query
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from zhiwen.api.routes.faq import FAQEntryOut
from zhiwen.httpkit.auth import Access
from zhiwen.httpkit.deps import get_access, get_kb, get_question_log
from zhiwen.httpkit.envelope import Envelope, ok
from zhiwen.kb import KnowledgeBase
from zhiwen.owner.faq import entry_from_log, entry_out
from zhiwen.owner.questions import MAX_DAYS, kb_vectors, log_window, question_out
from zhiwen.questionlog import MEDIA_TYPES, AnswerNotFound, QuestionLog, require_log_reader

TheKB = Annotated[KnowledgeBase, Depends(get_kb)]
TheLog = Annotated[QuestionLog, Depends(get_question_log)]
Days = Annotated[int, Query(ge=1, le=MAX_DAYS, description="最近几天（含今天）")]
App = Annotated[str | None, Query(max_length=64, description="只看这个应用的提问")]


def log_reader(kb: str, access: Access = Depends(get_access)) -> Access:
    """Route dependency: the caller may read ``kb``'s log (write access or admin), else 403."""
    require_log_reader(access, kb)
    return access


router = APIRouter(prefix="/api/v1", tags=["question log"], dependencies=[Depends(log_reader)])
Reader = Annotated[Access, Depends(log_reader)]


class QuestionOut(BaseModel):
    answer_id: str
    kb: str
    app: str
    question: str
    standalone: str | None = None
    answer_type: str
    answerable: bool | None = None
    unanswered: bool
    unanswered_reason: str | None = None
    unanswered_label: str | None = Field(None, description="未答原因（中文）")
    fallback: str | None = None
    faq_id: str | None = None
    faq_score: float | None = None
    sources: list[dict[str, Any]] = Field(default_factory=list)
    latency_ms: float = 0.0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    caller: str = ""
    session_id: str | None = None
    at: float
    up: int = 0
    down: int = 0
    feedback: list[dict[str, Any]] = Field(default_factory=list, description="👍/👎、原因、补充说明")


class QuestionList(BaseModel):
    items: list[QuestionOut]
    total: int


class AskedVariant(BaseModel):
    question: str
    count: int


class AskedGroupOut(BaseModel):
    question: str
    count: int
    unanswered: int
    last_at: float
    variants: list[AskedVariant]


class TopQuestions(BaseModel):
    items: list[AskedGroupOut]


class DayStats(BaseModel):
    day: str | None = None
    questions: int
    answered: int
    unanswered: int
    answered_rate: float | None = None
    faq_hits: int
    faq_hit_rate: float | None = None
    up: int
    down: int
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    latency_p50_ms: float | None = None
    latency_p95_ms: float | None = None


class StatsOut(BaseModel):
    since: str | None = None
    until: str | None = None
    overall: DayStats
    days: list[DayStats]


class ToFAQ(BaseModel):
    answer: str = Field(description="更正后的答案（原样返回给以后相同或相近的提问）")
    question: str | None = Field(None, description="FAQ 的问题（默认：用户原来的提问）")


@router.get("/kbs/{kb}/questions", summary="提问记录", response_model=Envelope[QuestionList])
async def list_questions(
    kb: TheKB,
    log: TheLog,
    status: Literal["all", "unanswered", "disliked"] = "all",
    since: Annotated[date | None, Query(description="开始日期 YYYY-MM-DD（含）")] = None,
    until: Annotated[date | None, Query(description="结束日期 YYYY-MM-DD（含）")] = None,
    app: App = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> dict[str, Any]:
    window = log_window(log, since=since, until=until, app=app)
    await run_in_threadpool(log.flush)  # a question answered a moment ago is listed
    page = await run_in_threadpool(log.questions, kb.name, window, status, limit=limit, offset=offset)
    return ok({"items": [question_out(q) for q in page.items], "total": page.total})


@router.get("/kbs/{kb}/questions/top", summary="最常问的问题", response_model=Envelope[TopQuestions])
async def top_questions(
    kb: TheKB, log: TheLog, days: Days = 7, app: App = None, limit: Annotated[int, Query(ge=1, le=100)] = 20
) -> dict[str, Any]:
    window = log_window(log, days=days, app=app)
    groups = await run_in_threadpool(
        lambda: log.most_asked(kb.name, window, limit=limit, vectors=kb_vectors(kb))
    )
    return ok({"items": [g.to_json() for g in groups]})


@router.get("/kbs/{kb}/stats", summary="使用统计", response_model=Envelope[StatsOut])
async def kb_stats(kb: TheKB, log: TheLog, days: Days = 30, app: App = None) -> dict[str, Any]:
    window = log_window(log, days=days, app=app)
    await run_in_threadpool(log.flush)
    stats = await run_in_threadpool(log.stats, kb.name, window)
    bounds = {"since": _iso(window.since), "until": _iso(window.until)}
    return ok({**bounds, **stats.to_json()})


def _iso(day: date | None) -> str | None:
    return day.isoformat() if day else None


@router.get("/kbs/{kb}/questions/export", summary="导出提问记录", response_class=StreamingResponse)
async def export_questions(
    kb: TheKB,
    log: TheLog,
    fmt: Annotated[Literal["csv", "jsonl"], Query(alias="format")] = "csv",
    since: date | None = None,
    until: date | None = None,
    app: App = None,
) -> StreamingResponse:
    window = log_window(log, since=since, until=until, app=app)
    await run_in_threadpool(log.flush)  # what was answered a moment ago is in the file
    filename = quote(f"{kb.name}-questions.{fmt}")
    return StreamingResponse(
        log.export(kb.name, window, fmt),
        media_type=MEDIA_TYPES[fmt],
        headers={"Content-Disposition": f"attachment; filename*=UTF-8''{filename}"},
    )


@router.post(
    "/kbs/{kb}/questions/{answer_id}/faq",
    summary="设为 FAQ（更正后的答案）",
    response_model=Envelope[FAQEntryOut],
)
async def question_to_faq(
    kb: TheKB, answer_id: str, body: ToFAQ, log: TheLog, access: Reader
) -> dict[str, Any]:
    def make() -> dict[str, Any]:
        record = log.find(answer_id, access)
        if record.kb != kb.name:  # an answer of another KB is not told apart from none
            raise AnswerNotFound.of(answer_id)
        return entry_out(entry_from_log(kb, record, body.answer, question=body.question, actor=access.caller))

    return ok(await run_in_threadpool(make))
