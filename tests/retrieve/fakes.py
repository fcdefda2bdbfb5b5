"""A tiny in-memory :class:`zhiwen.store.base.Store` for retrieval unit tests.

Scores are simple and exact (term-frequency overlap for "BM25", dot product for vectors) so tests
can predict rankings. ``fail_text`` / ``fail_vector`` make a branch raise; ``calls`` records
what was asked.

:class:`FakeStore` is the plainest store the contract allows: no BM25 parameters, no term
weights, one-phase writes (``features``), and it gives no vector back (``get_vectors`` → ``{}``),
so pseudo-relevance feedback has nothing to work with; :class:`FeedbackFakeStore` offers it all.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from zhiwen.documents import Chunk, Document
from zhiwen.store.base import StoreFeatures
from zhiwen.store.filters import Filter

Scored = list[tuple[str, float]]


class FakeStore:
    features = StoreFeatures(bm25_params=False, term_weights=False, lexical_first=False)

    def __init__(self, dim: int | None = 4) -> None:
        self._dim = dim
        self.chunks: dict[str, Chunk] = {}
        self.tokens: dict[str, list[str]] = {}
        self.vectors: dict[str, np.ndarray] = {}
        self.parents: dict[str, Document] = {}
        self.fail_text: BaseException | None = None
        self.fail_vector: BaseException | None = None
        self.fail_upsert: BaseException | None = None
        self.calls: list[tuple[str, Any]] = []
        self.closed = False

    @property
    def dim(self) -> int | None:
        return self._dim

    def upsert(
        self,
        chunks: Sequence[Chunk],
        *,
        tokens: Sequence[Sequence[str]],
        vectors: np.ndarray | None = None,
        parents: Sequence[Document] = (),
    ) -> None:
        self.calls.append(("upsert", len(chunks)))
        if self.fail_upsert is not None:
            raise self.fail_upsert
        batch_docs = {c.doc_id for c in chunks}
        batch_ids = {c.id for c in chunks}
        for cid in [cid for cid, c in self.chunks.items() if c.doc_id in batch_docs and cid not in batch_ids]:
            self._drop(cid)
        for i, c in enumerate(chunks):
            self.chunks[c.id] = c
            self.tokens[c.id] = list(tokens[i])
            if vectors is not None:
                self.vectors[c.id] = np.asarray(vectors[i], dtype=np.float32)
        for p in parents:
            self.parents[p.id] = p

    def _drop(self, cid: str) -> None:
        self.chunks.pop(cid, None)
        self.tokens.pop(cid, None)
        self.vectors.pop(cid, None)

    def delete(self, *, chunk_ids: Sequence[str] = (), doc_ids: Sequence[str] = ()) -> int:
        gone = {cid for cid in chunk_ids if cid in self.chunks}
        docs = set(doc_ids)
        gone |= {cid for cid, c in self.chunks.items() if c.doc_id in docs}
        for cid in gone:
            self._drop(cid)
        for d in docs:
            self.parents.pop(d, None)
        return len(gone)

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        self.calls.append(("get_chunks", list(ids)))
        return [self.chunks[i] for i in ids if i in self.chunks]

    def get_parents(self, ids: Sequence[str]) -> list[Document]:
        return [self.parents[i] for i in ids if i in self.parents]

    def doc_ids(self) -> set[str]:
        return {c.doc_id for c in self.chunks.values()} | set(self.parents)

    def count(self) -> int:
        return len(self.chunks)

    def _allowed(self, filters: Filter | None) -> list[str]:
        return [cid for cid, c in self.chunks.items() if not filters or filters.matches(c.metadata)]

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
        assert k1 is None and b is None and weights is None, "not in this store's features"
        self.calls.append(("search_text", (list(tokens), k, filters)))
        if self.fail_text is not None:
            raise self.fail_text
        query = set(tokens)
        scored = [
            (cid, float(sum(1 for t in self.tokens[cid] if t in query))) for cid in self._allowed(filters)
        ]
        scored = [(cid, s) for cid, s in scored if s > 0]
        scored.sort(key=lambda x: (-x[1], x[0]))
        return scored[:k]

    def search_vector(self, vector: np.ndarray, k: int, filters: Filter | None = None) -> Scored:
        self.calls.append(("search_vector", (k, filters)))
        if self.fail_vector is not None:
            raise self.fail_vector
        q = np.asarray(vector, dtype=np.float32)
        scored = [
            (cid, float(self.vectors[cid] @ q)) for cid in self._allowed(filters) if cid in self.vectors
        ]
        scored.sort(key=lambda x: (-x[1], x[0]))
        return scored[:k]

    def get_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        return {}  # vectors serve search only here (see the module docstring)

    def vector_count(self) -> int:
        return len(self.vectors)

    def set_vectors(self, ids: Sequence[str], vectors: np.ndarray) -> int:
        known = [(cid, v) for cid, v in zip(ids, vectors, strict=True) if cid in self.chunks]
        for cid, v in known:
            self.vectors[cid] = np.asarray(v, dtype=np.float32)
        return len(known)

    def missing_vector_ids(self, limit: int | None = None) -> list[str]:
        missing = [cid for cid in self.chunks if cid not in self.vectors]
        return missing if limit is None else missing[:limit]

    def metadata_fields(self) -> set[str]:
        return {k for c in self.chunks.values() for k, v in c.metadata.items() if v is not None}

    def build_index(self, *, background: bool = True) -> None:
        return None  # exact search only: nothing to build

    def writer_lock(
        self, *, wait: bool = True, timeout: float | None = None, on_wait: Callable[[], None] | None = None
    ) -> AbstractContextManager[None]:
        return contextlib.nullcontext()  # one process, and the KB's own locks serialise writers

    def stats(self) -> dict[str, Any]:
        return {"backend": "fake", "chunks": len(self.chunks), "documents": len(self.doc_ids())}

    def close(self) -> None:
        self.closed = True


class FakeEmbedder:
    """Maps known words to fixed unit vectors so dense rankings are predictable."""

    name = "fake-4"
    dim = 4

    def __init__(self, vocab: dict[str, int] | None = None) -> None:
        self.vocab = vocab or {}
        self.queries: list[str] = []
        self.fail: BaseException | None = None

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float32)
        for word, axis in self.vocab.items():
            if word in text:
                v[axis] += 1.0
        n = float(np.linalg.norm(v))
        return v / n if n else v

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._vec(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        self.queries.append(text)
        if self.fail is not None:
            raise self.fail
        return self._vec(text)


class SplitTokenizer:
    """Whitespace tokenizer: keeps unit tests independent of jieba's dictionary."""

    def tokenize(self, text: str) -> list[str]:
        return text.lower().split()

    def tokenize_query(self, text: str) -> list[str]:
        return self.tokenize(text)


