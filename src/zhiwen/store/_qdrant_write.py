"""The Qdrant store's writes: document-level upserts, chunk-level puts, token rewrites, deletes.

:class:`QdrantWrites` is mixed into :class:`~zhiwen.store.qdrant.QdrantStore`. Qdrant has no
multi-point transactions: a batch is validated completely before anything is written, then
written replace-first (the chunks it replaces or removes, then the batch), and every write is
idempotent, so re-running an interrupted write repairs it. Each write keeps the meta point's
statistics (N, total length, the avgdl baked into the BM25 weights) and rewrites every weight
when the live avgdl has drifted more than 10 % from it.

Example::

    store.upsert(chunks, tokens=token_lists, vectors=vectors, parents=docs)     # whole documents
    store.put_chunks([edited], tokens=[toks], vectors=vec[None, :], remove=["a#0::q1"])
    store.set_tokens(["a#0"], [new_tokens])                                     # vectors kept
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from zhiwen.documents import Chunk, Document
from zhiwen.errors import InvalidParameter
from zhiwen.store._qdrant_codec import (
    AnyOf,
    Clause,
    Engine,
    PointData,
    Record,
    bm25_values,
    chunk_payload,
    counts_from_values,
    index_kinds,
    needs_renormalising,
    parent_payload,
    payload_key,
    point_id,
    term_counts,
)
from zhiwen.store._qdrant_vectors import kept_dense
from zhiwen.store._validate import check_batch

log = logging.getLogger(__name__)

# batches this large get the HNSW graph built before the upsert returns (writes that removed
# points always optimise: it vacuums them out of the IDF statistics)
_OPTIMIZE_MIN_ROWS = 1000
_WRITE_BATCH = 512
_MAX_FIELD_INDEXES = 32
_INDEX_MIN_CHUNKS = 1000


def pids(ids: Sequence[str], prefix: str = "") -> list[str]:
    return [point_id(prefix + i) for i in dict.fromkeys(ids)]


class QdrantWrites:
    """Writes of :class:`~zhiwen.store.qdrant.QdrantStore` (see the module docstring)."""

    if TYPE_CHECKING:  # provided by QdrantStore
        engine: Engine
        kb: str
        _dim: int | None
        _meta: dict[str, Any]
        _writes: int

        def _save_meta(self) -> None: ...
        def _known_keys(self) -> list[str]: ...

    # -- contract: writes -----------------------------------------------------------------
    def upsert(
        self,
        chunks: Sequence[Chunk],
        *,
        tokens: Sequence[Sequence[str]],
        vectors: np.ndarray | None = None,
        parents: Sequence[Document] = (),
    ) -> None:
        self._write(chunks, tokens, vectors, parents, replace_docs=True)

    def put_chunks(
        self,
        chunks: Sequence[Chunk],
        *,
        tokens: Sequence[Sequence[str]],
        vectors: np.ndarray | None = None,
        parents: Sequence[Document] = (),
        remove: Sequence[str] = (),
    ) -> None:
        """Chunk-level write (see :meth:`Store.put_chunks`): replace-first, idempotent."""
        self._write(chunks, tokens, vectors, parents, remove=remove)

    def _write(
        self,
        chunks: Sequence[Chunk],
        tokens: Sequence[Sequence[str]],
        vectors: np.ndarray | None,
        parents: Sequence[Document],
        *,
        replace_docs: bool = False,
        remove: Sequence[str] = (),
    ) -> None:
        chunks, tokens, vecs = self._validated(chunks, tokens, vectors)
        payloads = [chunk_payload(c, len(t)) for c, t in zip(chunks, tokens, strict=True)]
        parent_points = [
            PointData(point_id("parent:" + p.id), parent_payload(p))
            for p in {p.id: p for p in parents}.values()
        ]
        if not chunks and not parent_points and not remove:
            return
        new_ids = {point_id(c.id) for c in chunks}
        # lexical-first batches keep the vectors of unchanged chunks: read them with the points
        old = self.engine.retrieve(
            "chunks", sorted(new_ids), with_dense=vecs is None and self._dim is not None
        )
        old_by_id = {r.payload.get("id"): r for r in old}
        next_seq = self._number(chunks, payloads, old_by_id)
        stale = self._replaced(chunks, new_ids, remove, replace_docs)
        gone = old + stale
        n = int(self._meta["n"]) - len(gone) + len(chunks)
        total = int(self._meta["total_len"]) - _lengths(gone) + sum(len(t) for t in tokens)
        ref, renormalise = self._reference(n, total)
        self._index_fields(chunks, n)
        self.engine.delete("chunks", [r.id for r in stale])
        points = [
            PointData(
                point_id(c.id),
                payload,
                dense=vecs[i].tolist() if vecs is not None else kept_dense(old_by_id.get(c.id), payload),
                sparse=bm25_values(term_counts(tokens[i]), len(tokens[i]), ref),
            )
            for i, (c, payload) in enumerate(zip(chunks, payloads, strict=True))
        ]
        self._writes += 1
        self._upsert_points(points)
        self.engine.upsert("parents", parent_points)
        self._finish(
            n,
            total,
            ref,
            renormalise,
            new_ids,
            chunks,
            optimize=bool(gone) or len(points) >= _OPTIMIZE_MIN_ROWS,
        )
        self._meta["next_seq"] = next_seq
        self._save_meta()
        self.engine.flush()

    def _validated(
        self, chunks: Sequence[Chunk], tokens: Sequence[Sequence[str]], vectors: np.ndarray | None
    ) -> tuple[list[Chunk], list[Sequence[str]], np.ndarray | None]:
        """The batch with the last occurrence of each id, checked before anything is written."""
        chunks = list(chunks)
        if len(tokens) != len(chunks):
            raise InvalidParameter(
                f"{len(tokens)} token lists for {len(chunks)} chunks", message="分词结果数量与分块数量不一致"
            )
        # last occurrence of a repeated id wins, as a sequence of single upserts would
        order = sorted({c.id: i for i, c in enumerate(chunks)}.values())
        arr = None if vectors is None else np.asarray(vectors, dtype=np.float32)
        if arr is not None and (arr.ndim != 2 or arr.shape[0] != len(chunks)):
            raise InvalidParameter(
                f"vectors have shape {arr.shape}, expected ({len(chunks)}, {self._dim})",
                message=f"向量形状 {tuple(arr.shape)} 与预期 ({len(chunks)}, {self._dim}) 不一致",
            )
        kept = [chunks[i] for i in order]
        kept_tokens = [tokens[i] for i in order]
        vecs = check_batch(kept, kept_tokens, None if arr is None else arr[order], self._dim)
        return kept, kept_tokens, vecs

    def _number(
        self, chunks: list[Chunk], payloads: list[dict[str, Any]], old_by_id: dict[Any, Record]
    ) -> int:
        """Give each payload its insertion ``seq`` (kept across updates); the next free one."""
        next_seq = int(self._meta.get("next_seq", 0))
        for c, payload in zip(chunks, payloads, strict=True):
            prev = old_by_id.get(c.id)
            if prev is not None and "seq" in prev.payload:
                payload["seq"] = prev.payload["seq"]  # insertion order survives updates
            else:
                payload["seq"], next_seq = next_seq, next_seq + 1
        return next_seq

    def _replaced(
        self, chunks: list[Chunk], new_ids: set[str], remove: Sequence[str], replace_docs: bool
    ) -> list[Record]:
        """The stored points this write removes: the other chunks of the batch's documents
        (document-level replace) or the ``remove`` ids (a chunk-level put)."""
        if replace_docs and chunks:
            docs = Clause(must=[AnyOf("doc_id", tuple(sorted({c.doc_id for c in chunks})))])
            return [r for r in self.engine.scroll("chunks", docs, ["dl"]) if r.id not in new_ids]
        return [r for r in self.engine.retrieve("chunks", pids(remove)) if r.id not in new_ids]

    def _reference(self, n: int, total: int) -> tuple[float, bool]:
        """The avgdl to bake into new weights, and whether every stored weight must follow it."""
        avgdl = total / n if n else 0.0
        renormalise = needs_renormalising(float(self._meta["avgdl"]), avgdl)
        return (avgdl if renormalise or not self._meta["avgdl"] else float(self._meta["avgdl"])), renormalise

    def _upsert_points(self, points: list[PointData]) -> None:
        for start in range(0, len(points), _WRITE_BATCH):
            self.engine.upsert("chunks", points[start : start + _WRITE_BATCH])

    def _finish(
        self,
        n: int,
        total: int,
        ref: float,
        renormalise: bool,
        written: set[str],
        chunks: Sequence[Chunk],
        *,
        optimize: bool,
    ) -> None:
        """After the points: the drifted weights rewritten, the statistics into the meta point."""
        if renormalise and self._meta["avgdl"]:
            self._renormalise(float(self._meta["avgdl"]), ref, skip=written)
        keys = {k for c in chunks for k, v in c.metadata.items() if v is not None}
        self._meta.update(n=n, total_len=total, avgdl=ref, keys=sorted(set(self._known_keys()) | keys))
        if optimize:
            self.engine.optimize()

    def set_tokens(self, ids: Sequence[str], tokens: Sequence[Sequence[str]]) -> int:
        """New tokens for existing chunks, their payload and dense vector kept (see
        :meth:`Store.set_tokens`)."""
        if isinstance(ids, str) or len(ids) != len(tokens) or any(isinstance(t, str) for t in tokens):
            raise InvalidParameter(
                f"{len(tokens)} token lists for {len(ids)} ids", message="分词结果数量与分块数量不一致"
            )
        last = {point_id(cid): tokens[i] for i, cid in enumerate(ids)}
        recs = self.engine.retrieve("chunks", list(last), with_dense=self._dim is not None)
        if not recs:
            return 0
        n = int(self._meta["n"])
        total = int(self._meta["total_len"]) - _lengths(recs) + sum(len(last[r.id]) for r in recs)
        ref, renormalise = self._reference(n, total)
        points = [
            PointData(
                r.id,
                {**r.payload, "dl": len(last[r.id])},
                dense=r.dense,
                sparse=bm25_values(term_counts(last[r.id]), len(last[r.id]), ref),
            )
            for r in recs
        ]
        self._writes += 1
        self._upsert_points(points)
        self._finish(n, total, ref, renormalise, set(last), (), optimize=False)
        self._save_meta()
        self.engine.flush()
        return len(recs)

    def list_chunk_ids(self, doc_ids: Sequence[str] | None = None) -> list[str]:
        """Chunk ids of ``doc_ids`` (None: all), in insertion order (the payload's ``seq``)."""
        if doc_ids is not None and not doc_ids:
            return []
        docs = None if doc_ids is None else Clause(must=[AnyOf("doc_id", tuple(sorted(set(doc_ids))))])
        recs = list(self.engine.scroll("chunks", docs, ["id", "seq"]))
        recs.sort(key=lambda r: (int(r.payload.get("seq", -1)), str(r.payload.get("id", ""))))
        return [str(r.payload["id"]) for r in recs if "id" in r.payload]

    def _index_fields(self, chunks: Sequence[Chunk], n_after: int) -> None:
        """A payload index per metadata field (up to 32) once the KB has 1,000 chunks.

        Below that, reading payloads to filter costs less than creating the indexes (each one
        is a flushed update of the shard).
        """
        fields: dict[str, str] = dict(self._meta.get("fields") or {})
        for name, kind in index_kinds(chunks).items():
            if fields.get(name) != "keyword":
                fields[name] = kind
        indexed: dict[str, str] = dict(self._meta.get("indexed") or {})
        if n_after >= _INDEX_MIN_CHUNKS:
            todo = {f: k for f, k in fields.items() if indexed.get(f) != k}
            for name, kind in sorted(todo.items())[: max(0, _MAX_FIELD_INDEXES - len(indexed))]:
                self.engine.index_field(payload_key(name), kind)
                indexed[name] = kind
        self._meta.update(fields=fields, indexed=indexed)  # saved with this write's meta update

    def _renormalise(self, old_avgdl: float, new_avgdl: float, *, skip: set[str]) -> None:
        """Rewrite every BM25 weight for ``new_avgdl`` (the live avgdl drifted > 10 %)."""
        log.info(
            "qdrant %s: BM25 avgdl %.2f -> %.2f, rewriting sparse vectors", self.kb, old_avgdl, new_avgdl
        )
        batch: list[tuple[str, list[int], list[float]]] = []
        for rec in self.engine.scroll("chunks", None, ["dl"], with_sparse=True):
            if rec.id in skip or rec.sparse is None:
                continue
            dl = int(rec.payload.get("dl", 0))
            counts = counts_from_values(rec.sparse[0], rec.sparse[1], dl, old_avgdl)
            batch.append((rec.id, *bm25_values(counts, dl, new_avgdl)))
            if len(batch) >= _WRITE_BATCH:
                self.engine.update_sparse("chunks", batch)
                batch = []
        self.engine.update_sparse("chunks", batch)

    def delete(self, *, chunk_ids: Sequence[str] = (), doc_ids: Sequence[str] = ()) -> int:
        if not chunk_ids and not doc_ids:
            return 0
        gone = {r.id: r for r in self.engine.retrieve("chunks", pids(chunk_ids))}
        if doc_ids:
            docs = Clause(must=[AnyOf("doc_id", tuple(sorted(set(doc_ids))))])
            gone.update((r.id, r) for r in self.engine.scroll("chunks", docs, ["dl"]))
        self.engine.delete("chunks", sorted(gone))
        self.engine.delete("parents", pids(doc_ids, prefix="parent:"))
        self._writes += 1
        if gone:
            n = int(self._meta["n"]) - len(gone)
            total = int(self._meta["total_len"]) - _lengths(gone.values())
            self._meta.update(n=n, total_len=total)
            self._save_meta()
            self.engine.optimize()
        self.engine.flush()
        return len(gone)


def _lengths(records: Any) -> int:
    return sum(int(r.payload.get("dl", 0)) for r in records)
