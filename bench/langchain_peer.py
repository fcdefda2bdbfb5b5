"""The seed-002 peer stack: LangChain ``EnsembleRetriever`` over ``BM25Retriever`` + FAISS.

``BM25Retriever`` (rank-bm25, jieba ``lcut`` preprocessing) and a FAISS vector store over the
**same** vectors zhiwen uses — precomputed vectors are wrapped in an ``Embeddings`` object, so
LangChain never re-embeds a passage — fused by ``EnsembleRetriever`` with weights 0.5/0.5
and k=10 per retriever, exactly as seed 002 wires it.

Query vectors can be given too (:meth:`LangChainPeer.set_query_vectors`): then a query costs
LangChain no model call either, and its latency is comparable with zhiwen's search-only latency.

Example::

    peer = LangChainPeer(ids, texts, vectors, query_fn=embedder.embed_query)
    peer.search("国足主教练是谁")  # → ["rgbzh_…", …] passage ids, best first

Needs the ``bench`` extra: ``pip install -e '.[bench]'``.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

try:  # langchain >= 1.0 moved the classic retrievers out of the main package
    from langchain_classic.retrievers import EnsembleRetriever
except ImportError:  # pragma: no cover - langchain < 1.0
    from langchain.retrievers import EnsembleRetriever  # type: ignore[no-redef]

import faiss  # noqa: F401  (imported here so its load time is not counted as index build)
import jieba

with warnings.catch_warnings():  # langchain-community announces its own sunset on import
    warnings.simplefilter("ignore", DeprecationWarning)
    from langchain_community.retrievers import BM25Retriever
    from langchain_community.vectorstores import FAISS
from langchain_core.embeddings import Embeddings

jieba.setLogLevel(logging.WARNING)


class PrecomputedEmbeddings(Embeddings):
    """LangChain ``Embeddings`` answering from vectors computed beforehand.

    Passages are looked up by text; queries by text first, then ``query_fn`` (a real model call).
    """

    def __init__(
        self,
        passages: Mapping[str, np.ndarray],
        query_fn: Callable[[str], np.ndarray] | None = None,
    ) -> None:
        self._passages = passages
        self._queries: dict[str, np.ndarray] = {}
        self._query_fn = query_fn

    def set_query_vectors(self, vectors: Mapping[str, np.ndarray]) -> None:
        self._queries = dict(vectors)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        missing = [t for t in texts if t not in self._passages]
        if missing:
            raise KeyError(f"{len(missing)} passages have no precomputed vector, e.g. {missing[0][:40]!r}")
        return [np.asarray(self._passages[t], dtype=np.float32).tolist() for t in texts]

    def embed_query(self, text: str) -> list[float]:
        vec = self._queries.get(text)
        if vec is None:
            if self._query_fn is None:
                raise KeyError(f"no vector for query {text[:40]!r} and no query_fn")
            vec = self._query_fn(text)
        return np.asarray(vec, dtype=np.float32).tolist()


class LangChainPeer:
    """BM25Retriever(jieba.lcut) + FAISS, fused by EnsembleRetriever 0.5/0.5, k=10 each."""

    def __init__(
        self,
        ids: Sequence[str],
        texts: Sequence[str],
        vectors: np.ndarray,
        *,
        query_fn: Callable[[str], np.ndarray] | None = None,
        k: int = 10,
        weights: tuple[float, float] = (0.5, 0.5),
    ) -> None:
        if len(ids) != len(texts) or len(texts) != len(vectors):
            raise ValueError("ids, texts and vectors must have the same length")
        self.k = k
        self.embeddings = PrecomputedEmbeddings(dict(zip(texts, vectors, strict=True)), query_fn)
        metadatas = [{"id": i} for i in ids]
        jieba.initialize()  # the dictionary load (~1 s) is a one-off, not index build time
        start = time.perf_counter()
        bm25 = BM25Retriever.from_texts(list(texts), metadatas=metadatas, preprocess_func=jieba.lcut, k=k)
        self.bm25_build_seconds = time.perf_counter() - start
        start = time.perf_counter()
        store = FAISS.from_embeddings(
            list(zip(texts, vectors.astype(np.float32).tolist(), strict=True)),
            embedding=self.embeddings,
            metadatas=metadatas,
        )
        self.faiss_build_seconds = time.perf_counter() - start
        self.bm25 = bm25
        self.vectorstore = store
        self.ensemble = EnsembleRetriever(
            retrievers=[bm25, store.as_retriever(search_kwargs={"k": k})], weights=list(weights)
        )

    @property
    def build_seconds(self) -> float:
        return self.bm25_build_seconds + self.faiss_build_seconds

    def set_query_vectors(self, vectors: Mapping[str, np.ndarray]) -> None:
        """Query text → vector; those queries then cost no model call."""
        self.embeddings.set_query_vectors(vectors)

    def search(self, query: str) -> list[str]:
        """Passage ids, best first (up to 2k: the ensemble returns the union of both lists)."""
        docs: list[Any] = self.ensemble.invoke(query)
        return [d.metadata["id"] for d in docs]

    def bm25_only(self, query: str) -> list[str]:
        return [d.metadata["id"] for d in self.bm25.invoke(query)]
