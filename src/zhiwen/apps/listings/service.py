"""The property search: understand → retrieve → re-score → answer, one :class:`ListingsResult`.

1. **Cache**: the full result is cached (bounded LRU, ``ZHIWEN_LISTINGS__CACHE_SIZE``) under
   (normalised question, max_results, KB name, KB revision, the engine's runtime settings, the
   questions before it): a repeated question costs no retrieval and no LLM call, and re-indexing
   the KB (a new revision) invalidates it.
2. **Understand**: rules (:mod:`.extract`, merged across the conversation by :mod:`.followup`),
   the quality check (:mod:`.quality`), and — only when an LLM is configured and the question is
   complex — the LLM fallback (:mod:`.understand_llm`), running *in parallel* with the vector and
   full-text branches.
3. **Retrieve, relax, re-score** (:mod:`.search`): the explicit constraints are store filters
   inside both branches, RRF-fused; too few exact matches → relax and say so in
   ``match_reasons``; re-score and keep the best ``max_results``, exact matches first.
4. **Answer** (:mod:`.reply`): ONE LLM call grounded in the listings shown, or an answer composed
   from them, flagged ``llm_used: false`` with its ``extractive_reason``.

Example::

    >>> svc = ListingsService(open_kb("listings"))
    >>> out = svc.ask("浦东800万以内的两房，要有电梯", max_results=3)
    >>> out.retrieved_properties[0].match_reasons
    ['价格符合预算 0-800万', '位置匹配: 浦东新区·三林', '户型符合: 2室1厅', '满足特殊需求: 电梯']
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from typing import Any

from zhiwen.apps.listings.answer_text import compose_answer, conversation_fields, property_view
from zhiwen.apps.listings.describe import describe_requirements
from zhiwen.apps.listings.extract import Requirements, assess, hard_filters, normalise_question
from zhiwen.apps.listings.followup import Dialogue, understand
from zhiwen.apps.listings.reply import answer_listings
from zhiwen.apps.listings.result import ListingsResult, SearchQuality
from zhiwen.apps.listings.search import POOL, ListingSearch, search_text
from zhiwen.apps.listings.settings import ListingsSettings, get_listings_settings
from zhiwen.apps.listings.understand_llm import LLMExtractor, merge
from zhiwen.cache import LRU
from zhiwen.config import Settings, get_settings
from zhiwen.conversation.model import user_questions
from zhiwen.errors import InvalidParameter, WrongParameterType
from zhiwen.llm.base import ChatModel
from zhiwen.retrieve.pipeline import RetrievalPipeline
from zhiwen.validation import question_text

_UNSET: Any = object()


def _tuning(pipeline: RetrievalPipeline | None) -> str:
    if pipeline is None:
        return ""
    cfg = pipeline.config
    return json.dumps(
        {k: getattr(cfg, k).model_dump(mode="json") for k in ("rerank", "adaptive", "retrieval")},
        sort_keys=True,
        default=str,
    )


class ListingsService:
    """The property search over one listings knowledge base (thread-safe)."""

    def __init__(
        self,
        kb: Any,
        *,
        settings: Settings | None = None,
        llm: ChatModel | None = _UNSET,
        listings: ListingsSettings | None = None,
    ) -> None:
        self.settings = settings or getattr(kb, "settings", None) or get_settings()
        self.listings = ls = listings or get_listings_settings()
        if llm is _UNSET:
            from zhiwen.llm import get_llm

            llm = get_llm(self.settings)
        self.llm: ChatModel | None = llm
        self.search = ListingSearch(kb, ls)
        self.cache: LRU[ListingsResult] = LRU(ls.cache_size, "listings_ask")
        self.extractor = (
            LLMExtractor(llm, cache_size=ls.llm_cache_size, calls_per_minute=ls.llm_calls_per_minute)
            if llm is not None
            else None
        )

    @property
    def kb(self) -> Any:
        return self.search.kb

    def over(self, kb: Any) -> ListingsService:
        """This service over ``kb`` — the handle the registry holds now (it re-opens a KB after a
        re-index) — sharing its caches: a view for one request; nothing shared is changed."""
        if kb is self.kb:
            return self
        view = copy.copy(self)
        view.search = self.search.over(kb)
        return view

    def kb_cities(self) -> set[str]:
        """Cities present in the KB (probed once per revision)."""
        return self.search.kb_cities()

    # -- validation and cache ---------------------------------------------------------------
    def validate(self, question: Any, max_results: Any) -> tuple[str, int]:
        if not isinstance(question, str):
            raise WrongParameterType(
                f"question must be a string, got {type(question).__name__}",
                message="参数类型错误：question 应为字符串",
            )
        q = question_text(question, self.settings.api.max_question_chars)
        if isinstance(max_results, bool) or not isinstance(max_results, int):
            raise WrongParameterType(
                "max_results must be an integer", message="参数类型错误：max_results 应为整数"
            )
        top = self.listings.max_results_limit
        if not 1 <= max_results <= top:
            raise InvalidParameter(
                f"max_results must be in 1..{top}", message=f"max_results 必须在 1 到 {top} 之间"
            )
        return q, max_results

    def cache_key(
        self,
        question: str,
        max_results: int,
        pipeline: RetrievalPipeline | None = None,
        earlier: Sequence[str] = (),
    ) -> tuple[Any, ...]:
        # the runtime rerank / adaptive settings are part of the answer: a change must miss;
        # so is the conversation before the question (a follow-up means something else)
        tuning = _tuning(pipeline)
        before = tuple(normalise_question(e).lower() for e in earlier)
        return (normalise_question(question).lower(), max_results, self.kb.name, self.kb.revision, tuning) + (
            (before,) if before else ()
        )

    def cached(
        self,
        question: str,
        max_results: int = 3,
        pipeline: RetrievalPipeline | None = None,
        *,
        history: Sequence[Mapping[str, Any]] = (),
    ) -> ListingsResult | None:
        """The cached result (marked ``cached``) or None; no retrieval, no LLM."""
        q, n = self.validate(question, max_results)
        hit = self.cache.get(self.cache_key(q, n, pipeline, user_questions(history)))
        return None if hit is None else hit.model_copy(update={"cached": True})

    # -- the search ---------------------------------------------------------------------------
    def ask(
        self,
        question: str,
        max_results: int = 3,
        *,
        history: Sequence[Mapping[str, Any]] = (),
        dialogue: Dialogue | None = None,
        use_cache: bool = True,
        pipeline: RetrievalPipeline | None = None,
    ) -> ListingsResult:
        """The property search's answer. ``pipeline`` applies the engine's rerank/MMR settings to
        the candidates.

        ``history`` is the conversation so far (OpenAI messages, oldest first): a follow-up is
        searched with the constraints of every user turn merged (:mod:`.followup`), and the
        result says so (``standalone_question``, ``merged_requirements``, ``conversation``).
        ``dialogue``: the question already understood in its conversation (the app's follow-up
        hook, once per turn); ``history`` is then not read.
        """
        q, n = self.validate(question, max_results)
        earlier = list(dialogue.earlier) if dialogue is not None else user_questions(history)
        key = self.cache_key(q, n, pipeline, earlier)
        hit = self.cache.get(key) if use_cache else None
        if hit is not None:
            return hit.model_copy(update={"cached": True})
        result, cacheable = self._search(
            q, n, dialogue or understand(q, earlier, kb_cities=self.kb_cities()), pipeline
        )
        if use_cache and cacheable:
            self.cache.put(key, result)
        return result

    def _search(
        self, q: str, n: int, dialogue: Dialogue, pipeline: RetrievalPipeline | None
    ) -> tuple[ListingsResult, bool]:
        """Understand ∥ retrieve, relax, re-score, answer: the result, and whether it may be cached."""
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        search = self.search
        req, text = dialogue.merged, dialogue.standalone  # text: q itself unless a follow-up
        quality = assess(text, req)
        timings["rules_ms"] = (time.perf_counter() - t0) * 1000
        k = max(quality.dynamic_k, 4 * n)
        query = search_text(text, req)
        filters = hard_filters(req, tolerance=self.listings.price_over_budget_tolerance)

        # extraction ∥ vector ∥ full-text
        tr = time.perf_counter()
        llm_future: Future[Any] | None = None
        if self.extractor is not None and quality.needs_llm:
            llm_future = POOL.submit(self.extractor.extract, text)
        futures = search.branches(query, k, filters)
        data = llm_future.result() if llm_future is not None else None
        if data:
            req, query, filters, futures = self._with_extraction(text, req, data, query, filters, futures)
        fused, params = search.refine(pipeline, query, search.retrieve(query, filters, k, futures))
        timings["retrieve_ms"] = (time.perf_counter() - tr) * 1000
        tiers, labels = search.relaxation_tiers(req, query, fused, n, k)

        ts = time.perf_counter()
        props = search.shown(tiers, req, n)
        total = search.count_matches(filters)
        timings["rescore_ms"] = (time.perf_counter() - ts) * 1000

        ta = time.perf_counter()
        asked = f"{text}（客户最新一句：{q}）" if dialogue.follow_up else q
        reply = answer_listings(self.llm, asked, req, props, total)
        timings["answer_ms"] = (time.perf_counter() - ta) * 1000
        timings["total_ms"] = (time.perf_counter() - t0) * 1000
        result = ListingsResult(
            answer=reply.text,
            retrieved_properties=props,  # validated into Listing
            llm_used=reply.llm_used,
            extractive_reason=reply.reason,
            requirements=req.summary(),
            relaxed=labels if any(p["relaxed"] for p in props) else [],
            quality=SearchQuality(
                dimensions=quality.dimensions,
                complex_patterns=quality.complex_patterns,
                complexity=quality.complexity,
                dynamic_k=quality.dynamic_k,
                llm_extraction=bool(data),
            ),
            kb=self.kb.name,
            kb_revision=self.kb.revision,
            params=params,
            timings_ms={k2: round(v, 2) for k2, v in timings.items()},
            **conversation_fields(dialogue, req, total),
        )
        return result, reply.cacheable

    def _with_extraction(
        self,
        q: str,
        req: Requirements,
        data: dict[str, Any],
        query: str,
        filters: Any,
        futures: dict[str, Future[Any]],
    ) -> tuple[Requirements, str, Any, dict[str, Future[Any]]]:
        """The rules' requirements merged with the LLM's extraction. When that changes the
        filters or the search text, the searches under way are cancelled (``{}`` futures: search
        again)."""
        tolerance = self.listings.price_over_budget_tolerance
        merged = merge(copy.deepcopy(req), data)
        if hard_filters(merged, tolerance=tolerance) == filters and search_text(q, merged) == query:
            return merged, query, filters, futures
        for fut in futures.values():
            fut.cancel()
        return merged, search_text(q, merged), hard_filters(merged, tolerance=tolerance), {}


# -- one service per knowledge base ------------------------------------------------------------
_SERVICES: dict[tuple[str, str, str, str], ListingsService] = {}
_SERVICES_LOCK = threading.Lock()


def get_service(
    kb: Any, settings: Settings | None = None, *, llm: ChatModel | None = _UNSET
) -> ListingsService:
    """The shared service of ``kb`` (its caches live as long as the process), over ``kb``."""
    settings = settings or getattr(kb, "settings", None) or get_settings()
    key = (str(settings.home), kb.name, settings.llm.base_url or "", settings.llm.model)
    with _SERVICES_LOCK:
        svc = _SERVICES.get(key)
        if svc is None or (llm is not _UNSET and svc.llm is not llm):
            svc = ListingsService(kb, settings=settings, llm=llm)
            _SERVICES[key] = svc
    return svc.over(kb)  # the registry may have re-opened it after a re-index


def reset_services() -> None:
    """Forget every service and its caches (tests)."""
    with _SERVICES_LOCK:
        _SERVICES.clear()


__all__ = [
    "ListingsResult",
    "ListingsService",
    "compose_answer",
    "describe_requirements",
    "get_service",
    "property_view",
]
