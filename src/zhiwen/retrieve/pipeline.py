"""The one retrieval pipeline every entry point uses (search, QA, ``/ask``, the CLI, every app).

Stages, each behind its runtime flag: profile the query's intent → search the KB
(BM25 / dense / hybrid) → similarity threshold → rerank (cap, threshold, fallback; the fused
order when no reranker is configured or it fails) → MMR → per-document limit. The config
provider is read once per call, so a change made through the admin API applies to the next
question everywhere, and every result reports the parameters it really ran with.

Multi-KB retrieval (:meth:`RetrievalPipeline.search_groups`): several groups, each a query over
some KBs; every (group, KB) search runs in parallel, hits are tagged with their KB
(``hit.extra["kb"]``), merged and de-duplicated within the group, and each group is reranked
with its own query. A KB that fails is reported in the group's ``errors``; it never raises.

A "KB" here is anything :class:`~zhiwen.retrieve.searchable.Searchable` (a
:class:`~zhiwen.kb.KnowledgeBase`, or a double): retrieval names what it needs of one instead of
importing the KB layer above it.

Example::

    >>> pipeline = RetrievalPipeline(runtime.get, overrides=runtime.overrides)  # or lambda: get_settings()
    >>> result = pipeline.search(kb, "怎么创建知识库", top_k=5)
    >>> result.intent, result.params["rerank"]["enabled"], [h.chunk.id for h in result.hits]
    >>> parents = pipeline.search_parents(kb, "有哪些导入格式", top_k=3).parents
    >>> groups = pipeline.search_groups(
    ...     [QueryGroup("specialist", "rewritten question", [kb_a, kb_b]),
    ...      QueryGroup("general", "original question", [kb_c])], top_k=10)
"""

from __future__ import annotations

import contextvars
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from zhiwen.cache import LRU
from zhiwen.documents import ParentHit, SearchHit
from zhiwen.errors import ZhiwenError
from zhiwen.metrics import EMPTY_RESULTS, FALLBACKS, PASSED_THRESHOLD
from zhiwen.resilience import note_degraded
from zhiwen.retrieve.adaptive import apply_min_similarity, apply_per_doc_limit, effective_params
from zhiwen.retrieve.feedback import FeedbackParams
from zhiwen.retrieve.focus import Focus, any_focused, apply_focus, focus_keys
from zhiwen.retrieve.fusion import alpha_weights
from zhiwen.retrieve.mmr import Vectorize, mmr_select
from zhiwen.retrieve.parents import DEFAULT_PARENT_TOP_K, aggregate_parents, chunk_window
from zhiwen.retrieve.rerank import Reranker, get_reranker, rerank_hits
from zhiwen.retrieve.searchable import Searchable
from zhiwen.retrieve.tuning import admin_overrides, tuned_params
from zhiwen.retry import current_deadline
from zhiwen.store.filters import Filter
from zhiwen.understand.profile import QueryIntent, QueryProfiler

log = logging.getLogger(__name__)

NO_RERANK_PASS = "No chunks met rerank threshold"
NO_SIM_PASS = "No chunks met similarity threshold"
NOTHING_FOUND = "没有找到相关内容"
FiltersArg = Filter | Mapping[str, Any] | None
#: query profilers kept per keyword profile (they change rarely; never grow without bound)
PROFILER_CACHE_SIZE = 17


@dataclass(slots=True)
class PipelineResult:
    hits: list[SearchHit]
    intent: QueryIntent
    params: dict[str, Any]
    diagnostics: dict[str, Any] = field(default_factory=dict)
    message: str | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ParentResult:
    parents: list[ParentHit]
    chunks: PipelineResult

    @property
    def params(self) -> dict[str, Any]:
        return self.chunks.params


@dataclass(slots=True)
class QueryGroup:
    """One group of multi-KB retrieval: a query searched over some KBs, reranked together."""

    name: str
    query: str
    kbs: Sequence[Searchable]
    filters: FiltersArg = None


@dataclass(slots=True)
class GroupResult:
    name: str
    query: str
    hits: list[SearchHit]
    per_kb_counts: dict[str, int]
    errors: dict[str, str]
    params: dict[str, Any]
    diagnostics: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0


