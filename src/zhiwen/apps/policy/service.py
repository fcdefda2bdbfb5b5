"""The policy QA pipeline: classify → rewrite → dual (or single) retrieval → answer.

1. **intent** (:mod:`.intent`): the LLM within ``intent_classifier_timeout`` when configured,
   else rules + gazetteer + embeddings; ``enable_intent_classifier=false`` skips it.
2. **rewrite** (:mod:`.rewrite`) for ``visa_free`` / ``airline_visa_free`` / ``both`` only.
3. **retrieval** (:mod:`.retrieval`): ``dual`` — rewritten question → specialist KBs, original
   → general KB, reranked independently, ``top_n / 2`` each; ``single`` — the original question,
   for ``other`` questions and as the fallback.
4. **answer** (:mod:`.answer`): one LLM call or an extractive answer, always with citations and
   date-aware notes.

Any failure before the answer — classifier timeout/error/garbage, rewrite failure, a missing or
failing KB — falls back to single retrieval: logged, returned as ``fallback_reason`` and counted
in ``zhiwen_policy_fallbacks_total{reason}``. Nothing here raises for an LLM failure.

Example::

    >>> result = ask_policy("中国公民去泰国需要签证吗？", build_context())
    >>> p = result.prepared
    >>> p.intent, p.strategy, p.sources[0].title
    ('visa_free', 'dual', '泰国（Thailand）免签政策')
    >>> result.data()["rewritten_question"]
    '中国公民去泰国需要签证吗？（国家：泰国 Thailand；关键词：免签 visa-free、…）'
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from pydantic_core import PydanticCustomError

from zhiwen.answer.events import AppEvent
from zhiwen.answer.model import Answer, Citation
from zhiwen.answer.qa import AnswerPlan, execute, execute_stream
from zhiwen.appkit.app import AppContext
from zhiwen.conversation.model import Standalone
from zhiwen.errors import InvalidParameter, ZhiwenError, kb_not_found
from zhiwen.understand.classify import Classification
from zhiwen.validation import parse_day, question_text

from . import answer as compose
from .countries import Country, default_gazetteer
from .followup import conversation_intent, follow_up
from .kbconfig import SPECIALIST_INTENTS, PolicyKBConfig, load_kb_config
from .metrics import POLICY_FALLBACKS, POLICY_QUESTIONS
from .retrieval import RetrievalOutcome, dual_retrieve, single_retrieve
from .rewrite import RewriteError, rewrite_question
from .settings import PolicySettings, policy_settings

if TYPE_CHECKING:
    from zhiwen.kb import KnowledgeBase

log = logging.getLogger("zhiwen.apps.policy")

APP = "policy"
VISA_ROLE = "visa"  # the KB role holding the visa-free table (documents country/<ISO2>)


@dataclass(slots=True)
class Prepared:
    """Everything up to the answer: intent, rewrite, retrieval, sources, notes."""

    question: str
    as_of: date
    top_n: int
    classification: Classification
    intent: str
    rewritten: str | None
    strategy: str
    fallback_reason: str | None
    retrieval: RetrievalOutcome
    rows: list[compose.TableRow]
    sources: list[Citation]
    notes: list[str]
    hints: list[str]
    countries: list[Country]
    kb_errors: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    general_kbs: frozenset[str] = frozenset()  # a source from one of these is "general", else "specialist"

    def meta(self) -> dict[str, Any]:
        return {
            "standalone_question": self.question,
            "intent": self.intent,
            "rewritten_question": self.rewritten,
            "strategy": self.strategy,
            "fallback_reason": self.fallback_reason,
        }


@dataclass(slots=True)
class PolicyResult:
    prepared: Prepared
    answer: str
    llm_used: bool
    extractive_reason: str | None
    has_offline_note: bool = False  # the plan's offline answer says that no LLM wrote it

    def data(self) -> dict[str, Any]:
        """The ``data`` of ``POST /api/v1/policy/ask``."""
        p = self.prepared
        return {
            "answer": self.answer,
            **p.meta(),
            "sources": [citation_dict(c, p.general_kbs) for c in p.sources],
            "llm_used": self.llm_used,
            "extractive_reason": self.extractive_reason,
            "as_of": p.as_of.isoformat(),
            "countries": [{"iso2": c.iso2, "zh": c.zh, "en": c.en} for c in p.countries],
            "classification": p.classification.to_dict(),
            "kb_errors": p.kb_errors,
            "timings_ms": {k: round(v * 1000, 2) for k, v in p.timings.items()},
        }

    @property
    def params(self) -> dict[str, Any]:
        return {"top_n": self.prepared.top_n, **self.prepared.retrieval.params}

    def to_answer(self) -> Answer:
        """The one answer type; the route is the question's intent."""
        return Answer(
            answer=self.answer,
            citations=list(self.prepared.sources),
            llm_used=self.llm_used,
            extractive_reason=self.extractive_reason,
            has_offline_note=self.has_offline_note,
            params=self.params,
            route=self.prepared.intent,
            standalone_question=self.prepared.question,
            data=self.data(),
        )