class FeedbackFakeStore(FakeStore):
    """A FakeStore whose BM25 takes term weights and k1/b, with stored vectors and a vector count.

    "BM25" = Σ_t w_t · tf(t, d) (k1/b recorded, not used), so tests can predict what the RM3
    query's weights do. ``with_vectors`` limits which chunks count as embedded (lexical-first).
    """

    features = StoreFeatures(bm25_params=True, term_weights=True, lexical_first=False)

    def __init__(self, dim: int | None = 4) -> None:
        super().__init__(dim)
        self.with_vectors: set[str] | None = None

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
        self.calls.append(
            ("search_text", (list(tokens), k, filters, k1, b, None if weights is None else list(weights)))
        )
        if self.fail_text is not None:
            raise self.fail_text
        w: dict[str, float] = {}
        for i, t in enumerate(tokens):
            w[t] = w.get(t, 0.0) + (1.0 if weights is None else float(weights[i]))
        scored = [
            (cid, float(sum(w.get(t, 0.0) for t in self.tokens[cid]))) for cid in self._allowed(filters)
        ]
        scored = [(cid, s) for cid, s in scored if s > 0]
        scored.sort(key=lambda x: (-x[1], x[0]))
        return scored[:k]

    def get_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        self.calls.append(("get_vectors", list(ids)))
        return {i: self.vectors[i] for i in ids if i in self.vectors and self._embedded(i)}

    def _embedded(self, cid: str) -> bool:
        return self.with_vectors is None or cid in self.with_vectors

    def vector_count(self) -> int:
        return sum(1 for cid in self.vectors if self._embedded(cid))
