"""The embedding side of a knowledge base: its embedder, the home's embedding cache, vectors.

Mixed into :class:`~zhiwen.kb.knowledge_base.KnowledgeBase`. Whether a KB writes lexical-first
(two phases) or is declared text-only, the cached vectors an index run starts from, the vectors
a fill commits, the dense coverage, and the passages a curation change embeds at once
(:meth:`KBEmbedding.embed_passages`: through the same cache, so an unchanged text never costs a
second model call).

Example::

    >>> kb.lexical_first, kb.vectors_enabled
    (True, True)
    >>> kb.embed_passages(["改写后的段落"]).shape
    (1, 384)
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from zhiwen.config import Settings
from zhiwen.documents import Chunk
from zhiwen.embed.base import Embedder
from zhiwen.kb.config import KBConfig
from zhiwen.kb.lazy_embedder import LazyEmbedder
from zhiwen.store import Store

log = logging.getLogger(__name__)

#: ``kb.json`` ``extra`` key: false declares a text-only KB (:attr:`KBEmbedding.vectors_enabled`)
VECTORS_KEY = "vectors"


class KBEmbedding:
    """Embedder, embedding cache and vectors of a KB (needs ``store``, ``embedder``, ``config``,
    ``settings`` and ``changing`` from the KB)."""

    store: Store
    embedder: Embedder | None
    config: KBConfig
    settings: Settings

    if TYPE_CHECKING:

        def changing(self) -> contextlib.AbstractContextManager[None]: ...

    @property
    def lexical_first(self) -> bool:
        """Whether the store takes chunks without vectors and fills them later (two-phase runs)."""
        return self.store.dim is not None and self.embedder is not None and self.store.features.lexical_first

    @property
    def vectors_enabled(self) -> bool:
        """False when the KB is declared text-only (``kb.json`` ``extra.vectors = false``: an app
        whose quality the vectors do not change, see :mod:`zhiwen.appkit.setup`). Such a KB keeps
        its embedder, so turning vectors on later needs no rebuild; until then nothing fills its
        vectors and its searches run BM25 alone (no query embedding, no model load)."""
        return self.config.extra.get(VECTORS_KEY, True) is not False

    def real_embedder(self) -> Embedder:
        """The provider itself (its ``name`` keys the embedding cache); the model loads on first use."""
        assert self.embedder is not None
        return self.embedder.get() if isinstance(self.embedder, LazyEmbedder) else self.embedder

    def embedding_cache(self) -> Any:
        """The home's embedding cache (a new connection; close it), or None when off or unusable."""
        from zhiwen.embed import EmbeddingCache, default_cache_dir

        if not self.settings.embedding.cache:
            return None
        try:
            return EmbeddingCache(default_cache_dir(self.settings.home))
        except (OSError, sqlite3.Error) as exc:  # read-only or full disk: index without it
            log.warning("embedding cache unavailable (%s); indexing without it", exc)
            return None

    def cached_vectors(self, chunk_list: list[Chunk]) -> dict[str, np.ndarray]:
        """Content hash → cached vector for the chunks of this run (for phase 1)."""
        cache = self.embedding_cache()
        if cache is None:
            return {}
        try:
            found = cache.get_many([c.content_hash for c in chunk_list], model=self.real_embedder().name)
        finally:
            cache.close()
        return {h: v for h, v in found.items() if v.shape[0] == self.store.dim}

    def set_vectors(self, ids: Sequence[str], vectors: np.ndarray) -> int:
        """Store vectors of existing chunks (hold the write lock; see :mod:`zhiwen.kb.dense`)."""
        with self.changing():
            return int(self.store.set_vectors(ids, vectors))

    def dense_coverage(self) -> float | None:
        """Share of chunks that have a vector (None: no vectors in this KB — none possible, or
        declared text-only — or an empty KB)."""
        if self.store.dim is None or not self.vectors_enabled:
            return None
        total = self.store.count()
        return None if total == 0 else min(1.0, self.store.vector_count() / total)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray | None:
        """Passage vectors of ``texts`` with the KB's embedder, through the embedding cache;
        None for a KB without vectors (none possible, or declared text-only)."""
        if self.store.dim is None or self.embedder is None or not self.vectors_enabled:
            return None
        from zhiwen.embed import embed_chunks

        with self._cache() as cache:
            vectors, _ = embed_chunks(
                self.real_embedder(), list(texts), cache, batch_size=self.settings.embedding.batch_size
            )
        return vectors

    @contextlib.contextmanager
    def _cache(self) -> Iterator[Any]:
        cache = self.embedding_cache()
        try:
            yield cache
        finally:
            if cache is not None:
                cache.close()