def citation_dict(c: Citation, general_kbs: frozenset[str] = frozenset()) -> dict[str, Any]:
    """A citation's wire form on the policy routes: the one citation plus its KB group."""
    return {"group": "general" if c.kb in general_kbs else "specialist", **c.model_dump()}


# -- inputs ------------------------------------------------------------------------------------
def parse_as_of(value: Any) -> date:
    if value is None or value == "":
        return date.today()
    try:  # 2026-01-15, 2026/1/15, 20260115, 2026年1月15日; never a number read as a timestamp
        return parse_day(value)
    except PydanticCustomError:
        raise InvalidParameter(
            message="as_of 日期格式无效，应为 YYYY-MM-DD，如 2026-01-15", data={"as_of": str(value)[:40]}
        ) from None


def check_top_n(value: Any, settings: PolicySettings) -> int:
    if value is None:
        return settings.rerank_top_n
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidParameter(f"top_n must be an integer, got {value!r}", message="top_n 必须是整数")
    if not 1 <= value <= settings.max_top_n:
        raise InvalidParameter(
            f"top_n must be in 1..{settings.max_top_n}",
            message=f"top_n 必须在 1 到 {settings.max_top_n} 之间",
        )
    return value


# -- stages ------------------------------------------------------------------------------------
def open_kbs(ctx: AppContext, names: list[str]) -> tuple[list[KnowledgeBase], dict[str, str]]:
    kbs, errors = [], {}
    for name in names:
        try:
            kbs.append(ctx.open_kb(name))
        except ZhiwenError as exc:
            errors[name] = exc.message
            log.warning("[智能路由] 知识库 %s 不可用: %s", name, exc.message)
    return kbs, errors


def require_set_up(ctx: AppContext, opened: Sequence[KnowledgeBase], errors: Mapping[str, str]) -> None:
    """No KB could be opened and none of them exists: the app is not set up, and the question is
    refused with the command that sets it up (404 / 3004) rather than answered from nothing."""
    from zhiwen.kb import list_kbs

    if not opened and errors and not set(errors) & set(list_kbs(ctx.settings)):
        raise kb_not_found(next(iter(errors)))


def kb_config(settings: PolicySettings) -> PolicyKBConfig:
    cfg = load_kb_config(settings.kb_config)
    overrides = {"visa": settings.visa_kb, "airline": settings.airline_kb, "general": settings.general_kb}
    return cfg.with_names({k: v for k, v in overrides.items() if k in cfg.kbs})


def _fallback(reason: str | None, new: str) -> str:
    if reason is None:
        POLICY_FALLBACKS.labels(reason=new).inc()
        log.warning("[智能路由] 降级为单问题检索，原因: %s", new)
        return new
    return reason