class RetrievalPipeline:
    """Seed 004's pipeline over any KB; one instance serves every KB, request and thread."""

    def __init__(
        self,
        config: Callable[[], Any],
        *,
        reranker_factory: Callable[[Any], Reranker] = get_reranker,
        vectorize: Vectorize | None = None,
        route: str = "search",
        max_workers: int = 8,
        overrides: Callable[[], Mapping[str, Any]] | None = None,
    ) -> None:
        self._config = config
        self._overrides = overrides  # which keys an admin set at runtime (they win over KB tuning)
        self._reranker_factory = reranker_factory
        self._vectorize = vectorize
        self._route = route
        self._profilers: LRU[QueryProfiler] = LRU(PROFILER_CACHE_SIZE, "query_profiler")
        self._max_workers = max_workers
        self._pool: ThreadPoolExecutor | None = None  # made on the first multi-KB search

    @classmethod
    def static(cls, settings: Any) -> RetrievalPipeline:
        """A pipeline over fixed settings (library use without runtime overrides)."""
        return cls(lambda: settings)

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(
                max_workers=self._max_workers, thread_name_prefix="zhiwen-multikb"
            )
        return self._pool

    @property
    def config(self) -> Any:
        """The settings the next call runs with (static or runtime overrides)."""
        return self._config()

    def profiler(self, keywords: Mapping[str, Sequence[str]] | None) -> QueryProfiler:
        key = repr(sorted((k, tuple(v)) for k, v in (keywords or {}).items()))
        prof = self._profilers.get(key)
        if prof is None:
            prof = QueryProfiler(keywords)
            self._profilers.put(key, prof)
        return prof

    def plan(
        self,
        query: str,
        top_k: int,
        mode: str | None = None,
        cfg: Any = None,
        kb: Searchable | None = None,
    ) -> tuple[QueryIntent, dict[str, Any]]:
        """The intent and every effective parameter for this query (no search).

        With ``kb``, its tuned parameters (``tuning.json``) are merged over the global ones;
        admin runtime overrides that are explicitly set still win (:mod:`zhiwen.retrieve.tuning`).
        """
        cfg = cfg if cfg is not None else self._config()
        intent = self.profiler(cfg.adaptive.keywords_profile).classify(query)
        params = effective_params(cfg, intent, top_k, mode)
        if kb is not None:
            params = tuned_params(params, kb, admin=admin_overrides(self._overrides))
        return intent, params

    # -- one KB ------------------------------------------------------------------------------
    def _fetch(
        self, kb: Searchable, query: str, params: dict[str, Any], filters: FiltersArg
    ) -> list[SearchHit]:
        if (params.get("tuning") or {}).get("kb") != kb.name:  # a multi-KB group: this KB's own tuning
            params = tuned_params(params, kb, admin=admin_overrides(self._overrides))
        weights = params["weights"]
        bm25 = params["bm25"]
        return kb.search(
            query,
            mode=params["mode"],
            top_k=params["fetch_k"],
            filters=filters,
            candidates=params["candidates"],
            fusion=params["fusion"],
            rrf_k=params["rrf_k"],
            weights=(weights[0], weights[1]),
            feedback=FeedbackParams.from_mapping(params["feedback"]),
            bm25_params=None if bm25["k1"] is None and bm25["b"] is None else (bm25["k1"], bm25["b"]),
        )

    def search(
        self,
        kb: Searchable,
        query: str,
        *,
        top_k: int | None = None,
        filters: FiltersArg = None,
        mode: str | None = None,
        fusion: str | None = None,
        alpha: float | None = None,
        candidates: int | None = None,
    ) -> PipelineResult:
        """One KB through every stage. ``fusion``, ``alpha`` (the dense weight) and ``candidates``
        (per branch) are this call's own: they win over the settings and the KB's tuning."""
        cfg = self._config()
        k = int(top_k if top_k is not None else cfg.retrieval.top_k)
        intent, params = self.plan(query, k, mode, cfg, kb=kb)
        params = with_call_args(params, cfg, fusion=fusion, alpha=alpha, candidates=candidates)
        t0 = time.perf_counter()
        hits = self._fetch(kb, query, params, filters)
        return self._refine(query, hits, intent, params, cfg, {"search": time.perf_counter() - t0})

    def search_parents(
        self,
        kb: Searchable,
        query: str,
        *,
        top_k: int = DEFAULT_PARENT_TOP_K,
        filters: FiltersArg = None,
        mode: str | None = None,
        chunk_k: int | None = None,
        focus: Focus | None = None,
    ) -> ParentResult:
        """Chunks through the pipeline, then aggregated into whole documents.

        ``chunk_k`` chunks are aggregated (default :func:`~zhiwen.retrieve.parents.chunk_window`:
        ``max(3 × top_k, 10)``). With a conversation's ``focus`` (:mod:`zhiwen.retrieve.focus`),
        ``focus.depth`` chunks are fetched for ``focus.query(query)`` and the ``chunk_k``
        aggregated are the first in the focus's order; when none of them is focused, the answer
        is the one without a focus.
        """
        window = chunk_k or chunk_window(top_k)
        if focus:
            focused = self._focused_parents(kb, query, top_k, window, filters, mode, focus)
            if focused is not None:
                return focused
        chunks = self.search(kb, query, top_k=window, filters=filters, mode=mode)
        return ParentResult(aggregate_parents(chunks.hits, kb, top_k), chunks)

    def _focused_parents(
        self,
        kb: Searchable,
        query: str,
        top_k: int,
        window: int,
        filters: FiltersArg,
        mode: str | None,
        focus: Focus,
    ) -> ParentResult | None:
        """The parents of the focus's order over ``focus.depth`` chunks (None: nothing focused)."""
        depth = max(window, focus.depth)
        chunks = self.search(kb, focus.query(query), top_k=depth, filters=filters, mode=mode)
        if not any_focused(chunks.hits, focus):
            return None
        keys = focus_keys(chunks.hits, focus)
        hits = apply_focus(chunks.hits, focus)[:window]
        chunks.params = {  # what retrieval ran with, the focus included
            **chunks.params,
            "focus": {"names": list(focus.names), "strategy": focus.strategy, "weight": focus.weight},
        }
        chunks.diagnostics["focused"] = sum(1 for h in hits if h.extra.get("focus"))
        chunks.hits = hits
        parents = aggregate_parents(hits, kb, top_k, score_of=lambda h: keys[h.chunk.id])
        return ParentResult(parents, chunks)

    def rerank(self, query: str, hits: Sequence[SearchHit], *, top_k: int) -> PipelineResult:
        """Only the post-search stages (threshold, rerank, MMR, per-doc) over a caller's list."""
        cfg = self._config()
        intent, params = self.plan(query, top_k, None, cfg)
        return self._refine(query, list(hits), intent, params, cfg, {})

    def _refine(
        self,
        query: str,
        hits: list[SearchHit],
        intent: QueryIntent,
        params: dict[str, Any],
        cfg: Any,
        timings: dict[str, float],
    ) -> PipelineResult:
        k = params["top_k"]
        rerank_cfg = cfg.rerank
        diag: dict[str, Any] = {"retrieved": len(hits)}
        result = PipelineResult(hits=[], intent=intent, params=params, diagnostics=diag)

        passed = apply_min_similarity(hits, params["thresholds"]["similarity"])
        diag["passed_similarity"] = len(passed)
        if hits and not passed:
            result.message = f"{NO_SIM_PASS}（没有片段达到相似度阈值，请放宽条件）"
            FALLBACKS.labels(kind="similarity_empty").inc()
            log.warning("no chunk met similarity threshold", extra={"intent": intent.value})

        diag["rerank"] = "fused_order"  # said in every response: which order the hits are in
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
                timeout_s=rerank_cfg.timeout_s,  # and never past the request's deadline
            )
            timings["rerank"] = outcome.seconds
            diag.update(
                rerank="reranked" if outcome.reranked else "fused_order",
                reranked=outcome.reranked,
                rerank_candidates=outcome.candidates,
                passed_rerank=outcome.passed,
                fallback=outcome.fallback,
                rerank_error=outcome.error,
                rerank_reason=outcome.reason,  # why the fused order was kept (timeout, busy, …)
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
                result.message = NOTHING_FOUND
        return result

    # -- several KBs -------------------------------------------------------------------------
    def _submit(self, fn: Callable[..., list[SearchHit]], *args: Any) -> Future[list[SearchHit]]:
        """``fn(*args)`` in the pool, in a copy of this context (the request's deadline)."""
        return self._executor().submit(contextvars.copy_context().run, fn, *args)

    def search_groups(self, groups: Sequence[QueryGroup], *, top_k: int) -> list[GroupResult]:
        """Search every (group, KB) in parallel; merge, de-duplicate and rerank per group."""
        cfg = self._config()
        started = time.perf_counter()
        futures: list[list[tuple[str, Future[list[SearchHit]]]]] = []
        plans: list[tuple[QueryIntent, dict[str, Any]]] = []
        for group in groups:
            intent, params = self.plan(group.query, top_k, None, cfg)
            plans.append((intent, params))
            futures.append(
                [
                    # the request's deadline (a context variable) follows each search into the pool
                    (kb.name, self._submit(self._fetch, kb, group.query, params, group.filters))
                    for kb in group.kbs
                ]
            )
        out: list[GroupResult] = []
        for group, (intent, params), pending in zip(groups, plans, futures, strict=True):
            merged: dict[str, SearchHit] = {}
            counts: dict[str, int] = {}
            errors: dict[str, str] = {}
            for kb_name, fut in pending:
                try:
                    hits = fut.result(timeout=_wait_s())
                except TimeoutError:  # the request's deadline passed: answer with the others
                    errors[kb_name] = "检索超时（超过请求的时限），已跳过该知识库"
                    FALLBACKS.labels(kind="kb_timeout").inc()
                    note_degraded("search", "timeout")
                    continue
                except Exception as exc:  # one failing KB must not sink the group
                    errors[kb_name] = (
                        exc.message if isinstance(exc, ZhiwenError) else f"{type(exc).__name__}: {exc}"
                    )
                    FALLBACKS.labels(kind="kb_error").inc()
                    log.warning("multi-KB search: kb=%s failed: %s", kb_name, errors[kb_name])
                    continue
                counts[kb_name] = len(hits)
                for h in hits:
                    key = f"{kb_name}\x00{h.chunk.id}"
                    if key not in merged or h.score > merged[key].score:
                        merged[key] = replace(h, extra={**h.extra, "kb": kb_name})
            ranked = sorted(merged.values(), key=lambda h: -h.score)
            refined = self._refine(group.query, ranked, intent, params, cfg, {})
            out.append(
                GroupResult(
                    name=group.name,
                    query=group.query,
                    hits=refined.hits,
                    per_kb_counts=counts,
                    errors=errors,
                    params=params,
                    diagnostics=refined.diagnostics,
                    seconds=time.perf_counter() - started,
                )
            )
        return out

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)


