"""The store contract every backend implements (embedded default, PostgreSQL, …).

A store holds, per knowledge base:

* chunks (searchable), each with its jieba tokens and (optionally) an embedding vector;
* parent documents (not searched; returned whole by parent aggregation).

It answers two primitive queries, each already restricted by a metadata :class:`Filter`:
BM25 over tokens and nearest neighbours over vectors (cosine on L2-normalised vectors; a
higher score is better). Fusion, rerank and everything above live in :mod:`zhiwen.retrieve`,
so a new backend only has to get these right; ``tests/store/test_conformance.py`` checks it.

Writes are atomic: :meth:`Store.upsert`, :meth:`Store.put_chunks`, :meth:`Store.set_tokens`,
:meth:`Store.set_vectors` and :meth:`Store.delete` either apply completely or not at all, so a
failed index run never leaves a half-written knowledge base (Qdrant, which has no
transactions, writes idempotently: a re-run repairs).

Vectors are optional per chunk ("lexical-first" indexing): a store created with ``dim`` accepts
``upsert(..., vectors=None)``; those chunks are BM25-searchable at once (in this and in every
other process that opens the same store) and get their vectors later with
:meth:`Store.set_vectors` (:meth:`Store.missing_vector_ids` says which still lack one).
:meth:`Store.search_vector` only ever sees chunks that have a vector; the dense coverage of a
knowledge base is ``vector_count() / count()``.

What a backend offers beyond the primitives it declares in :attr:`Store.features`
(:class:`StoreFeatures`): BM25 parameters and per-term weights in :meth:`Store.search_text`,
and lexical-first writes. Callers read the declaration; they never probe a backend's methods.

Opening a backend by URL is :func:`zhiwen.store.open_store` (:mod:`zhiwen.store.factory`):
this module is only the contract, so every backend can import it without a cycle.

Example::

    store: Store = open_store("embedded", path=kb_dir, name="manual", dim=384)
    store.upsert(chunks, tokens=[tok.tokenize(c.text) for c in chunks], vectors=vecs, parents=docs)
    ids_scores = store.search_text(tok.tokenize_query("知识库"), k=10)
    store.search_vector(query_vec, k=10, filters=parse_filters({"category": "meat_dish"}))

    # lexical-first: searchable by BM25 now, vectors filled behind, resumably
    store.upsert(chunks, tokens=token_lists, vectors=None, parents=docs)
    while todo := store.missing_vector_ids(limit=64):
        store.set_vectors(todo, embedder.embed([c.text for c in store.get_chunks(todo)]))
    store.build_index(background=True)

    # chunk-level writes (curation): one chunk and its question rows, the rest of its document kept
    store.put_chunks([edited, question_row], tokens=token_lists, vectors=vecs, remove=["doc#3::q1"])
    store.set_tokens(store.list_chunk_ids(["doc"]), new_token_lists)

    # one writer per knowledge base across processes, around a whole index run
    with store.writer_lock(wait=False):          # KnowledgeBaseBusy when another run writes
        ...
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from zhiwen.documents import Chunk, Document
from zhiwen.store.filters import Filter

# (chunk id, score) pairs, best first
Scored = list[tuple[str, float]]


@dataclass(frozen=True, slots=True)
class StoreFeatures:
    """What a backend offers beyond the primitives every store answers: declared, never probed.

    * ``bm25_params`` — :meth:`Store.search_text` honours ``k1``/``b`` (a KB's tuned BM25);
      without it a search runs with the backend's own parameters.
    * ``term_weights`` — :meth:`Store.search_text` honours ``weights`` (one per token), which
      pseudo-relevance feedback's expanded query needs; without it lexical feedback is skipped.
    * ``lexical_first`` — :meth:`Store.upsert` takes ``vectors=None`` and :meth:`Store.set_vectors`
      / :meth:`Store.missing_vector_ids` fill them in later (two-phase indexing); without it a
      knowledge base embeds everything first and writes once.

    Example::

        class MyStore:
            features = StoreFeatures(bm25_params=True, term_weights=True)

        if store.features.term_weights:
            store.search_text(tokens, k=10, weights=[1.0, 0.4])
    """

    bm25_params: bool = False
    term_weights: bool = False
    lexical_first: bool = True


@runtime_checkable
class Store(Protocol):
    @property
    def features(self) -> StoreFeatures:
        """What this backend offers beyond the primitives (see :class:`StoreFeatures`)."""
        ...

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
        ``vectors`` has shape ``(len(chunks), dim)`` (normalised here), or is None: then the
        chunks are stored without vectors (lexical-first). Re-upserting an unchanged chunk with
        ``vectors=None`` keeps the vector it already has; a chunk whose content changed loses it.
        """
        ...

    def put_chunks(
        self,
        chunks: Sequence[Chunk],
        *,
        tokens: Sequence[Sequence[str]],
        vectors: np.ndarray | None = None,
        parents: Sequence[Document] = (),
        remove: Sequence[str] = (),
    ) -> None:
        """Insert or replace ``chunks`` by id and delete the chunks ``remove``, in one write.

        Chunk-level, unlike :meth:`upsert`: the other chunks of their documents stay (a curated
        chunk, its question rows, a chunk added by hand). Vectors as in :meth:`upsert`; an id
        both put and in ``remove`` is put. Embedded and PostgreSQL: one transaction; Qdrant:
        validated first, then written idempotently.
        """
        ...

    def set_tokens(self, ids: Sequence[str], tokens: Sequence[Sequence[str]]) -> int:
        """Replace the lexical tokens of existing chunks; text, metadata and vectors stay.

        For re-tokenising a knowledge base (a dictionary change) without re-embedding it. Unknown
        ids are skipped; returns the number of chunks found. A repeated id keeps its last tokens.
        """
        ...

    def list_chunk_ids(self, doc_ids: Sequence[str] | None = None) -> list[str]:
        """Ids of the chunks of the documents ``doc_ids`` (None: every chunk); order unspecified."""
        ...

    def set_vectors(self, ids: Sequence[str], vectors: np.ndarray) -> int:
        """Fill (or replace) the vectors of existing chunks, in one transaction.

        ``vectors`` has shape ``(len(ids), dim)`` and is L2-normalised here; unknown ids are
        ignored. Returns the number of chunks updated. Raises ``InvalidParameter`` for a store
        without vectors or a wrong shape / non-finite values (nothing is written then).
        """
        ...

    def missing_vector_ids(self, limit: int | None = None) -> list[str]:
        """Ids of chunks that still have no vector, in insertion order (at most ``limit``)."""
        ...

    def vector_count(self) -> int:
        """Number of chunks that have a vector. Cheap: fine to call once per search.

        Embedded: from the synced in-memory index (O(1) per write generation); PostgreSQL: one
        row (``stats.nv``); Qdrant: an exact filtered count, cached until the next write.
        """
        ...

    def get_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors (float32, L2-normalised like :meth:`search_vector` uses) by chunk id.

        Ids that are unknown or have no vector yet are absent from the result.
        """
        ...

    def metadata_fields(self) -> set[str]:
        """Metadata keys that have a non-null value in at least one chunk (cheap, cached).

        Used to reject a filter on a field the knowledge base does not have
        (:func:`zhiwen.store.filters.check_filter_fields`). Embedded: exactly the live chunks'
        keys; PostgreSQL and Qdrant: recorded by writes, so keys that only deleted chunks had may
        remain (a filter on them is then accepted and matches nothing).
        """
        ...

    def build_index(self, *, background: bool = True) -> None:
        """Bring the vector search index (e.g. the embedded store's HNSW graph) up to date.

        Call it after an index run: ``background=True`` returns at once and builds in a daemon
        thread (searches use exact search until it is ready); ``background=False`` builds in
        the caller's thread (interruptible between batches). A no-op for backends whose index
        the server maintains (PostgreSQL, Qdrant) and for stores too small to need one.
        ``stats()["vector_index"]`` says ``"ready"``, ``"building"``, ``"pending"`` or
        ``"not_needed"``.
        """
        ...

    def writer_lock(
        self, *, wait: bool = True, timeout: float | None = None, on_wait: Callable[[], None] | None = None
    ) -> AbstractContextManager[None]:
        """The knowledge base's writer lock: one writer across processes, held around an index run.

        Exclusive between processes and threads, re-entrant in the thread that holds it,
        released on exit and when the holder dies (``kill -9`` included). ``wait=False`` raises
        :class:`~zhiwen.errors.KnowledgeBaseBusy` (3008, HTTP 409) at once when another writer
        has it; ``wait=True`` calls ``on_wait()`` once before blocking (to print "waiting"),
        then waits at most ``timeout`` seconds (None: no limit) and raises the same error.
        Embedded and Qdrant Edge: a file lock in the store's directory; PostgreSQL: a session
        advisory lock on a dedicated connection; a Qdrant server: nothing (the KB layer's file
        lock covers one machine). See :mod:`zhiwen.store._writer_lock`. It excludes writers
        that take it; it does not block :meth:`upsert` & co. by itself.
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
        """BM25 over chunk tokens; only chunks matching ``filters``; only positive scores.

        ``k1``/``b`` (BM25's parameters) and ``weights`` (one per token) may be given only where
        :attr:`features` says the backend honours them (``bm25_params``, ``term_weights``);
        elsewhere they raise :class:`~zhiwen.errors.InvalidParameter`.
        """
        ...

    def search_vector(self, vector: np.ndarray, k: int, filters: Filter | None = None) -> Scored:
        """Cosine nearest neighbours; only chunks matching ``filters``."""
        ...

    def stats(self) -> dict[str, Any]:
        """Backend name, counts, sizes: shown by ``zhiwen kb info`` and the API."""
        ...

    def close(self) -> None: ...