def prepare(
    question: str,
    ctx: AppContext,
    *,
    top_n: Any = None,
    as_of: Any = None,
    settings: PolicySettings | None = None,
    history: Sequence[Mapping[str, Any]] = (),
    standalone: Standalone | None = None,
) -> Prepared:
    """Follow-up → intent → rewrite → retrieval → sources and notes (no LLM answer yet).

    ``standalone``: the question as the follow-up hook already read it (the conversation
    service's turn); without it, ``question`` is read after ``history`` here."""
    settings = settings or policy_settings(ctx.settings)
    question = question_text(question or "")
    n = check_top_n(top_n, settings)
    day = parse_as_of(as_of)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    cfg = kb_config(settings)
    found = standalone or follow_up(question, history, ctx)
    question = found.question
    classification, fallback = conversation_intent(question, found.carried.get("previous"), ctx, settings)
    if fallback:
        POLICY_FALLBACKS.labels(reason=fallback).inc()
        log.warning("[智能路由] 降级为单问题检索，原因: %s", fallback)
    intent = classification.label
    timings["classify"] = time.perf_counter() - t0

    # with the classifier switched off nothing says which KBs matter: search them all
    route_all = fallback == "classifier_disabled"
    spec_names = (
        list(dict.fromkeys(n for i in SPECIALIST_INTENTS for n in cfg.kb_names(i))) if route_all else []
    )
    spec_kbs, kb_errors = open_kbs(ctx, spec_names or cfg.kb_names(intent))
    general_kbs, general_errors = open_kbs(ctx, [cfg.general_kb().name])
    kb_errors.update(general_errors)
    require_set_up(ctx, spec_kbs + general_kbs, kb_errors)
    if kb_errors and intent != "other":
        fallback = _fallback(fallback, "kb_missing")

    rewritten: str | None = None
    t1 = time.perf_counter()
    if fallback is None and intent != "other":
        try:
            rw = rewrite_question(question, intent, llm=ctx.llm, timeout_s=settings.rewrite_timeout)
            rewritten = rw.text
            log.info("[智能路由] 问题已改写（%s）: %s", rw.method, rewritten)
        except RewriteError as exc:
            fallback = _fallback(fallback, exc.reason)
    timings["rewrite"] = time.perf_counter() - t1

    t2 = time.perf_counter()
    if rewritten is not None and spec_kbs and general_kbs:
        log.info("[智能路由] 使用双问题检索和独立重排序")
        outcome = dual_retrieve(
            ctx.pipeline,
            spec_kbs,
            general_kbs[0],
            rewritten=rewritten,
            original=question,
            top_n=n,
            intent=intent,
        )
        if outcome.errors:
            kb_errors.update(outcome.errors)
            fallback = _fallback(fallback, "kb_error")
            rewritten = None
            working = [kb for kb in [*spec_kbs, *general_kbs] if kb.name not in outcome.errors]
            outcome = single_retrieve(ctx.pipeline, working, question=question, top_n=n)
    else:
        kbs = (
            general_kbs if intent == "other" and general_kbs and not route_all else [*spec_kbs, *general_kbs]
        )
        outcome = single_retrieve(ctx.pipeline, kbs, question=question, top_n=n)
        kb_errors.update(outcome.errors)
    timings["retrieve"] = time.perf_counter() - t2

    countries = list(default_gazetteer().find(question))
    rows: list[compose.TableRow] = []
    if countries and (intent != "other" or route_all) and VISA_ROLE in cfg.kbs:
        visa_name = cfg.kbs[VISA_ROLE].name
        visa_kb = next((kb for kb in spec_kbs if kb.name == visa_name), None)
        if visa_kb is None:
            opened, _ = open_kbs(ctx, [visa_name])
            visa_kb = opened[0] if opened else None
        rows = compose.lookup_rows(visa_kb, countries)
    sources = [
        Citation.from_hit(h, kb=h.extra.get("kb"), max_chars=settings.source_chars) for h in outcome.hits
    ]
    sources = compose.order_sources(rows, sources, settings.source_chars)
    notes = compose.date_notes(rows, sources, day)
    hints = compose.outbound_notes(question, rows)
    POLICY_QUESTIONS.labels(intent=intent, strategy=outcome.strategy).inc()
    return Prepared(
        question=question,
        as_of=day,
        top_n=n,
        classification=classification,
        intent=intent,
        rewritten=rewritten if outcome.strategy == "dual" else None,
        strategy=outcome.strategy,
        fallback_reason=fallback,
        retrieval=outcome,
        rows=rows,
        sources=sources,
        notes=notes,
        hints=hints,
        countries=countries,
        kb_errors=kb_errors,
        timings=timings,
        general_kbs=frozenset(kb.name for kb in general_kbs),
    )