def with_call_args(
    params: dict[str, Any],
    cfg: Any,
    *,
    fusion: str | None = None,
    alpha: float | None = None,
    candidates: int | None = None,
) -> dict[str, Any]:
    """``params`` with one call's own fusion, dense weight and candidates (None: unchanged).

    The branch weights follow as in :class:`~zhiwen.retrieve.hybrid.HybridRetriever`: RRF without
    an ``alpha`` weighs by the settings' ``bm25_weight``/``dense_weight``, otherwise ``(1-α, α)``.
    """
    if fusion is None and alpha is None and candidates is None:
        return params
    out = dict(params)
    if candidates is not None:
        out["candidates"] = candidates
    if fusion is None and alpha is None:
        return out
    out["fusion"] = fusion or out["fusion"]
    if alpha is not None:
        out["dense_alpha"] = alpha
    if out["fusion"] == "rrf" and alpha is None:
        out["weights"] = [cfg.retrieval.bm25_weight, cfg.retrieval.dense_weight]
    else:
        out["weights"] = list(alpha_weights(out["dense_alpha"]))
    return out


def _wait_s() -> float | None:
    """How long to wait for one more KB's search: what is left of the request's deadline."""
    deadline = current_deadline()
    return None if deadline is None else max(0.0, deadline.remaining())
