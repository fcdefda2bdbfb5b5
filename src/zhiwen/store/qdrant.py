"""Qdrant backend of the store contract: dense + BM25 sparse vectors and payload filters.

Switch a deployment with one setting:

* ``ZHIWEN_STORE=qdrant+local:///data/qdrant`` — Qdrant Edge, the Qdrant engine in process
  (:mod:`zhiwen.store._qdrant_edge`; one process per directory); what CI runs;
* ``ZHIWEN_STORE=qdrant://qdrant-0:6333?shards=3&replicas=2`` — a Qdrant server or cluster
  through ``qdrant-client`` (:mod:`zhiwen.store._qdrant_server`); ``deploy/qdrant/`` has a
  3-node compose file.

Both store the same points (:mod:`zhiwen.store._qdrant_codec`): per chunk one point with the
named vectors ``dense`` (cosine HNSW) and ``bm25`` — the chunk's own tokenizer terms as a sparse
vector of BM25 term weights, with the collection's IDF modifier — and a payload with the chunk
and a filter copy of its metadata. BM25 is therefore computed by Qdrant's sparse inverted index,
exact, with the embedded store's formula (k1 = 1.5, b = 0.75, Lucene idf); the avgdl baked into
the weights is the collection's at write time, and all weights are rewritten when the live avgdl
has moved more than 10 % away from it. Parent documents and one meta point (dim, N, total
length, that avgdl) live in a second collection.

Chunks may come without a dense vector (lexical-first indexing) and get it later:
:mod:`zhiwen.store._qdrant_vectors` (``set_vectors``, ``missing_vector_ids``, ``vector_count``).

Qdrant has no multi-point transactions: a batch is validated completely before anything is
written, then written replace-first (stale chunks of its documents, then the batch), and every
write is idempotent, so re-running an interrupted index run repairs it
(:mod:`zhiwen.store._qdrant_write`).

Example::

    store = open_store("qdrant+local:///tmp/qdrant", path=kb_dir, name="manual", dim=384)
    store.upsert(chunks, tokens=token_lists, vectors=vectors, parents=docs)
    store.search_text(["宫保", "鸡丁"], k=10, filters=parse_filters({"difficulty": {"lte": 2}}))
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import numpy as np

from zhiwen.documents import Chunk, Document
from zhiwen.errors import InvalidParameter, StoreUnavailable
from zhiwen.store._qdrant_codec import (
    DENSE,
    META_ID,
    SPARSE,
    Clause,
    Engine,
    Match,
    PointData,
    chunk_from_payload,
    filter_ir,
    parent_from_payload,
    query_sparse,
)
from zhiwen.store._qdrant_vectors import QdrantVectors
from zhiwen.store._qdrant_write import QdrantWrites, pids
from zhiwen.store._validate import check_text_options
from zhiwen.store._writer_lock import WRITER_LOCK_FILE, FileWriterLock, NoWriterLock, OnWait, WriterLock
from zhiwen.store.base import Scored, StoreFeatures
from zhiwen.store.filters import Filter
from zhiwen.versions import current, get_format

log = logging.getLogger(__name__)

LOCAL_SCHEME = "qdrant+local://"
SERVER_SCHEMES = ("qdrant://", "qdrant+http://")
PAYLOAD_VERSION = "payload_version"  # in the meta point (zhiwen.versions, format qdrant-payload)
_PARENTS = Clause(must=[Match("kind", "parent")])


def open_engine(url: str, kb: str) -> Engine:
    """The engine for a ``qdrant+local://PATH`` or ``qdrant://host:port`` URL."""
    try:
        if url.startswith(LOCAL_SCHEME):
            from zhiwen.store._qdrant_edge import EdgeEngine

            path = url[len(LOCAL_SCHEME) :]
            if not path:
                raise InvalidParameter(f"no path in {url!r}", message=f"Qdrant 本地存储缺少路径：{url}")
            return EdgeEngine(Path(path).expanduser(), kb)
        from zhiwen.store._qdrant_server import ServerEngine

        return ServerEngine.from_url("http://" + url.split("://", 1)[1], kb)
    except ImportError as exc:
        raise StoreUnavailable(
            str(exc), message="未安装 Qdrant 支持，请运行 pip install 'zhiwen[qdrant]'"
        ) from exc


