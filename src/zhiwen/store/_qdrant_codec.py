"""What the Qdrant backend stores, engine-neutral: point ids, BM25 sparse vectors, payloads, filters.

Shared by both engines (:mod:`zhiwen.store._qdrant_edge` in process, :mod:`zhiwen.store._qdrant_server`
over the network), so the mapping is written and tested once:

* **point ids** — Qdrant wants an integer or a UUID; a chunk id ``"doc#3"`` becomes
  ``uuid5(NAMESPACE, "doc#3")`` and the id itself travels in the payload;
* **BM25 as a sparse vector** — our tokenizer's terms hashed to ``crc32`` indices (as Qdrant's own
  BM25 hashes its tokens), one value per distinct term ``tf / (tf + k1 · (1 - b + b · dl / avgdl))``;
  the collection's IDF modifier multiplies in Lucene's ``log(1 + (N - df + 0.5) / (df + 0.5))`` at
  query time, so a query ``{term: 1.0}`` scores exactly the embedded store's BM25 (k1 = 1.5,
  b = 0.75) for the avgdl the values were written with (kept within 10 % of the live one);
* **payload** — the chunk's fields, its metadata verbatim as JSON (exact round trip) and a filter
  copy ``m`` with only scalars: booleans as tagged strings (the in-process engine cannot match
  JSON booleans), lists and objects as a placeholder so ``eq None`` does not match them;
* **filters** — :func:`filter_ir` turns a :class:`~zhiwen.store.filters.Filter` into a small tree
  (:class:`Clause`) that each engine builds into its own classes, with the embedded store's
  semantics: a missing field is ``None``, ``ne``/``nin`` keep it, ranges match only numbers, and
  ``3 == 3.0``.

Example::

    point_id("doc#3")                            # '6c1f…' (a UUID string)
    sparse_bm25(["宫保", "鸡丁", "宫保"], avgdl=12.0)  # ([indices], [values])
    filter_ir(parse_filters({"difficulty": {"lte": 2}, "spicy": True}))
"""

from __future__ import annotations

import json
import math
import uuid
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from zhiwen.documents import Chunk, Document
from zhiwen.store.filters import Condition, Filter

K1 = 1.5
B = 0.75
NAMESPACE = uuid.UUID("6f0e4e5a-2b5c-4c4e-9a57-7a6869776e21")
DENSE = "dense"
SPARSE = "bm25"
META_ID = str(uuid.uuid5(NAMESPACE, "\x00zhiwen-meta"))
_BOOL = {True: "\x1fbool:true", False: "\x1fbool:false"}
_OPAQUE = "\x1fvalue"


def point_id(chunk_id: str) -> str:
    return str(uuid.uuid5(NAMESPACE, chunk_id))


def term_index(term: str) -> int:
    return zlib.crc32(term.encode("utf-8"))


def term_counts(tokens: Iterable[str]) -> dict[int, int]:
    """Term frequencies by sparse index (terms whose hashes collide add up)."""
    counts: Counter[int] = Counter()
    for term in tokens:
        if term:
            counts[term_index(term)] += 1
    return dict(counts)


def bm25_values(counts: Mapping[int, int], dl: int, avgdl: float) -> tuple[list[int], list[float]]:
    """The sparse vector of a chunk with term counts ``counts`` and ``dl`` tokens."""
    norm = K1 * (1 - B + B * dl / max(avgdl, 1e-9))
    indices = sorted(counts)
    return indices, [counts[i] / (counts[i] + norm) for i in indices]


def counts_from_values(
    indices: Sequence[int], values: Sequence[float], dl: int, avgdl: float
) -> dict[int, int]:
    """Invert :func:`bm25_values` (to rewrite the vectors for a new avgdl)."""
    norm = K1 * (1 - B + B * dl / max(avgdl, 1e-9))
    return {i: max(1, round(v * norm / (1 - v))) for i, v in zip(indices, values, strict=True) if 0 < v < 1}


