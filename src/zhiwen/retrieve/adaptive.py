"""Adaptive retrieval: how every knob of the pipeline is adjusted by the query's intent.

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

:func:`effective_params` gathers them into the parameters one search runs with; the pipeline
that applies them is :class:`zhiwen.retrieve.pipeline.RetrievalPipeline`. They include the BM25
parameters (``bm25``) and pseudo-relevance feedback (``feedback``); a KB's ``tuning.json`` is
merged over them by :func:`zhiwen.retrieve.tuning.merge_tuning` (see there for the precedence).

Example::

    >>> intent = QueryProfiler().classify("推荐几道菜")
    >>> effective_params(get_settings(), intent, top_k=5)["mmr_lambda"]
    0.7
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zhiwen.documents import SearchHit
from zhiwen.understand.profile import QueryIntent

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


def effective_params(cfg: Any, intent: QueryIntent, top_k: int, mode: str | None = None) -> dict[str, Any]:
    """Every parameter one search runs with, after the intent's adjustments (reported as-is)."""
    r, rr, ad = cfg.retrieval, cfg.rerank, cfg.adaptive
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
    return {
        "bm25": _bm25_params(r),
        "feedback": _feedback_params(r),
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


def _static_retrieval() -> Any:
    from zhiwen.config import get_settings

    return get_settings().retrieval


def _bm25_params(r: Any) -> dict[str, float | None]:
    """``{"k1", "b"}`` from the settings (runtime settings lack them: the static ones then)."""
    src = r if hasattr(r, "bm25_k1") else _static_retrieval()
    return {"k1": src.bm25_k1, "b": src.bm25_b}


def _feedback_params(r: Any) -> dict[str, Any]:
    """The global pseudo-relevance feedback settings as a plain dict."""
    src = r if hasattr(r, "feedback") else _static_retrieval()
    return dict(src.feedback.model_dump())
