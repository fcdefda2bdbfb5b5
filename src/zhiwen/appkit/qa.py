"""Grounded QA (:mod:`zhiwen.answer.qa`) in the app contract's shapes.

Generic QA answers any KB that no app claims; apps built on the engine's QA use the
same conversions, so every entry point returns one answer shape and one event stream.
``data["answerable"]`` says whether the sources passed the KB's relevance floor (absent when the
app's plan does not judge); the stream's ``done`` event carries the same flag.

Example::

    >>> answer = generic_ask(AskRequest(question="怎么创建知识库？", kb="demo"), ctx)
    >>> answer.data["route"], answer.citations[0].title, answer.llm_used, answer.data["answerable"]
    ('general', '快速开始', False, True)
"""

from __future__ import annotations

from collections.abc import Iterator

from zhiwen.answer.qa import Answer, QAEvent, Source, answer_question, stream_question
from zhiwen.appkit.app import AppAnswer, AppContext, AskRequest, Citation
from zhiwen.appkit.events import AppEvent
from zhiwen.errors import InvalidParameter

DEFAULT_TOP_K = 5


def source_citation(source: Source, kb: str | None) -> Citation:
    return Citation(
        kb=kb,
        id=source.doc_id,
        title=source.title,
        text=source.text,
        score=round(source.score, 6),
        metadata=source.metadata,
    )


def app_answer(answer: Answer, kb: str | None) -> AppAnswer:
    data: dict[str, object] = {"route": answer.route}
    if answer.answerable is not None:  # judged by the relevance floor (generic QA, plan_generic)
        data["answerable"] = answer.answerable
    return AppAnswer(
        answer=answer.answer,
        citations=[source_citation(s, kb) for s in answer.sources],
        llm_used=answer.llm_used,
        extractive_reason=answer.extractive_reason,
        params=answer.params,
        data=data,
    )


def app_events(events: Iterator[QAEvent], kb: str | None) -> Iterator[AppEvent]:
    """QA stream tuples → :class:`AppEvent`: ``sources`` (citations), ``delta``, ``done``."""
    for name, data in events:
        if name == "sources":
            sources = [
                Source(d["doc_id"], d["title"], d["score"], d["metadata"], d.get("text", "")) for d in data
            ]
            yield AppEvent("sources", {"sources": [source_citation(s, kb).model_dump() for s in sources]})
        elif name == "delta":
            yield AppEvent("delta", {"text": data})
        else:
            yield AppEvent(name, dict(data))


def _kb_name(request: AskRequest) -> str:
    if not request.kb:
        raise InvalidParameter("kb is required for generic QA", message="请指定知识库（kb）")
    return request.kb


def generic_ask(request: AskRequest, ctx: AppContext) -> AppAnswer:
    """Any KB: retrieve through the pipeline, then one LLM call or an extractive answer."""
    kb = ctx.open_kb(_kb_name(request))
    answer = answer_question(
        kb, request.question, top_k=request.top_k or DEFAULT_TOP_K, llm=ctx.llm, pipeline=ctx.pipeline
    )
    return app_answer(answer, kb.name)


def generic_stream(request: AskRequest, ctx: AppContext) -> Iterator[AppEvent]:
    kb = ctx.open_kb(_kb_name(request))
    events = stream_question(
        kb, request.question, top_k=request.top_k or DEFAULT_TOP_K, llm=ctx.llm, pipeline=ctx.pipeline
    )
    return app_events(events, kb.name)