class QdrantStore(QdrantWrites, QdrantVectors):
    """One knowledge base in Qdrant (see the module docstring)."""

    backend = "qdrant"
    # Qdrant's sparse index scores the query (query_sparse): no per-search BM25 parameters or weights
    features = StoreFeatures(bm25_params=False, term_weights=False, lexical_first=True)

    def __init__(self, engine: Engine, *, kb: str, dim: int | None, url: str = "") -> None:
        if dim is not None and (not isinstance(dim, int) or dim < 1 or dim > 65536):
            raise InvalidParameter(f"invalid vector dimension {dim!r}", message=f"向量维度无效：{dim}")
        self.engine = engine
        self.kb = kb
        self.url = url
        try:
            engine.open_parents()
            found = engine.retrieve("parents", [META_ID])
            self._meta: dict[str, Any] = found[0].payload if found else {}
            self._check_version(kb)
            stored = self._meta.get("dim")
            if self._meta and stored != dim and dim is not None:
                raise InvalidParameter(
                    f"knowledge base {kb!r} has dim {stored}, opened with {dim}",
                    message=f"知识库 {kb} 的向量维度为 {stored}，与当前嵌入模型的维度 {dim} 不一致",
                )
            self._dim: int | None = stored if self._meta else dim
            self._writes = 0  # this store's writes: they invalidate the cached vector count
            self._vector_count: tuple[int, float, int] = (-1, 0.0, 0)  # (writes, time, count)
            engine.open_chunks(self._dim)
            if not self._meta:
                self._meta = {"kind": "meta", "kb": kb, "dim": dim, "n": 0, "total_len": 0, "avgdl": 0.0}
                self._meta[PAYLOAD_VERSION] = current("qdrant-payload")
                self._save_meta()
        except BaseException:
            engine.close()
            raise

    def _check_version(self, kb: str) -> None:
        """The payload version in the meta point: a newer one is refused, an older one (only
        ever stamp steps so far) is stamped."""
        if not self._meta:
            return
        found = int(self._meta.get(PAYLOAD_VERSION, 0))
        fmt = get_format("qdrant-payload")
        for step in fmt.pending(found, f"Qdrant {kb}", on_open=True):
            fn = step.function()
            if fn is not None:
                fn(self)
            self._meta[PAYLOAD_VERSION] = step.to
            self._save_meta()

    def _save_meta(self) -> None:
        self.engine.upsert("parents", [PointData(META_ID, dict(self._meta))])

    # -- contract: properties and reads ---------------------------------------------------
    @property
    def dim(self) -> int | None:
        return self._dim

    def count(self) -> int:
        return self.engine.count("chunks")

    def doc_ids(self) -> set[str]:
        return self.engine.distinct("chunks", "doc_id") | self.engine.distinct("parents", "id", _PARENTS)

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        by_id = {
            c.id: c
            for c in (chunk_from_payload(r.payload) for r in self.engine.retrieve("chunks", pids(ids)))
        }
        return [by_id[i] for i in ids if i in by_id]

    def get_parents(self, ids: Sequence[str]) -> list[Document]:
        recs = self.engine.retrieve("parents", pids(ids, prefix="parent:"))
        by_id = {
            d.id: d
            for d in (parent_from_payload(r.payload) for r in recs if r.payload.get("kind") == "parent")
        }
        return [by_id[i] for i in ids if i in by_id]

    # -- contract: search -----------------------------------------------------------------
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
        """BM25 by Qdrant's sparse index: weights from our tokenizer, idf from the IDF modifier."""
        check_text_options(self.features, k1=k1, b=b, weights=weights)
        indices, values = query_sparse(tokens)
        if k <= 0 or not indices:
            return []
        hits = self.engine.search("chunks", SPARSE, (indices, values), k, filter_ir(filters))
        return _ranked([h for h in hits if h[1] > 0], k)

    def search_vector(self, vector: np.ndarray, k: int, filters: Filter | None = None) -> Scored:
        """Cosine nearest neighbours (Qdrant HNSW; exact below its indexing threshold)."""
        if self._dim is None or k <= 0:
            return []
        vec = np.asarray(vector, dtype=np.float32).reshape(-1)
        if vec.shape[0] != self._dim or not np.isfinite(vec).all():
            raise InvalidParameter(
                f"query vector has dim {vec.shape[0]}, store has {self._dim}",
                message=f"查询向量维度 {vec.shape[0]} 与知识库维度 {self._dim} 不一致",
            )
        return _ranked(self.engine.search("chunks", DENSE, vec.tolist(), k, filter_ir(filters)), k)

    def writer_lock(
        self, *, wait: bool = True, timeout: float | None = None, on_wait: OnWait | None = None
    ) -> AbstractContextManager[None]:
        """One writer: a file lock in the Edge directory; a no-op for a Qdrant server.

        A remote server has no directory on this machine and no lock of its own to lend; the KB
        layer's file lock (in the KB home) covers the writers of one machine, not writers on
        several machines that share one server.
        """
        local = self.engine.local_dir
        lock: WriterLock[Any] = (
            NoWriterLock(self.kb) if local is None else FileWriterLock(local / WRITER_LOCK_FILE, kb=self.kb)
        )
        return lock.hold(wait=wait, timeout=timeout, on_wait=on_wait)

    # -- contract: admin ------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        n = self.count()
        return {
            "backend": self.backend,
            "kb": self.kb,
            "url": _redact(self.url),
            "chunks": n,
            "documents": len(self.engine.distinct("chunks", "doc_id")),
            "parents": self.engine.count("parents", _PARENTS),
            "avg_tokens": float(self._meta["total_len"]) / n if n else 0.0,
            "bm25_avgdl": float(self._meta["avgdl"]),
            "dim": self._dim,
            "vectors": self.vector_count(),
            "vector_index": "ready" if self._dim is not None else "not_needed",  # Qdrant's optimizer
        }

    def close(self) -> None:
        self.engine.close()

    def drop(self) -> bool:
        """Delete the whole knowledge base (both collections); True when it existed."""
        return self.engine.drop()

    def __enter__(self) -> QdrantStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"QdrantStore({_redact(self.url)!r}, kb={self.kb!r}, dim={self._dim})"


