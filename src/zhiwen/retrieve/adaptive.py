"""Adaptive retrieval (seed 004): search → similarity threshold → rerank → fallback → MMR →
per-document limit, with every knob adjusted by the query's intent.

Each adjustment is a small pure function behind its own flag (all flags off by default — the
seed's grey release):

* :func:`adjust_mmr_lambda` (flag ``adaptive.dynamic_lambda_enabled``): BROAD −δ (clamp
  0.3–0.9), FOCUSED / TROUBLESHOOT +δ (clamp 0.1–0.95), δ = ``adaptive.lambda_delta``.
* :func:`adjust_thresholds` (flag ``adaptive.dynamic_threshold_enabled``): BROAD looser,
  FOCUSED / TROUBLESHOOT stricter, by ``adaptive.threshold_delta``.
* :func:`adjust_per_doc_limit` (flag ``adaptive.dynamic_threshold_enabled``, seed §4.3 / §4.4):
  DOC_SPECIFIC → ``max(per_doc_limit, 3)``.
* rerank (flag ``rerank.enabled``): :func:`zhiwen.retrieve.rerank.rerank_hits`.
* MMR (flag ``adaptive.mmr_enabled``): :func:`zhiwen.retrieve.mmr.mmr_select`.

:class:`AdaptiveSearch` takes a *config provider*: a zero-argument callable returning anything
with ``retrieval`` / ``rerank`` / ``adaptive`` sections — the static
:class:`~zhiwen.config.Settings` or the runtime :class:`zhiwen.api.dynamic_settings.DynamicSettings`
— read once per search, so runtime changes apply to the next search.

Example::

    >>> searcher = AdaptiveSearch(lambda: dynamic_service.get())
    >>> result = searcher.search(kb, "宫保鸡丁怎么做", top_k=5)
    >>> result.intent, result.params["mmr_lambda"], [h.chunk.id for h in result.hits]
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from zhiwen.documents import SearchHit
from zhiwen.metrics import EMPTY_RESULTS, FALLBACKS, PASSED_THRESHOLD
from zhiwen.retrieve.mmr import Vectorize, mmr_select
from zhiwen.retrieve.rerank import Reranker, get_reranker, rerank_hits
from zhiwen.store.filters import Filter
from zhiwen.understand.profile import QueryIntent, QueryProfiler

log = logging.getLogger(__name__)

NO_RERANK_PASS = "No chunks met rerank threshold"
NO_SIM_PASS = "No chunks met similarity threshold"
DOC_SPECIFIC_MIN_PER_DOC = 3


def _clamp(x: float, lo: float, hi: float) -> float:
    return min(max(x, lo), hi)


# -- pure adjustments --------------------------------------------------------------------------
def adjust_mmr_lambda(base: float, intent: QueryIntent, enabled: bool, delta: float = 0.15) -> float:
    """Seed 004 §4.2: more diversity for BROAD, more precision for FOCUSED / TROUBLESHOOT."""
    if not enabled:
        return base
    if intent is QueryIntent.BROAD:
        return _clamp(base - delta, 0.3, 0.9)
    if intent in (QueryIntent.FOCUSED, QueryIntent.TROUBLESHOOT):
        return _clamp(base + delta, 0.1, 0.95)
    return base


def adjust_thresholds(
    base_sim: float, base_rerank: float, intent: QueryIntent, enabled: bool, delta: float = 0.05
) -> tuple[float, float]:
    """Seed 004 §4.3: (vector similarity threshold, rerank threshold) for this intent.

    BROAD: ``min_sim = max(0, base − δ)`` (a base already below 0 is left alone), rerank − δ;
    FOCUSED / TROUBLESHOOT: ``min_sim = min(1, base + δ)``, rerank + δ; others unchanged.
    """
    if not enabled:
        return base_sim, base_rerank
    if intent is QueryIntent.BROAD:
        return max(min(base_sim, 0.0), base_sim - delta), base_rerank - delta
    if intent in (QueryIntent.FOCUSED, QueryIntent.TROUBLESHOOT):
        return min(1.0, base_sim + delta), base_rerank + delta
    return base_sim, base_rerank


def adjust_per_doc_limit(
    base: int, intent: QueryIntent, enabled: bool, minimum: int = DOC_SPECIFIC_MIN_PER_DOC
) -> int:
    """Seed 004 §4.4: a DOC_SPECIFIC question may take more chunks from one document.

    ``base == 0`` means unlimited and stays unlimited.
    """
    if not enabled or base <= 0 or intent is not QueryIntent.DOC_SPECIFIC:
        return base
    return max(base, minimum)


# -- list operations ---------------------------------------------------------------------------
def apply_min_similarity(hits: Sequence[SearchHit], min_sim: float) -> list[SearchHit]:
    """Drop hits whose vector score is below ``min_sim``.

    Hits without a vector score (found by BM25 alone in hybrid mode, or ``bm25`` mode) are kept:
    the threshold is about the dense branch's confidence, not a veto on lexical matches.
    """
    return [h for h in hits if h.vector_score is None or h.vector_score >= min_sim]


def apply_per_doc_limit(hits: Sequence[SearchHit], limit: int, top_k: int) -> list[SearchHit]:
    """Keep at most ``limit`` chunks per document (0 = unlimited), then the first ``top_k``."""
    if limit <= 0:
        return list(hits[:top_k])
    seen: dict[str, int] = {}
    out: list[SearchHit] = []
    for h in hits:
        n = seen.get(h.chunk.doc_id, 0)
        if n < limit:
            seen[h.chunk.doc_id] = n + 1
            out.append(h)
            if len(out) >= top_k:
                break
    return out


# -- the pipeline ------------------------------------------------------------------------------
@dataclass(slots=True)
class AdaptiveResult:
    hits: list[SearchHit]
    intent: QueryIntent
    params: dict[str, Any]
    diagnostics: dict[str, Any] = field(default_factory=dict)
    message: str | None = None
    warnings: list[str] = field(default_factory=list)


class AdaptiveSearch:
    """Seed 004's retrieval pipeline over a KB; one instance serves every KB and request."""

    def __init__(
        self,
        config: Callable[[], Any],
        *,
        reranker_factory: Callable[[Any], Reranker] = get_reranker,
        vectorize: Vectorize | None = None,
        route: str = "search",
    ) -> None:
        self._config = config
        self._reranker_factory = reranker_factory
        self._vectorize = vectorize
        self._route = route
        self._profilers: dict[str, QueryProfiler] = {}

    def profiler(self, keywords: Mapping[str, Sequence[str]] | None) -> QueryProfiler:
        key = repr(sorted((k, tuple(v)) for k, v in (keywords or {}).items()))
        prof = self._profilers.get(key)
        if prof is None:
            if len(self._profilers) > 16:  # profiles change rarely; never grow unbounded
                self._profilers.clear()
            prof = self._profilers[key] = QueryProfiler(keywords)
        return prof

    def plan(
        self, query: str, top_k: int, mode: str | None = None, cfg: Any = None
    ) -> tuple[QueryIntent, dict[str, Any]]:
        """The intent and every effective parameter for this query (no search)."""
        cfg = cfg if cfg is not None else self._config()
        r, rr, ad = cfg.retrieval, cfg.rerank, cfg.adaptive
        intent = self.profiler(ad.keywords_profile).classify(query)
        mmr_lambda = adjust_mmr_lambda(ad.mmr_lambda, intent, ad.dynamic_lambda_enabled, ad.lambda_delta)
        min_sim, rerank_thr = adjust_thresholds(
            ad.min_similarity, rr.score_threshold, intent, ad.dynamic_threshold_enabled, ad.threshold_delta
        )
        per_doc = adjust_per_doc_limit(ad.per_doc_limit, intent, ad.dynamic_threshold_enabled)
        fusion = r.fusion
        weights = (r.bm25_weight, r.dense_weight) if fusion == "rrf" else (1.0 - r.dense_alpha, r.dense_alpha)
        # fetch enough to rerank / diversify / fill per-document limits, at least top_k
        fetch_k = top_k
        if rr.enabled:
            fetch_k = max(fetch_k, rr.candidates)
        if ad.mmr_enabled or per_doc > 0:
            fetch_k = max(fetch_k, min(top_k * 4, r.candidates))
        params: dict[str, Any] = {
            "mode": mode or r.default_mode,
            "top_k": top_k,
            "fetch_k": fetch_k,
            "fusion": fusion,
            "rrf_k": r.rrf_k,
            "dense_alpha": r.dense_alpha,
            "weights": list(weights),
            "candidates": r.candidates,
            "mmr_enabled": ad.mmr_enabled,
            "mmr_lambda": round(mmr_lambda, 6),
            "mmr_lambda_base": ad.mmr_lambda,
            "thresholds": {"similarity": round(min_sim, 6), "rerank": round(rerank_thr, 6)},
            "thresholds_base": {"similarity": ad.min_similarity, "rerank": rr.score_threshold},
            "dynamic_lambda": ad.dynamic_lambda_enabled,
            "dynamic_threshold": ad.dynamic_threshold_enabled,
            "per_doc_limit": per_doc,
            "rerank": {
                "enabled": rr.enabled,
                "backend": rr.backend,
                "model": rr.model if rr.backend == "cross_encoder" else rr.endpoint,
                "candidates": rr.candidates,
                "batch_size": rr.batch_size,
                "fallback": min(rr.fallback, top_k),
            },
        }
        return intent, params

    def search(
        self,
        kb: Any,  # a KnowledgeBase (or anything with its search signature)
        query: str,
        *,
        top_k: int | None = None,
        filters: Filter | Mapping[str, Any] | None = None,
        mode: str | None = None,
    ) -> AdaptiveResult:
        cfg = self._config()
        k = int(top_k if top_k is not None else cfg.retrieval.top_k)
        intent, params = self.plan(query, k, mode, cfg)
        rerank_cfg = cfg.rerank
        t0 = time.perf_counter()
        hits = kb.search(
            query,
            mode=params["mode"],
            top_k=params["fetch_k"],
            filters=filters,
            candidates=params["candidates"],
            fusion=params["fusion"],
            rrf_k=params["rrf_k"],
            weights=tuple(params["weights"]),
        )
        timings = {"search": time.perf_counter() - t0}
        diag: dict[str, Any] = {"retrieved": len(hits)}
        result = AdaptiveResult(hits=[], intent=intent, params=params, diagnostics=diag)

        passed = apply_min_similarity(hits, params["thresholds"]["similarity"])
        diag["passed_similarity"] = len(passed)
        if hits and not passed:
            result.message = f"{NO_SIM_PASS}（没有片段达到相似度阈值，请放宽条件）"
            FALLBACKS.labels(kind="similarity_empty").inc()
            log.warning("no chunk met similarity threshold", extra={"intent": intent.value})

        if rerank_cfg.enabled and passed:
            outcome = rerank_hits(
                lambda: self._reranker_factory(rerank_cfg),
                query,
                passed,
                candidates=rerank_cfg.candidates,
                threshold=params["thresholds"]["rerank"],
                fallback=rerank_cfg.fallback,
                top_k=k,
                keep=params["fetch_k"] if (params["mmr_enabled"] or params["per_doc_limit"]) else k,
            )
            timings["rerank"] = outcome.seconds
            diag.update(
                reranked=outcome.reranked,
                rerank_candidates=outcome.candidates,
                passed_rerank=outcome.passed,
                fallback=outcome.fallback,
                rerank_error=outcome.error,
            )
            result.warnings.extend(outcome.warnings)
            if outcome.reranked and outcome.passed == 0:
                result.message = f"{NO_RERANK_PASS}（没有片段达到重排阈值，请放宽条件）"
                log.warning(
                    "no chunk met rerank threshold",
                    extra={
                        "intent": intent.value,
                        "threshold": params["thresholds"]["rerank"],
                        "threshold_adjusted": params["thresholds"]["rerank"] != rerank_cfg.score_threshold,
                        "fallback": outcome.fallback,
                    },
                )
            passed = outcome.hits
        PASSED_THRESHOLD.observe(len(passed))

        selected = passed
        if params["mmr_enabled"] and len(selected) > 1:
            t1 = time.perf_counter()
            want = len(selected) if params["per_doc_limit"] else k
            selected = mmr_select(selected, params["mmr_lambda"], want, vectorize=self._vectorize)
            timings["mmr"] = time.perf_counter() - t1
        selected = apply_per_doc_limit(selected, params["per_doc_limit"], k)
        result.hits = selected
        diag["returned"] = len(selected)
        diag["timings_ms"] = {name: round(sec * 1000, 2) for name, sec in timings.items()}
        if not selected:
            EMPTY_RESULTS.labels(route=self._route).inc()
            if result.message is None:
                result.message = "没有找到相关内容"
        return result