def sparse_bm25(tokens: Sequence[str], avgdl: float) -> tuple[list[int], list[float]]:
    return bm25_values(term_counts(tokens), len(tokens), avgdl)


def query_sparse(tokens: Iterable[str]) -> tuple[list[int], list[float]]:
    """Each distinct query term once, weight 1 (the IDF modifier supplies the idf)."""
    indices = sorted({term_index(t) for t in tokens if t})
    return indices, [1.0] * len(indices)


def needs_renormalising(avgdl_ref: float, avgdl_live: float) -> bool:
    return avgdl_ref > 0 and avgdl_live > 0 and abs(math.log(avgdl_live / avgdl_ref)) > math.log(1.1)


# -- payloads ------------------------------------------------------------------------------------
def _filter_value(value: Any) -> Any:
    if isinstance(value, bool):
        return _BOOL[value]
    if value is None or isinstance(value, str | int | float):
        return value
    return _OPAQUE


def chunk_payload(chunk: Chunk, dl: int) -> dict[str, Any]:
    return {
        "id": chunk.id,
        "doc_id": chunk.doc_id,
        "parent_id": chunk.parent_id,
        "title": chunk.title or "",
        "text": chunk.text,
        "metadata": json.dumps(chunk.metadata, ensure_ascii=False),
        "m": {k: _filter_value(v) for k, v in chunk.metadata.items()},
        "dl": dl,
    }


def chunk_from_payload(payload: Mapping[str, Any]) -> Chunk:
    return Chunk(
        id=payload["id"],
        doc_id=payload["doc_id"],
        text=payload["text"],
        title=payload.get("title") or "",
        parent_id=payload.get("parent_id"),
        metadata=json.loads(payload.get("metadata") or "{}"),
    )


def parent_payload(doc: Document) -> dict[str, Any]:
    return {
        "kind": "parent",
        "id": doc.id,
        "title": doc.title or "",
        "text": doc.text,
        "metadata": json.dumps(doc.metadata, ensure_ascii=False),
    }


def parent_from_payload(payload: Mapping[str, Any]) -> Document:
    return Document(
        id=payload["id"],
        text=payload["text"],
        title=payload.get("title") or "",
        metadata=json.loads(payload.get("metadata") or "{}"),
    )


def index_kinds(chunks: Iterable[Chunk]) -> dict[str, str]:
    """Metadata field → the payload index its values want: ``float`` (numbers) or ``keyword``.

    A field seen with both gets ``keyword``; its numeric conditions then read payloads (slower,
    same answers).
    """
    kinds: dict[str, str] = {}
    for chunk in chunks:
        for name, value in chunk.metadata.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                kinds.setdefault(name, "float")
            elif isinstance(value, str | bool):
                kinds[name] = "keyword"
    return kinds


# -- filters -------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Match:
    """``key`` equals ``value`` (a string, or a tagged boolean)."""

    key: str
    value: str


@dataclass(frozen=True, slots=True)
class AnyOf:
    """``key`` equals one of the strings ``values``."""

    key: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Range:
    key: str
    gt: float | None = None
    gte: float | None = None
    lt: float | None = None
    lte: float | None = None


@dataclass(frozen=True, slots=True)
class Empty:
    """``key`` is missing or null."""

    key: str


@dataclass(frozen=True, slots=True)
class HasVector:
    """The point has the named vector (chunks indexed lexical-first lack ``dense`` until filled)."""

    name: str


@dataclass(frozen=True, slots=True)
class Clause:
    """A Qdrant filter: all of ``must``, at least one of ``should`` (if any), none of ``must_not``."""

    must: list[Node] = field(default_factory=list)
    should: list[Node] = field(default_factory=list)
    must_not: list[Node] = field(default_factory=list)


Node = Match | AnyOf | Range | Empty | HasVector | Clause


