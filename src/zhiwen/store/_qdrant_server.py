"""Qdrant server or cluster engine through ``qdrant-client`` (``qdrant://host:6333``).

The same two collections per knowledge base as the in-process engine (:mod:`zhiwen.store._qdrant_edge`),
named ``zw_<kb>`` and ``zw_<kb>__parents``, with the same payloads, sparse vectors and filters
(:mod:`zhiwen.store._qdrant_codec`). Writes wait for the cluster to apply them (``wait=True``),
so a search right after an upsert sees it. Options ride on the URL's query string:

=================  ==============================================================================
``api_key=…``      the cluster's API key
``https=true``     TLS
``grpc=true``      gRPC instead of REST (port 6334)
``shards=N``       shards per new collection (a 3-node cluster: 3 or 6)
``replicas=N``     replication factor of new collections (2 survives the loss of one node)
=================  ==============================================================================

Example::

    engine = ServerEngine.from_url("qdrant://qdrant-0:6333?shards=3&replicas=2", "manual")
    engine.open_parents()
    engine.open_chunks(dim=384)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from qdrant_client import QdrantClient, models

from zhiwen.errors import InvalidParameter
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
from zhiwen.store._qdrant_edge import kb_dir_name

_SCROLL_PAGE = 1000
_TRUE = ("1", "true", "yes", "on")


def _node(node: Node) -> Any:
    if isinstance(node, Match):
        return models.FieldCondition(key=node.key, match=models.MatchValue(value=node.value))
    if isinstance(node, AnyOf):
        return models.FieldCondition(key=node.key, match=models.MatchAny(any=list(node.values)))
    if isinstance(node, Range):
        return models.FieldCondition(
            key=node.key, range=models.Range(gt=node.gt, gte=node.gte, lt=node.lt, lte=node.lte)
        )
    if isinstance(node, Empty):
        return models.IsEmptyCondition(is_empty=models.PayloadField(key=node.key))
    if isinstance(node, HasVector):
        return models.HasVectorCondition(has_vector=node.name)
    return to_filter(node)


def to_filter(ir: Clause | None) -> models.Filter | None:
    if ir is None:
        return None
    return models.Filter(
        must=[_node(n) for n in ir.must] or None,
        should=[_node(n) for n in ir.should] or None,
        must_not=[_node(n) for n in ir.must_not] or None,
    )


class ServerEngine:
    """Two collections of one knowledge base on a Qdrant server or cluster."""

    local_dir: Path | None = None  # nothing on this machine: no file lock (QdrantStore.writer_lock)

    def __init__(
        self, client: QdrantClient, kb: str, *, shards: int | None = None, replicas: int | None = None
    ) -> None:
        self.client = client
        self.names = {"chunks": f"zw_{kb_dir_name(kb)}", "parents": f"zw_{kb_dir_name(kb)}__parents"}
        self.shards = shards
        self.replicas = replicas

    @classmethod
    def from_url(cls, url: str, kb: str) -> ServerEngine:
        parts = urlsplit(url)
        if not parts.hostname:
            raise InvalidParameter(f"no host in {url!r}", message=f"Qdrant 地址缺少主机名：{url}")
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        https = query.get("https", "").lower() in _TRUE
        grpc = query.get("grpc", "").lower() in _TRUE
        client = QdrantClient(
            host=parts.hostname,
            port=parts.port or 6333,
            grpc_port=(parts.port or 6334) if grpc else 6334,
            prefer_grpc=grpc,
            https=https,
            api_key=query.get("api_key") or parts.password or None,
            timeout=30,
            check_compatibility=False,  # no request before the first real one
        )
        shards = int(query["shards"]) if "shards" in query else None
        replicas = int(query["replicas"]) if "replicas" in query else None
        return cls(client, kb, shards=shards, replicas=replicas)

    def _create(
        self, coll: str, dense: dict[str, models.VectorParams], sparse: models.SparseVectorParams
    ) -> None:
        """Create the collection unless it exists."""
        name = self.names[coll]
        if self.client.collection_exists(name):
            return
        self.client.create_collection(
            name,
            vectors_config=dense,
            sparse_vectors_config={SPARSE: sparse},
            shard_number=self.shards,
            replication_factor=self.replicas,
            # deleted points count in the IDF statistics until vacuumed: keep that share small
            optimizers_config=models.OptimizersConfigDiff(
                deleted_threshold=0.01, vacuum_min_vector_number=100
            ),
        )

    def open_parents(self) -> None:
        self._create("parents", {}, models.SparseVectorParams())
        self._keyword_index("parents", "id")

    def open_chunks(self, dim: int | None) -> None:
        dense = {DENSE: models.VectorParams(size=dim, distance=models.Distance.COSINE)} if dim else {}
        self._create("chunks", dense, models.SparseVectorParams(modifier=models.Modifier.IDF))
        self._keyword_index("chunks", "doc_id")

    def _keyword_index(self, coll: str, key: str) -> None:
        """The keyword index that facets (distinct doc ids) need, unless present."""
        if key not in (self.client.get_collection(self.names[coll]).payload_schema or {}):
            self.client.create_payload_index(self.names[coll], key, models.PayloadSchemaType.KEYWORD)

    def index_field(self, key: str, kind: str) -> None:
        """A payload index on ``key`` (``"keyword"`` or ``"float"``) of the chunks."""
        schema = models.PayloadSchemaType.KEYWORD if kind == "keyword" else models.PayloadSchemaType.FLOAT
        self.client.create_payload_index(self.names["chunks"], key, schema)

    def upsert(self, coll: str, points: Sequence[PointData]) -> None:
        out = []
        for p in points:
            vector: dict[str, Any] = {}
            if p.dense is not None:
                vector[DENSE] = p.dense
            if p.sparse is not None:
                vector[SPARSE] = models.SparseVector(indices=p.sparse[0], values=p.sparse[1])
            out.append(models.PointStruct(id=p.id, vector=vector, payload=p.payload))
        if out:
            self.client.upsert(self.names[coll], points=out, wait=True)

    def delete(self, coll: str, ids: Sequence[str]) -> None:
        if ids:
            self.client.delete(
                self.names[coll], points_selector=models.PointIdsList(points=list(ids)), wait=True
            )

    def update_sparse(self, coll: str, items: Sequence[tuple[str, list[int], list[float]]]) -> None:
        points = [
            models.PointVectors(id=pid, vector={SPARSE: models.SparseVector(indices=idx, values=vals)})
            for pid, idx, vals in items
        ]
        if points:
            self.client.update_vectors(self.names[coll], points=points, wait=True)

    def update_dense(self, coll: str, items: Sequence[tuple[str, list[float]]]) -> None:
        points = [models.PointVectors(id=pid, vector={DENSE: vec}) for pid, vec in items]
        if points:
            self.client.update_vectors(self.names[coll], points=points, wait=True)

    def retrieve(
        self, coll: str, ids: Sequence[str], *, with_sparse: bool = False, with_dense: bool = False
    ) -> list[Record]:
        if not ids:
            return []
        names = [SPARSE] * with_sparse + [DENSE] * with_dense
        recs = self.client.retrieve(
            self.names[coll], list(ids), with_payload=True, with_vectors=names or False
        )
        return [Record.from_point(r) for r in recs]

    def scroll(
        self, coll: str, ir: Clause | None, fields: Sequence[str] | None = None, *, with_sparse: bool = False
    ) -> Iterator[Record]:
        offset: Any = None
        while True:
            recs, offset = self.client.scroll(
                self.names[coll],
                scroll_filter=to_filter(ir),
                limit=_SCROLL_PAGE,
                offset=offset,
                with_payload=list(fields) if fields is not None else True,
                with_vectors=[SPARSE] if with_sparse else False,
            )
            yield from (Record.from_point(r) for r in recs)
            if offset is None:
                return

    def distinct(self, coll: str, key: str, ir: Clause | None = None) -> set[str]:
        """The distinct values of the keyword-indexed payload field ``key`` (a facet)."""
        limit = self.count(coll, ir) + 1
        res = self.client.facet(self.names[coll], key, facet_filter=to_filter(ir), limit=limit, exact=True)
        return {str(hit.value) for hit in res.hits}

    def count(self, coll: str, ir: Clause | None = None) -> int:
        return int(self.client.count(self.names[coll], count_filter=to_filter(ir), exact=True).count)

    def search(
        self,
        coll: str,
        using: str,
        query: list[float] | tuple[list[int], list[float]],
        k: int,
        ir: Clause | None,
    ) -> list[tuple[str, float]]:
        vector: Any = (
            models.SparseVector(indices=query[0], values=query[1]) if isinstance(query, tuple) else query
        )
        res = self.client.query_points(
            self.names[coll],
            query=vector,
            using=using,
            limit=k,
            query_filter=to_filter(ir),
            with_payload=["id"],
        )
        return [(p.payload["id"], float(p.score)) for p in res.points if p.payload]

    def optimize(self) -> None:
        """The server's optimizers run in the background."""

    def flush(self) -> None:
        """Writes waited for the server already."""

    def close(self) -> None:
        self.client.close()

    def drop(self) -> bool:
        existed = self.client.collection_exists(self.names["chunks"])
        for name in self.names.values():
            self.client.delete_collection(name)
        self.close()
        return existed
