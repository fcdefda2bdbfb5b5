"""The property-search pipeline of seed 000: understand → retrieve → re-score → answer.

1. **Cache**: the full result is cached (bounded LRU, ``ZHIWEN_LISTINGS__CACHE_SIZE``) under
   (normalised question, max_results, KB name, KB revision): a repeated question costs no
   retrieval and no LLM call, and re-indexing the KB (a new revision) invalidates it.
2. **Understand**: rules (:mod:`.extract`), the stage-2 quality check, and — only when an LLM
   is configured and the question is complex — the LLM fallback (:mod:`.understand_llm`),
   running *in parallel* with the vector and full-text branches (a thread pool of 4).
3. **Retrieve**: the explicit constraints are store filters inside both branches; the branches
   are fused with RRF (k = ``ZHIWEN_LISTINGS__RRF_K`` = 40). Fewer exact matches than
   ``min(max_results, ZHIWEN_LISTINGS__RELAX_BELOW)`` → relax in
   :data:`~.extract.RELAX_ORDER` and say so in ``match_reasons`` ("已放宽: 面积条件").
4. **Re-score** (:mod:`.scoring`) and keep the best ``max_results``; exact matches rank first.
5. **Answer**: ONE LLM call grounded in the retrieved listings; without an LLM, when it
   fails, or when its reply fails the grounding check (:mod:`zhiwen.answer.grounding`: a figure
   in neither the listings shown nor the question, English, cut at ``max_tokens``) an answer
   composed from the listings, flagged ``llm_used: false`` with its ``extractive_reason``.

Example::

    >>> svc = ListingsService(open_kb("listings"))
    >>> out = svc.ask("浦东800万以内的两房，要有电梯", max_results=3)
    >>> out["retrieved_properties"][0]["match_reasons"]
    ['价格符合预算 0-800万', '位置匹配: 浦东新区·三林', '户型符合: 2室1厅', '满足特殊需求: 电梯']
"""

from __future__ import annotations

import copy
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from zhiwen.answer.grounding import GROUNDING_REASONS, Grounding, check_answer, number_facts
from zhiwen.apps.listings.answer_text import (
    ADVISER_PROMPT,
    compose_answer,
    conversation_fields,
    listing_line,
    property_view,
)
from zhiwen.apps.listings.describe import describe_requirements
from zhiwen.apps.listings.extract import (
    Requirements,
    assess,
    hard_filters,
    normalise_question,
    relaxable_steps,
)
from zhiwen.apps.listings.followup import Dialogue, understand
from zhiwen.apps.listings.scoring import Weights, score_listing
from zhiwen.apps.listings.settings import ListingsSettings, get_listings_settings
from zhiwen.apps.listings.understand_llm import LLMExtractor, merge
from zhiwen.cache import LRU
from zhiwen.chinese.gazetteer import get_gazetteer
from zhiwen.config import Settings, get_settings
from zhiwen.conversation.model import user_questions
from zhiwen.documents import SearchHit
from zhiwen.errors import InvalidParameter, LLMError, WrongParameterType, ZhiwenError
from zhiwen.llm.base import ChatModel
from zhiwen.metrics import EXTRACTIVE_ANSWERS, FALLBACKS
from zhiwen.retrieve.fusion import rrf
from zhiwen.retrieve.pipeline import RetrievalPipeline
from zhiwen.store.filters import parse_filters
from zhiwen.validation import question_text

log = logging.getLogger(__name__)

