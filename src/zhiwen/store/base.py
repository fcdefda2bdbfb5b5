"""The store contract every backend implements (embedded default, PostgreSQL, …).

A store holds, per knowledge base:

* chunks (searchable), each with its jieba tokens and (optionally) an embedding vector;
* parent documents (not searched; returned whole by parent aggregation).

It answers two primitive queries, each already restricted by a metadata :class:`Filter`:
BM25 over tokens and nearest neighbours over vectors (cosine on L2-normalised vectors; a
higher score is better). Fusion, rerank and everything above live in :mod:`zhiwen.retrieve`,
so a new backend only has to get these right; ``tests/store/test_conformance.py`` checks it.

Writes are atomic: :meth:`Store.upsert` and :meth:`Store.delete` either apply completely or not
at all, so a failed index run never leaves a half-written knowledge base.

Opening a backend by URL is :func:`zhiwen.store.open_store` (:mod:`zhiwen.store.factory`):
this module is only the contract, so every backend can import it without a cycle.

Example::

    store: Store = open_store("embedded", path=kb_dir, name="manual", dim=384)
    store.upsert(chunks, tokens=[tok.tokenize(c.text) for c in chunks], vectors=vecs, parents=docs)
    ids_scores = store.search_text(tok.tokenize_query("知识库"), k=10)
    store.search_vector(query_vec, k=10, filters=parse_filters({"category": "meat_dish"}))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from zhiwen.documents import Chunk, Document
from zhiwen.store.filters import Filter

# (chunk id, score) pairs, best first
Scored = list[tuple[str, float]]


@runtime_checkable
class Store(Protocol):
    @property
    def dim(self) -> int | None:
        """Vector dimension, or None for a store without vectors."""
        ...

    def upsert(
        self,
        chunks: Sequence[Chunk],
        *,
        tokens: Sequence[Sequence[str]],
        vectors: np.ndarray | None = None,
        parents: Sequence[Document] = (),
    ) -> None:
        """Insert or replace chunks (by id) and parent documents, atomically.

        Document-level replace: for every ``doc_id`` present in ``chunks``, the chunks of that
        document that are *not* in this batch are removed, so re-indexing a changed source
        leaves no stale sections behind and re-indexing an unchanged one is a no-op.
        ``vectors`` has shape ``(len(chunks), dim)``, rows L2-normalised, or is None for a
        store created without vectors.
        """
        ...

    def delete(self, *, chunk_ids: Sequence[str] = (), doc_ids: Sequence[str] = ()) -> int:
        """Delete chunks by id and whole documents (chunks + parent) by doc id; returns chunks removed."""
        ...

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        """Chunks in the order of ``ids``; unknown ids are skipped."""
        ...

    def get_parents(self, ids: Sequence[str]) -> list[Document]:
        """Parent documents in the order of ``ids``; unknown ids are skipped."""
        ...

    def doc_ids(self) -> set[str]: ...

    def count(self) -> int:
        """Number of chunks."""
        ...

    def search_text(self, tokens: Sequence[str], k: int, filters: Filter | None = None) -> Scored:
        """BM25 over chunk tokens; only chunks matching ``filters``; only positive scores."""
        ...

    def search_vector(self, vector: np.ndarray, k: int, filters: Filter | None = None) -> Scored:
        """Cosine nearest neighbours; only chunks matching ``filters``."""
        ...

    def stats(self) -> dict[str, Any]:
        """Backend name, counts, sizes: shown by ``zhiwen kb info`` and the API."""
        ...

    def close(self) -> None: ...