def answer_plan(p: Prepared, settings: PolicySettings) -> AnswerPlan:
    def body() -> str:
        return compose.extractive_body(p.question, p.intent, p.rows, p.sources, [*p.notes, *p.hints])

    messages = compose.llm_messages(
        p.question,
        p.rows,
        p.sources,
        [*p.notes, *p.hints],
        as_of=p.as_of,
        context_chars=settings.context_chars,
    )
    plan_sources = list(p.sources)
    if not plan_sources and p.rows:  # a country with no row still deserves its honest answer
        plan_sources = [Citation(id="visa_table", title="免签政策表", score=0.0)]
    return AnswerPlan(
        app=APP,
        route=p.intent,
        sources=plan_sources,
        messages=messages,
        extractive_body=body,
        purpose="policy.answer",
        params={"top_n": p.top_n},
    )


def ask_policy(
    question: str,
    ctx: AppContext,
    *,
    top_n: Any = None,
    as_of: Any = None,
    settings: PolicySettings | None = None,
    history: Sequence[Mapping[str, Any]] = (),
    standalone: Standalone | None = None,
) -> PolicyResult:
    """The whole pipeline, one answer (an LLM failure never raises: the answer is extractive)."""
    settings = settings or policy_settings(ctx.settings)
    p = prepare(
        question, ctx, top_n=top_n, as_of=as_of, settings=settings, history=history, standalone=standalone
    )
    t = time.perf_counter()
    result = execute(answer_plan(p, settings), ctx.llm, timeout_s=settings.answer_timeout)
    text = compose.append_missing_notes(result.answer, p.rows, p.notes) if result.llm_used else result.answer
    p.timings["answer"] = time.perf_counter() - t
    p.timings["total"] = sum(p.timings.values())
    return PolicyResult(p, text, result.llm_used, result.extractive_reason, result.has_offline_note)


def stream_policy(
    question: str,
    ctx: AppContext,
    *,
    top_n: Any = None,
    as_of: Any = None,
    settings: PolicySettings | None = None,
    history: Sequence[Mapping[str, Any]] = (),
    standalone: Standalone | None = None,
) -> Iterator[AppEvent]:
    """Events: ``meta`` (intent, rewrite, strategy), ``sources``, ``delta`` …, ``done`` (the rest)."""
    settings = settings or policy_settings(ctx.settings)
    p = prepare(
        question, ctx, top_n=top_n, as_of=as_of, settings=settings, history=history, standalone=standalone
    )
    yield AppEvent("meta", p.meta())
    yield AppEvent.sources(p.sources, {"sources": [citation_dict(c, p.general_kbs) for c in p.sources]})
    t = time.perf_counter()
    parts: list[str] = []
    closing: Answer | None = None
    for event in execute_stream(answer_plan(p, settings), ctx.llm, timeout_s=settings.answer_timeout):
        if event.type == "delta":
            parts.append(event.text)
            yield event
        elif event.answer is not None:
            closing = event.answer
    llm_used = closing is not None and closing.llm_used
    # the closing answer, not the deltas: a reply that failed the grounding check is replaced (#31)
    text = closing.answer if closing is not None else "".join(parts)
    if llm_used:
        full = compose.append_missing_notes(text, p.rows, p.notes)
        if full != text:
            yield AppEvent.delta(full[len(text) :])
            text = full
    p.timings["answer"] = time.perf_counter() - t
    p.timings["total"] = sum(p.timings.values())
    noted = closing is not None and closing.has_offline_note
    result = PolicyResult(p, text, llm_used, closing.extractive_reason if closing else None, noted)
    data = result.data()
    data.pop("sources")
    yield AppEvent.done(result.to_answer(), data)
