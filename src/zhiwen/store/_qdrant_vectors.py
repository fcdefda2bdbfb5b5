"""The Qdrant store's dense vectors filled after the text (lexical-first indexing).

:class:`QdrantVectors` is mixed into :class:`~zhiwen.store.qdrant.QdrantStore`. A chunk indexed
without a vector is a point with only the ``bm25`` sparse vector; :meth:`~QdrantVectors.set_vectors`
adds ``dense`` with Qdrant's ``update_vectors`` (payload and sparse vector stay), and the
``has_vector`` condition finds the points still without one. Insertion order is the payload's
``seq`` (a counter in the meta point). The metadata keys are listed in the meta point by every
upsert (a knowledge base written before that is scanned once).

Example::

    store.upsert(chunks, tokens=token_lists, vectors=None)
    todo = store.missing_vector_ids(limit=64)
    store.set_vectors(todo, embed([c.text for c in store.get_chunks(todo)]))
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from zhiwen.store._qdrant_codec import DENSE, Clause, Engine, HasVector, point_id
from zhiwen.store._validate import check_vector_rows
from zhiwen.store._vectors import normalize_rows

_WRITE_BATCH = 512
_HAS_DENSE = Clause(must=[HasVector(DENSE)])
_NO_DENSE = Clause(must_not=[HasVector(DENSE)])
# what makes two versions of a chunk the same content (its stored vector stays valid)
_CONTENT_KEYS = ("id", "doc_id", "parent_id", "title", "text", "metadata", "dl")
# a count of vectors by another process's writes (server engine) may be this old
_SHARED_COUNT_TTL_S = 1.0
_LOCAL_SCHEME = "qdrant+local://"


class QdrantVectors:
    """Vector fills, counts and reads of :class:`~zhiwen.store.qdrant.QdrantStore`."""

    if TYPE_CHECKING:  # provided by QdrantStore
        engine: Engine
        url: str
        _dim: int | None
        _meta: dict[str, Any]
        _writes: int
        _vector_count: tuple[int, float, int]

    # -- contract: vectors filled after the text (lexical-first) ---------------------------
    def set_vectors(self, ids: Sequence[str], vectors: np.ndarray) -> int:
        """Set the dense vector of existing chunks (unknown ids skipped); the points' other
        vectors and payloads stay. Not one transaction (Qdrant has none), but idempotent."""
        ids, vecs = check_vector_rows(ids, vectors, self._dim)
        if not ids:
            return 0
        pids = [point_id(i) for i in ids]
        existing = {r.id for r in self.engine.retrieve("chunks", pids)}
        items = [(pid, vecs[i].tolist()) for i, pid in enumerate(pids) if pid in existing]
        for start in range(0, len(items), _WRITE_BATCH):
            self.engine.update_dense("chunks", items[start : start + _WRITE_BATCH])
        self._writes += 1
        self.engine.flush()
        return len(items)

    def missing_vector_ids(self, limit: int | None = None) -> list[str]:
        """Chunks without a dense vector, in insertion order (the payload's ``seq``)."""
        if self._dim is None:
            return []
        recs = list(self.engine.scroll("chunks", _NO_DENSE, ["id", "seq"]))
        recs.sort(key=lambda r: (int(r.payload.get("seq", -1)), str(r.payload.get("id", ""))))
        ids = [str(r.payload["id"]) for r in recs if "id" in r.payload]
        return ids if limit is None else ids[: max(0, int(limit))]

    def vector_count(self) -> int:
        """Chunks with a dense vector: Qdrant's exact count (~3 ms per 20k points), cached until
        this store writes (and for at most a second on a server other processes write to)."""
        if self._dim is None:
            return 0
        writes, at, n = self._vector_count
        shared = not self.url.startswith(_LOCAL_SCHEME)
        if writes == self._writes and not (shared and time.monotonic() - at > _SHARED_COUNT_TTL_S):
            return n
        n = self.engine.count("chunks", _HAS_DENSE)
        self._vector_count = (self._writes, time.monotonic(), n)
        return n

    def get_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored dense vectors (L2-normalised float32); ids without one are absent."""
        if self._dim is None or not ids:
            return {}
        pids = [point_id(i) for i in dict.fromkeys(ids)]
        recs = [r for r in self.engine.retrieve("chunks", pids, with_dense=True) if r.dense is not None]
        if not recs:
            return {}
        matrix = normalize_rows(np.asarray([r.dense for r in recs], dtype=np.float32))
        return {str(r.payload["id"]): matrix[i] for i, r in enumerate(recs)}

    def metadata_fields(self) -> set[str]:
        """Metadata keys with a non-null value, as recorded by writes in the meta point.

        Keys only deleted chunks had stay listed: filtering on them is allowed and matches nothing.
        """
        return set(self._known_keys())

    def _known_keys(self) -> list[str]:
        keys = self._meta.get("keys")
        if keys is None:  # a knowledge base written before the meta point listed them: once
            found: set[str] = set()
            for rec in self.engine.scroll("chunks", None, ["metadata"]):
                metadata = json.loads(rec.payload.get("metadata") or "{}")
                found.update(k for k, v in metadata.items() if v is not None)
            keys = self._meta["keys"] = sorted(found)
        return list(keys)

    def build_index(self, *, background: bool = True) -> None:
        """``background=False``: build the HNSW graph over the filled vectors now (Qdrant's
        optimizer; minutes at 100k points). ``background=True`` leaves it to the optimizer: a
        server runs it by itself, and Edge searches unindexed points exactly meanwhile."""
        if not background:
            self.engine.optimize()
            self.engine.flush()


def kept_dense(prev: Any, payload: dict[str, Any]) -> list[float] | None:
    """The stored dense vector of ``prev`` when its content equals the new ``payload``."""
    if prev is None or prev.dense is None:
        return None
    if any(prev.payload.get(k) != payload.get(k) for k in _CONTENT_KEYS):
        return None
    return list(prev.dense)
