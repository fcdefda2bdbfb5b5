"""The store as a KB's search sees it: question rows fold into their chunk, queries take synonyms.

:class:`CuratedStore` wraps a KB's :class:`~zhiwen.store.base.Store` for its
:class:`~zhiwen.retrieve.hybrid.HybridRetriever`, so every caller of the KB's search — the
retrieval pipeline, the apps, ``/search`` — gets the same behaviour without knowing of it:

* **questions** — a chunk's question is a row of its own (``<chunk id>::q<n>``, its own tokens
  and vector); a hit on it counts as a hit on the chunk, at the best score of the two, in each
  branch before fusion (so BM25 and dense agree on ids). When folding leaves a branch short of
  its ``k`` candidates, it asks the store again for twice as many;
* **synonyms** — :meth:`~zhiwen.curation.lexicon.Lexicon.expand` adds the other terms of a
  query term's group to the lexical query (weighted where the store honours term weights).

Everything else is the wrapped store's. A KB with neither questions nor synonyms searches
exactly as before (the same calls, the same results).

Example::

    view = CuratedStore(store, tokenizer, lambda: curation.has_questions)
    HybridRetriever(view, tokenizer, embedder)
    view.search_text(["土豆"], k=10)      # also finds 马铃薯; a question's hit is its chunk's
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from zhiwen.curation.lexicon import KBTokenizer
from zhiwen.curation.model import question_target
from zhiwen.documents import Chunk, Document
from zhiwen.store.base import Scored, Store, StoreFeatures
from zhiwen.store.filters import Filter


def fold_questions(scored: Scored, k: int) -> Scored:
    """Question rows' hits as their chunk's: best score first, each chunk once, at most ``k``."""
    best: dict[str, float] = {}
    for cid, score in scored:
        best.setdefault(question_target(cid) or cid, score)
    return list(best.items())[:k]


class CuratedStore:
    """A :class:`~zhiwen.store.base.Store` with the KB's questions and synonyms in its searches."""

    def __init__(self, store: Store, tokenizer: KBTokenizer, has_questions: Callable[[], bool]) -> None:
        self.inner = store
        self._tokenizer = tokenizer
        self._has_questions = has_questions

    # -- the two searches -------------------------------------------------------------------
    def search_text(
        self,
        tokens: Sequence[str],
        k: int,
        filters: Filter | None = None,
        *,
        k1: float | None = None,
        b: float | None = None,
        weights: Sequence[float] | None = None,
    ) -> Scored:
        expanded, weights = self._tokenizer.lexicon.expand(
            tokens, weights, weighted=self.features.term_weights
        )
        return self._folded(
            lambda n: self.inner.search_text(expanded, n, filters, k1=k1, b=b, weights=weights), k
        )

    def search_vector(self, vector: np.ndarray, k: int, filters: Filter | None = None) -> Scored:
        return self._folded(lambda n: self.inner.search_vector(vector, n, filters), k)

    def _folded(self, search: Callable[[int], Scored], k: int) -> Scored:
        """``search(k)`` with question rows folded; asked again for twice as many when folding
        left it short (question rows took places), so a chunk never loses its place to them."""
        got = search(k)
        if not self._has_questions():
            return got
        folded = fold_questions(got, k)
        if len(folded) < k <= len(got):
            folded = fold_questions(search(2 * k), k)
        return folded

    # -- the rest is the store's ------------------------------------------------------------
    @property
    def features(self) -> StoreFeatures:
        return self.inner.features

    @property
    def dim(self) -> int | None:
        return self.inner.dim

    def upsert(
        self,
        chunks: Sequence[Chunk],
        *,
        tokens: Sequence[Sequence[str]],
        vectors: np.ndarray | None = None,
        parents: Sequence[Document] = (),
    ) -> None:
        self.inner.upsert(chunks, tokens=tokens, vectors=vectors, parents=parents)

    def put_chunks(
        self,
        chunks: Sequence[Chunk],
        *,
        tokens: Sequence[Sequence[str]],
        vectors: np.ndarray | None = None,
        parents: Sequence[Document] = (),
        remove: Sequence[str] = (),
    ) -> None:
        self.inner.put_chunks(chunks, tokens=tokens, vectors=vectors, parents=parents, remove=remove)

    def set_tokens(self, ids: Sequence[str], tokens: Sequence[Sequence[str]]) -> int:
        return self.inner.set_tokens(ids, tokens)

    def list_chunk_ids(self, doc_ids: Sequence[str] | None = None) -> list[str]:
        return self.inner.list_chunk_ids(doc_ids)

    def set_vectors(self, ids: Sequence[str], vectors: np.ndarray) -> int:
        return self.inner.set_vectors(ids, vectors)

    def missing_vector_ids(self, limit: int | None = None) -> list[str]:
        return self.inner.missing_vector_ids(limit)

    def vector_count(self) -> int:
        return self.inner.vector_count()

    def get_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        return self.inner.get_vectors(ids)

    def metadata_fields(self) -> set[str]:
        return self.inner.metadata_fields()

    def build_index(self, *, background: bool = True) -> None:
        self.inner.build_index(background=background)

    def writer_lock(
        self, *, wait: bool = True, timeout: float | None = None, on_wait: Callable[[], None] | None = None
    ) -> AbstractContextManager[None]:
        return self.inner.writer_lock(wait=wait, timeout=timeout, on_wait=on_wait)

    def delete(self, *, chunk_ids: Sequence[str] = (), doc_ids: Sequence[str] = ()) -> int:
        return self.inner.delete(chunk_ids=chunk_ids, doc_ids=doc_ids)

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        return self.inner.get_chunks(ids)

    def get_parents(self, ids: Sequence[str]) -> list[Document]:
        return self.inner.get_parents(ids)

    def doc_ids(self) -> set[str]:
        return self.inner.doc_ids()

    def count(self) -> int:
        return self.inner.count()

    def stats(self) -> dict[str, Any]:
        return self.inner.stats()

    def close(self) -> None:
        """The KB closes its store; the view owns nothing."""