def payload_key(name: str) -> str:
    """The JSON path of metadata field ``name`` in the filter copy (quoted: names may hold dots)."""
    return 'm."' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _equals(key: str, value: Any) -> Node:
    if value is None:
        return Empty(key)
    if isinstance(value, bool):
        return Match(key, _BOOL[value])
    if isinstance(value, int | float):
        return Range(key, gte=float(value), lte=float(value))
    return Match(key, str(value))


def _member(key: str, values: Sequence[Any]) -> Node:
    return Clause(should=[_equals(key, v) for v in values])


def _condition(cond: Condition) -> tuple[Literal["must", "must_not"], Node]:
    key = payload_key(cond.field)
    if cond.op == "eq":
        return "must", _equals(key, cond.value)
    if cond.op == "ne":
        return "must_not", _equals(key, cond.value)
    if cond.op == "in":
        return "must", _member(key, cond.value)
    if cond.op == "nin":
        return "must_not", _member(key, cond.value)
    return "must", Range(key, **{cond.op: float(cond.value)})


def filter_ir(flt: Filter | None) -> Clause | None:
    """The filter as a :class:`Clause`, or None for no filter."""
    if not flt:
        return None
    out = Clause()
    for cond in flt.conditions:
        where, node = _condition(cond)
        getattr(out, where).append(node)
    return out


def with_kind(ir: Clause | None, kind: str) -> Clause:
    """``ir`` restricted to points whose payload ``kind`` is ``kind``."""
    base = Clause(must=[Match("kind", kind)])
    if ir is not None:
        base.must.append(ir)
    return base


# -- the engine interface ------------------------------------------------------------------------
Sparse = tuple[list[int], list[float]]


@dataclass(frozen=True, slots=True)
class PointData:
    id: str  # point id (a UUID string)
    payload: dict[str, Any]
    dense: list[float] | None = None
    sparse: Sparse | None = None


@dataclass(frozen=True, slots=True)
class Record:
    id: str
    payload: dict[str, Any]
    sparse: Sparse | None = None
    dense: list[float] | None = None

    @classmethod
    def from_point(cls, rec: Any) -> Record:
        """A point read back from either engine (Edge and qdrant-client points have one shape)."""
        vec = rec.vector if isinstance(rec.vector, dict) else None
        sparse = vec.get(SPARSE) if vec else None
        dense = vec.get(DENSE) if vec else None
        return cls(
            str(rec.id),
            dict(rec.payload or {}),
            (list(sparse.indices), list(sparse.values)) if sparse is not None else None,
            list(dense) if dense is not None else None,
        )


class Engine(Protocol):
    """What :class:`~zhiwen.store.qdrant.QdrantStore` needs from Qdrant: two collections,
    ``chunks`` and ``parents``, of one knowledge base."""

    @property
    def local_dir(self) -> Path | None:
        """The knowledge base's directory on this machine (Edge), or None (a server)."""
        ...

    def open_parents(self) -> None: ...
    def open_chunks(self, dim: int | None) -> None: ...
    def index_field(self, key: str, kind: str) -> None: ...
    def upsert(self, coll: str, points: Sequence[PointData]) -> None: ...
    def delete(self, coll: str, ids: Sequence[str]) -> None: ...
    def update_sparse(self, coll: str, items: Sequence[tuple[str, list[int], list[float]]]) -> None: ...
    def update_dense(self, coll: str, items: Sequence[tuple[str, list[float]]]) -> None: ...
    def retrieve(
        self, coll: str, ids: Sequence[str], *, with_sparse: bool = False, with_dense: bool = False
    ) -> list[Record]: ...
    def scroll(
        self, coll: str, ir: Clause | None, fields: Sequence[str] | None = None, *, with_sparse: bool = False
    ) -> Iterator[Record]: ...
    def distinct(self, coll: str, key: str, ir: Clause | None = None) -> set[str]: ...
    def count(self, coll: str, ir: Clause | None = None) -> int: ...
    def search(
        self, coll: str, using: str, query: list[float] | Sparse, k: int, ir: Clause | None
    ) -> list[tuple[str, float]]: ...
    def optimize(self) -> None: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...
    def drop(self) -> bool: ...
