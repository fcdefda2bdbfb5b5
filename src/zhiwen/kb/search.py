"""The read side of a knowledge base: search, parent aggregation, filter checks, lookups.

Mixed into :class:`~zhiwen.kb.knowledge_base.KnowledgeBase`; every read holds the KB's
in-process read lock, so a write of this process never changes the store under a search.

Example::

    >>> kb.search("怎么安装", mode="hybrid", top_k=5, filters={"lang": "zh"})
    >>> kb.search_parents("配置大模型", top_k=3)
    >>> kb.check_filters({"langg": "zh"})        # InvalidParameter: 未知的过滤字段：langg（可用字段：lang…）
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from zhiwen.curation import Curation
from zhiwen.documents import Chunk, Document, ParentHit, SearchHit
from zhiwen.errors import InvalidParameter
from zhiwen.kb.locks import RWLock
from zhiwen.retrieve.feedback import FeedbackParams
from zhiwen.retrieve.hybrid import BM25Params, HybridRetriever, RetrievalResult
from zhiwen.retrieve.parents import DEFAULT_PARENT_TOP_K, aggregate_parents, chunk_window
from zhiwen.store import Store
from zhiwen.store.filters import Filter, check_filter_fields, parse_filters


class KBSearch:
    """Search methods of a KB (needs ``store``, ``retriever`` and ``_rw`` from the KB)."""

    store: Store
    retriever: HybridRetriever
    curation: Curation
    _rw: RWLock

    def embed_query(self, query: str) -> np.ndarray:
        return self.retriever.embed_query(query)

    def search(
        self,
        query: str,
        *,
        mode: str = "hybrid",
        top_k: int = 10,
        filters: Filter | Mapping[str, Any] | None = None,
        candidates: int | None = None,
        fusion: str | None = None,
        rrf_k: int | None = None,
        weights: tuple[float, float] | None = None,
        query_vector: np.ndarray | None = None,
        alpha: float | None = None,
        feedback: FeedbackParams | None = None,
        bm25_params: BM25Params | None = None,
    ) -> list[SearchHit]:
        """BM25 / dense / hybrid search. A failing or empty branch leaves the other to answer.

        ``weights`` = (bm25, dense); ``alpha`` = dense weight of weighted fusion (default from
        settings). ``query_vector`` skips the query embedding. ``feedback`` and ``bm25_params``
        = ``(k1, b)`` override the settings' for this search (a KB's tuning, through the
        pipeline). This is the :class:`~zhiwen.retrieve.searchable.Searchable` search.
        """
        return self.search_detailed(
            query,
            mode=mode,
            top_k=top_k,
            filters=filters,
            candidates=candidates,
            fusion=fusion,
            rrf_k=rrf_k,
            weights=weights,
            query_vector=query_vector,
            alpha=alpha,
            feedback=feedback,
            bm25_params=bm25_params,
        ).hits

    @property
    def vectors_enabled(self) -> bool:  # the KB's own answer (KnowledgeBase)
        return True

    def _mode(self, mode: str | None) -> str | None:
        """A text-only KB answers ``hybrid`` with BM25 alone (no query embedding, no model load)
        and refuses ``dense`` with a reason (callers that ask for a dense branch expect the 422)."""
        if self.vectors_enabled:
            return mode
        if mode == "dense":
            name = getattr(self, "name", "")
            raise InvalidParameter(
                f"knowledge base {name!r} is text-only (no vectors)",
                message=f"知识库「{name}」只建了文本索引（默认不计算向量），不能做向量检索",
            )
        return "bm25"

    def search_detailed(self, query: str, **kwargs: Any) -> RetrievalResult:
        """:meth:`search` with per-stage timings and branch status (see ``RetrievalResult``)."""
        kwargs["mode"] = self._mode(kwargs.get("mode"))
        with self._rw.read():
            if kwargs.get("filters"):
                kwargs["filters"] = self.check_filters(kwargs["filters"])
            result = self.retriever.run_detailed(query, **kwargs)
        self.curation.note_hits(h.id for h in result.hits)
        return result

    def check_filters(self, filters: Filter | Mapping[str, Any] | None) -> Filter:
        """``filters`` parsed, every field one this KB has (else a 422 listing the known fields).

        A misspelled field would otherwise match nothing and return an empty 200. An empty KB
        (nothing to filter yet) accepts any field.
        """
        flt = parse_filters(filters)
        if not flt:
            return flt
        known = self.store.metadata_fields()
        if not known and self.store.count() == 0:
            return flt
        return check_filter_fields(flt, known)

    def search_parents(
        self,
        query: str,
        *,
        top_k: int = DEFAULT_PARENT_TOP_K,
        mode: str = "hybrid",
        filters: Filter | Mapping[str, Any] | None = None,
        chunk_k: int | None = None,
    ) -> list[ParentHit]:
        """Children → parents ranked by matched-children count, then best score (parent-document aggregation).

        ``chunk_k`` chunks are aggregated (default :func:`~zhiwen.retrieve.parents.chunk_window`:
        ``max(3 × top_k, 10)``).
        """
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise InvalidParameter(
                f"top_k must be a positive integer, got {top_k!r}", message="top_k 必须是正整数"
            )
        k = chunk_k or chunk_window(top_k)
        with self._rw.read():
            flt = self.check_filters(filters) if filters else None
            hits = self.retriever.run(query, mode=self._mode(mode), top_k=k, filters=flt)
            parents = aggregate_parents(hits, self.store, top_k)
        self.curation.note_hits(h.id for p in parents for h in p.matched_chunks)
        return parents

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        with self._rw.read():
            return self.store.get_chunks(list(ids))

    def get_parents(self, ids: Sequence[str]) -> list[Document]:
        with self._rw.read():
            return self.store.get_parents(list(ids))
