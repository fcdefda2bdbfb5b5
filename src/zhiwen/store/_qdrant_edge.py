"""Qdrant Edge engine: the Qdrant storage and search core in process (``qdrant+local://PATH``).

``qdrant-edge-py`` embeds Qdrant's own segments, HNSW, sparse inverted index and payload
filtering (the Rust core, not a Python re-implementation), so tests and single-machine
deployments run the same engine as a cluster. A knowledge base is two shards under
``PATH/<kb>/``: ``chunks`` (named vectors ``dense`` + ``bm25`` with the IDF modifier) and
``parents`` (payload only, plus the store's meta point). A shard belongs to one process.

The shards have no write-ahead log: every store write ends with :meth:`EdgeEngine.flush`, so a
write is durable when it returns, and a WAL would only cost ~50 ms and a preallocated file per
shard (writes are whole index batches, not a stream of small updates). Without the WAL's lock
nothing would stop a second process from opening the same shards, so the engine holds an
exclusive ``flock`` on ``PATH/<kb>/.lock`` while open: a second opener gets
:class:`~zhiwen.errors.StoreUnavailable` (use ``qdrant://`` to share a store between processes).

Example::

    engine = EdgeEngine(Path("/data/qdrant"), "manual")
    engine.open_parents()
    engine.open_chunks(dim=384)
    engine.upsert("chunks", [PointData(point_id("a#0"), payload, dense=vec, sparse=(idx, vals))])
    engine.search("chunks", SPARSE, (idx, [1.0] * len(idx)), k=10, ir=None)
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from zhiwen.errors import StoreUnavailable
from zhiwen.store._qdrant_codec import (
    DENSE,
    SPARSE,
    AnyOf,
    Clause,
    Empty,
    HasVector,
    Match,
    Node,
    PointData,
    Range,
    Record,
)

_SCROLL_PAGE = 1000
# no write-ahead log: each store write ends with flush() (see the module docstring)
_WAL = False
# Qdrant counts deleted points in the IDF statistics until their segment is vacuumed: vacuum
# (in optimize(), after a write that removed points) once 1 % of a segment is dead
_OPTIMIZERS = qe.EdgeOptimizersConfig(deleted_threshold=0.01, vacuum_min_vector_number=0)


def kb_dir_name(kb: str) -> str:
    """A directory name for ``kb``: itself when plain, else sanitised plus a short hash."""
    plain = re.sub(r"[^A-Za-z0-9_\-]", "_", kb)
    if plain == kb and len(kb) <= 64:
        return kb
    return f"{plain[:48]}_{hashlib.blake2b(kb.encode('utf-8'), digest_size=4).hexdigest()}"


def _node(node: Node) -> Any:
    if isinstance(node, Match):
        return qe.FieldCondition(node.key, match=qe.MatchValue(node.value))
    if isinstance(node, AnyOf):
        return qe.FieldCondition(node.key, match=qe.MatchAny(list(node.values)))
    if isinstance(node, Range):
        return qe.FieldCondition(
            node.key, range=qe.RangeFloat(gt=node.gt, gte=node.gte, lt=node.lt, lte=node.lte)
        )
    if isinstance(node, Empty):
        return qe.IsEmptyCondition(node.key)
    if isinstance(node, HasVector):
        return qe.HasVectorCondition(node.name)
    return to_filter(node)


def to_filter(ir: Clause | None) -> qe.Filter | None:
    if ir is None:
        return None
    return qe.Filter(
        must=[_node(n) for n in ir.must] or None,
        should=[_node(n) for n in ir.should] or None,
        must_not=[_node(n) for n in ir.must_not] or None,
    )


class EdgeEngine:
    """Two Qdrant Edge shards of one knowledge base (see the module docstring)."""

    def __init__(self, root: Path, kb: str) -> None:
        self.path = Path(root) / kb_dir_name(kb)
        self._shards: dict[str, qe.EdgeShard] = {}
        self._lock_fd: int | None = None

    @property
    def local_dir(self) -> Path:
        return self.path

    def _lock(self) -> None:
        """Hold ``.lock`` exclusively while open: one process per knowledge base directory."""
        if self._lock_fd is not None:
            return
        self.path.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            raise StoreUnavailable(
                f"{self.path} is open in another process or store",
                message=f"Qdrant 本地存储 {self.path} 正被另一个进程使用；多进程共享请改用 qdrant:// 服务",
            ) from exc
        self._lock_fd = fd

    def _open(self, name: str, config: qe.EdgeConfig) -> None:
        """Load the shard ``name``, or create it."""
        self._lock()
        path = self.path / name
        if path.is_dir() and any(path.iterdir()):
            self._shards[name] = qe.EdgeShard.load(str(path))
        else:
            path.mkdir(parents=True, exist_ok=True)
            self._shards[name] = qe.EdgeShard.create(str(path), config)

    def open_parents(self) -> None:
        self._open(
            "parents", qe.EdgeConfig(sparse_vectors={SPARSE: qe.EdgeSparseVectorParams()}, wal_enabled=_WAL)
        )
        self._keyword_index("parents", "id")

    def open_chunks(self, dim: int | None) -> None:
        dense = {DENSE: qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine)} if dim else None
        sparse = {SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)}
        # payload in RAM: filters read it for every candidate (on disk, a 10 % filter cost 30 ms)
        config = qe.EdgeConfig(
            vectors=dense,
            sparse_vectors=sparse,
            optimizers=_OPTIMIZERS,
            payload_memory=qe.Memory.Cached,
            wal_enabled=_WAL,
        )
        self._open("chunks", config)
        self._keyword_index("chunks", "doc_id")

    def _keyword_index(self, coll: str, key: str) -> None:
        """The keyword index that facets (distinct doc ids) and id lookups need, unless present."""
        if key not in self._shards[coll].info().payload_schema:
            self._shards[coll].update(
                qe.UpdateOperation.create_field_index(key, qe.PayloadSchemaType.Keyword)
            )

    def index_field(self, key: str, kind: str) -> None:
        """A payload index on ``key`` (``"keyword"`` or ``"float"``) of the chunks: filters then
        read the index instead of deserialising every candidate's payload."""
        schema = qe.PayloadSchemaType.Keyword if kind == "keyword" else qe.PayloadSchemaType.Float
        self._shards["chunks"].update(qe.UpdateOperation.create_field_index(key, schema))

    def upsert(self, coll: str, points: Sequence[PointData]) -> None:
        out = []
        for p in points:
            vectors: dict[str, Any] = {}
            if p.dense is not None:
                vectors[DENSE] = p.dense
            if p.sparse is not None:
                vectors[SPARSE] = qe.SparseVector(p.sparse[0], p.sparse[1])
            out.append(qe.Point(p.id, vectors, p.payload))
        if out:
            self._shards[coll].update(qe.UpdateOperation.upsert_points(out))

    def delete(self, coll: str, ids: Sequence[str]) -> None:
        if ids:
            self._shards[coll].update(qe.UpdateOperation.delete_points(list(ids)))

    def update_sparse(self, coll: str, items: Sequence[tuple[str, list[int], list[float]]]) -> None:
        vectors = [qe.PointVectors(pid, {SPARSE: qe.SparseVector(idx, vals)}) for pid, idx, vals in items]
        if vectors:
            self._shards[coll].update(qe.UpdateOperation.update_vectors(vectors))

    def update_dense(self, coll: str, items: Sequence[tuple[str, list[float]]]) -> None:
        vectors = [qe.PointVectors(pid, {DENSE: vec}) for pid, vec in items]
        if vectors:
            self._shards[coll].update(qe.UpdateOperation.update_vectors(vectors))

    def retrieve(
        self, coll: str, ids: Sequence[str], *, with_sparse: bool = False, with_dense: bool = False
    ) -> list[Record]:
        if not ids:
            return []
        names = [SPARSE] * with_sparse + [DENSE] * with_dense
        recs = self._shards[coll].retrieve(list(ids), with_payload=True, with_vector=names or False)
        return [Record.from_point(r) for r in recs]

    def scroll(
        self, coll: str, ir: Clause | None, fields: Sequence[str] | None = None, *, with_sparse: bool = False
    ) -> Iterator[Record]:
        offset: Any = None
        while True:
            recs, offset = self._shards[coll].scroll(
                qe.ScrollRequest(
                    offset=offset,
                    limit=_SCROLL_PAGE,
                    filter=to_filter(ir),
                    with_payload=list(fields) if fields is not None else True,
                    with_vector=[SPARSE] if with_sparse else False,
                )
            )
            yield from (Record.from_point(r) for r in recs)
            if offset is None:
                return

    def distinct(self, coll: str, key: str, ir: Clause | None = None) -> set[str]:
        """The distinct values of the keyword-indexed payload field ``key`` (a facet)."""
        limit = self.count(coll, ir) + 1
        response = self._shards[coll].facet(
            qe.FacetRequest(key, limit=limit, exact=True, filter=to_filter(ir))
        )
        return {str(hit.value) for hit in response.hits}

    def count(self, coll: str, ir: Clause | None = None) -> int:
        return int(self._shards[coll].count(qe.CountRequest(filter=to_filter(ir), exact=True)))

    def search(
        self,
        coll: str,
        using: str,
        query: list[float] | tuple[list[int], list[float]],
        k: int,
        ir: Clause | None,
    ) -> list[tuple[str, float]]:
        vector: Any = qe.SparseVector(query[0], query[1]) if isinstance(query, tuple) else query
        hits = self._shards[coll].query(
            qe.QueryRequest(
                limit=k,
                query=qe.Query.Nearest(vector, using=using),
                filter=to_filter(ir),
                with_payload=["id"],
            )
        )
        return [(h.payload["id"], float(h.score)) for h in hits if h.payload]

    def optimize(self) -> None:
        """Build the HNSW graph, merge segments and vacuum deleted points, now."""
        self._shards["chunks"].optimize()

    def flush(self) -> None:
        for shard in self._shards.values():
            shard.flush()

    def close(self) -> None:
        shards, self._shards = self._shards, {}
        try:
            for shard in shards.values():
                shard.close()
        finally:
            fd, self._lock_fd = self._lock_fd, None
            if fd is not None:
                with contextlib.suppress(OSError):
                    fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)

    def drop(self) -> bool:
        """Delete both shards (refused while another process has them open); True when they existed."""
        if not self.path.is_dir():
            self.close()
            return False
        self._lock()
        try:
            for shard in self._shards.values():
                shard.close()
            self._shards = {}
            shutil.rmtree(self.path, ignore_errors=True)
        finally:
            self.close()
        return True