_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="listings")
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
    """Seed 000's ``ask`` over one listings knowledge base (thread-safe)."""

    def __init__(
        self,
        kb: Any,
        *,
        settings: Settings | None = None,
        llm: ChatModel | None = _UNSET,
        listings: ListingsSettings | None = None,
    ) -> None:
        self.kb = kb
        self.settings = settings or getattr(kb, "settings", None) or get_settings()
        self.listings = ls = listings or get_listings_settings()
        if llm is _UNSET:
            from zhiwen.llm import get_llm

            llm = get_llm(self.settings)
        self.llm: ChatModel | None = llm
        self.weights = Weights.from_settings(ls)
        self.cache: LRU[dict[str, Any]] = LRU(ls.cache_size, "listings_ask")
        self.extractor = (
            LLMExtractor(llm, cache_size=ls.llm_cache_size, calls_per_minute=ls.llm_calls_per_minute)
            if llm is not None
            else None
        )
        #: what is probed once per KB revision ("cities", "metadata" → (revision, value)); shared
        #: by every view of this service (:meth:`over`), as are the cache and the lock
        self._probed: dict[str, tuple[int, Any]] = {}
        self._lock = threading.Lock()

    def over(self, kb: Any) -> ListingsService:
        """This service over ``kb`` — the handle the registry holds now (it re-opens a KB after a
        re-index) — sharing its caches: a view for one request; nothing shared is changed."""
        if kb is self.kb:
            return self
        view = copy.copy(self)
        view.kb = kb
        return view

    def _per_revision(self, name: str, probe: Callable[[], Any]) -> Any:
        """``probe()`` once per KB revision (its value shared by every view of this service)."""
        rev = self.kb.revision
        with self._lock:
            got = self._probed.get(name)
        if got is not None and got[0] == rev:
            return got[1]
        value = probe()
        with self._lock:
            self._probed[name] = (rev, value)
        return value

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
    ) -> dict[str, Any] | None:
        """The cached answer (marked ``cached: true``) or None; no retrieval, no LLM."""
        q, n = self.validate(question, max_results)
        hit = self.cache.get(self.cache_key(q, n, pipeline, user_questions(history)))
        if hit is None:
            return None
        out = dict(hit)
        out["cached"] = True
        return out

    # -- helpers ------------------------------------------------------------------------------
    def kb_cities(self) -> set[str]:
        """Cities present in the KB (probed once per revision with a 1-hit BM25 per city)."""
        return set(self._per_revision("cities", self._probe_cities))

    def _probe_cities(self) -> set[str]:
        found: set[str] = set()
        for city in get_gazetteer().cities:
            try:
                if self.kb.search(city, mode="bm25", top_k=1, filters={"city": city}):
                    found.add(city)
            except ZhiwenError:
                log.debug("city probe failed for %s", city, exc_info=True)
        return found

    def _metadata(self) -> list[dict[str, Any]] | None:
        """Every listing's metadata, read once per KB revision (None: too many to count here)."""
        store = self.kb.store

        def read() -> list[dict[str, Any]] | None:
            if store.count() > self.listings.count_limit:
                return None
            return [dict(d.metadata) for d in store.get_parents(sorted(store.doc_ids()))]

        return self._per_revision("metadata", read)

    def count_matches(self, filters: dict[str, Any]) -> int | None:
        """How many listings pass every hard constraint (None: the KB is too large to count)."""
        try:
            metas = self._metadata()
        except ZhiwenError:
            log.debug("listings: could not read the metadata to count", exc_info=True)
            return None
        if metas is None:
            return None
        condition = parse_filters(filters)
        return sum(1 for m in metas if condition.matches(m))

    @staticmethod
    def search_text(question: str, req: Requirements) -> str:
        """The retrieval query: the question without negated clauses, plus canonical words."""
        t = normalise_question(question)
        t = re.sub(r"(不要|不想要|不考虑|不接受|远离|避开|拒绝|别|排除)[^，,。；;！!？?、和的]{0,8}", " ", t)
        extra = [p.name.replace("/", " ") for p in req.places] + req.estates + req.special + req.keywords
        extra += req.decoration_in
        text = " ".join([t, *extra]).strip()
        return text or question

    def _branch(self, query: str, mode: str, k: int, filters: dict[str, Any]) -> list[SearchHit]:
        try:
            return self.kb.search(query, mode=mode, top_k=k, filters=filters)
        except InvalidParameter as exc:
            if mode == "dense":  # a KB without vectors: full-text answers alone
                log.debug("dense branch unavailable: %s", exc)
                return []
            raise

    def _retrieve(
        self, query: str, filters: dict[str, Any], k: int, futures: dict[str, Future[Any]] | None = None
    ) -> list[tuple[SearchHit, float]]:
        """Vector ∥ full-text under the filters, RRF-fused: [(hit, rrf score)] best first."""
        if futures is None:
            futures = {
                "dense": _POOL.submit(self._branch, query, "dense", k, filters),
                "bm25": _POOL.submit(self._branch, query, "bm25", k, filters),
            }
        lists: dict[str, list[SearchHit]] = {}
        errors: list[BaseException] = []
        for name, fut in futures.items():
            try:
                lists[name] = fut.result()
            except Exception as exc:  # one failing branch leaves the other to answer
                errors.append(exc)
                FALLBACKS.labels(kind=f"listings_{name}_failed").inc()
                log.warning("listings %s branch failed: %s", name, exc)
        if len(errors) == len(futures) and errors:
            raise errors[0]
        by_id: dict[str, SearchHit] = {}
        rankings = []
        for hits in lists.values():
            if hits:
                rankings.append([(h.id, float(h.score)) for h in hits])
                for h in hits:
                    by_id.setdefault(h.id, h)
        fused = rrf(rankings, k=self.listings.rrf_k) if rankings else []
        return [(by_id[i], s) for i, s in fused]

    # -- the pipeline ---------------------------------------------------------------------------
    def _refine(
        self, pipeline: RetrievalPipeline | None, query: str, fused: list[tuple[SearchHit, float]]
    ) -> tuple[list[tuple[SearchHit, float]], dict[str, Any]]:
        """The engine's post-search stages (rerank, thresholds, MMR) over the fused candidates."""
        if pipeline is None or not fused:
            return fused, {}
        refined = pipeline.rerank(query, [replace(h, score=s) for h, s in fused], top_k=len(fused))
        params = {**refined.params, "diagnostics": refined.diagnostics}
        if not refined.diagnostics.get("reranked"):
            return [(h, float(h.score)) for h in refined.hits], params
        # rerank scores (logits or probabilities) become 0..1 like the RRF scores they replace
        scores = [float(h.score) for h in refined.hits]
        lo, hi = min(scores), max(scores)
        span = (hi - lo) or 1.0
        return [(h, (float(h.score) - lo) / span if hi > lo else 1.0) for h in refined.hits], params

    def ask(
        self,
        question: str,
        max_results: int = 3,
        *,
        history: Sequence[Mapping[str, Any]] = (),
        dialogue: Dialogue | None = None,
        use_cache: bool = True,
        pipeline: RetrievalPipeline | None = None,
    ) -> dict[str, Any]:
        """Seed 000's answer. ``pipeline`` applies the engine's rerank/MMR settings to the candidates.

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
            return {**hit, "cached": True}
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        ls = self.listings

        dialogue = dialogue or understand(q, earlier, kb_cities=self.kb_cities())
        req, text = dialogue.merged, dialogue.standalone  # text: q itself unless a follow-up
        quality = assess(text, req)
        timings["rules_ms"] = (time.perf_counter() - t0) * 1000
        k = max(quality.dynamic_k, 4 * n)
        query = self.search_text(text, req)
        filters = hard_filters(req, tolerance=ls.price_over_budget_tolerance)

        # extraction ∥ vector ∥ full-text (seed 000's parallel tasks)
        tr = time.perf_counter()
        llm_future: Future[Any] | None = None
        if self.extractor is not None and quality.needs_llm:
            llm_future = _POOL.submit(self.extractor.extract, text)
        futures: dict[str, Future[Any]] = {
            "dense": _POOL.submit(self._branch, query, "dense", k, filters),
            "bm25": _POOL.submit(self._branch, query, "bm25", k, filters),
        }
        data = llm_future.result() if llm_future is not None else None
        if data:
            req, query, filters, futures = self._with_extraction(text, req, data, query, filters, futures)
        fused, params = self._refine(pipeline, query, self._retrieve(query, filters, k, futures or None))
        timings["retrieve_ms"] = (time.perf_counter() - tr) * 1000
        tiers, labels = self._relaxation_tiers(req, query, fused, n, k)

        ts = time.perf_counter()
        props = self._shown(tiers, req, n)
        total = self.count_matches(filters)
        timings["rescore_ms"] = (time.perf_counter() - ts) * 1000

        ta = time.perf_counter()
        asked = f"{text}（客户最新一句：{q}）" if dialogue.follow_up else q
        answer, llm_used, cacheable, reason = self._answer(asked, req, props, total)
        timings["answer_ms"] = (time.perf_counter() - ta) * 1000
        timings["total_ms"] = (time.perf_counter() - t0) * 1000
        result: dict[str, Any] = {
            "answer": answer,
            "retrieved_properties": props,
            "llm_used": llm_used,
            "extractive_reason": reason,
            "requirements": req.summary(),
            "relaxed": labels if any(p["relaxed"] for p in props) else [],
            "quality": {
                "dimensions": quality.dimensions,
                "complex_patterns": quality.complex_patterns,
                "complexity": quality.complexity,
                "dynamic_k": quality.dynamic_k,
                "llm_extraction": bool(data),
            },
            "kb": self.kb.name,
            "kb_revision": self.kb.revision,
            "params": params,
            "cached": False,
            "timings_ms": {k2: round(v, 2) for k2, v in timings.items()},
            **conversation_fields(dialogue, req, total),
        }
        if use_cache and cacheable:
            self.cache.put(key, result)
        return result

    def _shown(
        self, tiers: list[tuple[list[tuple[SearchHit, float]], list[str]]], req: Requirements, n: int
    ) -> list[dict[str, Any]]:
        """The ``n`` listings shown: exact matches first, then each relaxation tier in turn."""
        props: list[dict[str, Any]] = []
        for hits, tier_labels in tiers:
            props.extend(self._rescored(hits, tier_labels, req, n - len(props)))
            if len(props) >= n:
                break
        return props

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
        ls = self.listings
        merged = merge(copy.deepcopy(req), data)
        if hard_filters(merged, tolerance=ls.price_over_budget_tolerance) == filters and (
            self.search_text(q, merged) == query
        ):
            return merged, query, filters, futures
        for fut in futures.values():
            fut.cancel()
        query = self.search_text(q, merged)
        return merged, query, hard_filters(merged, tolerance=ls.price_over_budget_tolerance), {}

    def _relaxation_tiers(
        self, req: Requirements, query: str, fused: list[tuple[SearchHit, float]], n: int, k: int
    ) -> tuple[list[tuple[list[tuple[SearchHit, float]], list[str]]], list[str]]:
        """Exact matches first, then listings that need a stated relaxation (each tier with the
        relaxations it needs), and every relaxation tried."""
        ls = self.listings
        tiers: list[tuple[list[tuple[SearchHit, float]], list[str]]] = [(fused, [])]
        labels: list[str] = []
        if len(fused) >= min(n, ls.relax_below) or req.unknown_city:
            return tiers, labels
        seen = {h.id for h, _ in fused}
        relaxed: set[str] = set()
        for step, label in relaxable_steps(req):
            relaxed.add(step)
            labels.append(label)
            more = self._retrieve(
                query, hard_filters(req, relaxed, tolerance=ls.price_over_budget_tolerance), k
            )
            new = [(h, s) for h, s in more if h.id not in seen]
            if new:
                tiers.append((new, list(labels)))
                seen.update(h.id for h, _ in new)
            if sum(len(t) for t, _ in tiers) >= n:
                break
        return tiers, labels

    def _rescored(
        self, hits: list[tuple[SearchHit, float]], tier_labels: list[str], req: Requirements, room: int
    ) -> list[dict[str, Any]]:
        """One tier's listings re-scored against the requirements, best first, at most ``room``."""
        if not hits:
            return []
        best = max(s for _, s in hits) or 1.0
        scored = []
        for h, s in hits:
            meta = dict(h.chunk.metadata)
            sc = score_listing(meta, req, rrf_norm=s / best, weights=self.weights, relaxed=tier_labels)
            scored.append((sc.score, h, meta, sc))
        # listings that hit a soft negation (远离高架 …) come after every clean one
        scored.sort(key=lambda x: (bool(x[3].negations), -x[0], x[1].id))
        props: list[dict[str, Any]] = []
        for score, h, meta, sc in scored[: max(room, 0)]:
            p = property_view(meta, h.chunk.doc_id)
            p["match_score"] = round(score, 4)
            p["match_percentage"] = round(score * 100)
            p["match_reasons"] = sc.reasons or ["与问题语义相关"]
            p["relaxed"] = bool(tier_labels)
            props.append(p)
        return props

    def _answer(
        self, question: str, req: Requirements, props: list[dict[str, Any]], total: int | None = None
    ) -> tuple[str, bool, bool, str | None]:
        """(answer, llm_used, cacheable, extractive_reason). One LLM call, its reply checked
        (:mod:`zhiwen.answer.grounding`); a failure or a reply that fails the check falls back to
        the composed answer, which is not cached."""
        if self.llm is None:
            EXTRACTIVE_ANSWERS.labels(app="listings", reason="no_llm").inc()
            note = "（未配置大模型：以下回答由系统根据检索到的房源自动整理。）"
            return compose_answer(question, req, props, note, total), False, True, "no_llm"
        if not props:
            EXTRACTIVE_ANSWERS.labels(app="listings", reason="no_results").inc()
            note = "（没有检索到房源，未调用大模型。）"
            return compose_answer(question, req, props, note), False, True, "no_results"
        try:
            verdict = self._llm_answer(question, req, props, total)
        except LLMError as exc:
            EXTRACTIVE_ANSWERS.labels(app="listings", reason="llm_error").inc()
            FALLBACKS.labels(kind="listings_answer_llm_error").inc()
            log.warning("listings: answer LLM failed (%s); composed answer", exc)
            note = f"（大模型暂时不可用（{exc.message}），以下回答由系统根据检索到的房源自动整理。）"
            return compose_answer(question, req, props, note, total), False, False, "llm_error"
        if verdict.reason is None:
            return verdict.text, True, True, None
        reason = verdict.reason
        EXTRACTIVE_ANSWERS.labels(app="listings", reason=reason).inc()
        log.warning("listings: LLM answer not shown (%s %s)", reason, list(verdict.unsupported))
        why = GROUNDING_REASONS.get(reason, "大模型返回了空内容")
        note = f"（{why}，以下回答由系统根据检索到的房源自动整理。）"
        return compose_answer(question, req, props, note, total), False, False, reason

    def _llm_answer(
        self, question: str, req: Requirements, props: list[dict[str, Any]], total: int | None
    ) -> Grounding:
        """The model's answer, checked: in Chinese, whole, every figure from the listings shown,
        the request or the question (the listings are cited as 第n套, so no ``[n]`` is required)."""
        assert self.llm is not None
        understood = describe_requirements(req)
        listing_text = "\n".join(
            listing_line(i, p) + f"\n   匹配理由：{'；'.join(p['match_reasons'])}"
            for i, p in enumerate(props, start=1)
        )
        prompt = ADVISER_PROMPT.format(question=question, requirements=understood, listings=listing_text)
        if total is not None and total > len(props):
            shown = len(props)
            prompt += f"\n（符合全部条件的房源共 {total} 套，上面是匹配度最高的 {shown} 套，请说明这一点。）"
        from zhiwen.llm import llm_purpose

        with llm_purpose("listings_answer"):
            reply = self.llm.chat([{"role": "user", "content": prompt}])
        facts = number_facts(props, [question, understood, str(total or ""), listing_text])
        return check_answer(
            reply.content or "",
            sources=len(props),
            question=question,
            finish_reason=reply.finish_reason,
            cite=False,
            numbers=facts,
            instructions=[line for line in ADVISER_PROMPT.splitlines() if "{" not in line],
        )


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
    "ListingsService",
    "compose_answer",
    "describe_requirements",
    "get_service",
    "property_view",
]