def _ranked(hits: list[tuple[str, float]], k: int) -> Scored:
    return sorted(hits, key=lambda h: (-h[1], h[0]))[:k]


def _redact(url: str) -> str:
    """The URL without credentials (an ``api_key`` parameter or a password)."""
    return re.sub(r"(api_key=)[^&]*", r"\1***", re.sub(r"(://[^:/@]*):[^@]*@", r"\1:***@", url))


def open_qdrant(url: str, *, kb: str, dim: int | None) -> QdrantStore:
    return QdrantStore(open_engine(url, kb), kb=kb, dim=dim, url=url)


def drop_qdrant_kb(url: str, kb: str) -> bool:
    """Delete knowledge base ``kb`` from the Qdrant store at ``url``; True when it existed."""
    return open_engine(url, kb).drop()


def rename_qdrant_kb(url: str, old: str, new: str) -> None:
    """Move knowledge base ``old``'s Qdrant Edge shards to the name ``new`` (closed, and ``new``
    absent). A Qdrant server cannot rename a collection: :func:`zhiwen.store.factory.renames`
    says so before anyone stages under another name."""
    if not url.startswith(LOCAL_SCHEME):
        raise StoreUnavailable(
            f"cannot rename collections on {_redact(url)}", message="Qdrant 服务不支持重命名知识库"
        )
    from zhiwen.store._qdrant_edge import kb_dir_name

    root = Path(url[len(LOCAL_SCHEME) :]).expanduser()
    (root / kb_dir_name(old)).rename(root / kb_dir_name(new))
