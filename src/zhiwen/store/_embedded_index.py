"""The embedded store's in-memory search index: immutable snapshots, synced by row id.

A :class:`Snapshot` maps row positions (ascending SQLite row ids) to everything a search needs:
BM25 postings (:mod:`zhiwen.store._bm25`), metadata columns for filter masks
(:mod:`zhiwen.store._columns`) and vectors (:mod:`zhiwen.store._vectors`). Searches only read a
snapshot, so many threads search while one syncs. Syncing never rebuilds: rows that left the
database become tombstones (:func:`live_mask`) and rows past the snapshot's last row id are
appended as a new postings segment (:func:`append_rows`); the delta segment is merged into the
base once it holds a fifth of all postings.

Example::

    snap = empty_snapshot(dim=384, db_uuid=db.uuid)
    alive = live_mask(snap.rowids, db_rowids)
    snap = append_rows(snap, alive, db.rows_after(conn, snap.max_rowid), generation=gen, dim=384)
    positions, scores = snap.bm25.top_k(term_ids, 10, alive=snap.alive, allowed=snap.allowed(filters))
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from zhiwen.store._bm25 import BM25Index, Postings
from zhiwen.store._columns import MetadataColumns
from zhiwen.store._embedded_db import IndexRow
from zhiwen.store._vectors import VectorIndex
from zhiwen.store.filters import Filter, parse_filters

# merge the BM25 delta segment into the base when it holds this share of all postings
DELTA_MERGE_SHARE = 0.2


@dataclass(frozen=True, slots=True)
class Snapshot:
    """An immutable view of the index: row position → everything a search needs."""

    rowids: np.ndarray  # int64, ascending
    ids: list[str]
    alive: np.ndarray  # bool
    bm25: BM25Index
    columns: MetadataColumns
    vectors: VectorIndex | None
    generation: int
    db_uuid: str
    live_stats: tuple[int, float] = (0, 1.0)  # BM25 collection statistics over live rows

    @property
    def n(self) -> int:
        return len(self.rowids)

    @property
    def max_rowid(self) -> int:
        return int(self.rowids[-1]) if len(self.rowids) else 0

    def allowed(self, filters: Filter | None) -> np.ndarray:
        """Live rows matching ``filters`` (a dict spec is accepted too)."""
        mask = self.columns.mask(parse_filters(filters))
        return self.alive if mask is None else self.alive & mask


def empty_snapshot(dim: int | None, db_uuid: str) -> Snapshot:
    empty_seg = Postings.build(np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.float32))
    vectors = None
    if dim is not None:
        vectors = VectorIndex(np.zeros((0, dim), np.float32), np.zeros(0, bool))
    return Snapshot(
        rowids=np.zeros(0, np.int64),
        ids=[],
        alive=np.zeros(0, bool),
        bm25=BM25Index((empty_seg,), np.zeros(0, np.float32)),
        columns=MetadataColumns(),
        vectors=vectors,
        generation=-1,
        db_uuid=db_uuid,
    )


def live_mask(rowids: np.ndarray, db_rowids: np.ndarray) -> np.ndarray:
    """Which of the snapshot's ``rowids`` (ascending) are still in the database (ascending too)."""
    alive = np.zeros(len(rowids), bool)
    if len(rowids) and len(db_rowids):
        pos = np.searchsorted(rowids, db_rowids)
        inside = pos < len(rowids)
        pos_in = pos[inside]
        hit = rowids[pos_in] == db_rowids[inside]
        alive[pos_in[hit]] = True
    return alive


def append_rows(
    snap: Snapshot, alive: np.ndarray, rows: Sequence[IndexRow], *, generation: int, dim: int | None
) -> Snapshot:
    """``snap`` with tombstones ``alive`` and ``rows`` (past its last row id) appended.

    The new snapshot's vectors carry no HNSW graph: the store attaches (and grows) its own.
    """
    start = snap.n
    m = len(rows)
    rowids = np.concatenate([snap.rowids, np.fromiter((r[0] for r in rows), np.int64, m)])
    ids = snap.ids + [r[1] for r in rows]
    alive = np.concatenate([alive, np.ones(m, bool)])
    lengths = np.concatenate([snap.bm25.lengths, np.fromiter((r[5] for r in rows), np.float32, m)])
    segments = snap.bm25.segments
    if m:
        terms = [np.frombuffer(r[3], np.int32) for r in rows]
        tfs = np.concatenate([np.frombuffer(r[4], np.int32) for r in rows]).astype(np.float32)
        row_pos = np.repeat(np.arange(start, start + m, dtype=np.int32), [len(t) for t in terms])
        segments = merge_segments(segments, Postings.build(row_pos, np.concatenate(terms), tfs))
    columns = snap.columns.append([json.loads(r[2]) for r in rows]) if m else snap.columns
    vectors = None if dim is None else _append_vectors(snap.vectors, rows, start, dim)
    bm25 = BM25Index(segments, lengths)
    return Snapshot(
        rowids=rowids,
        ids=ids,
        alive=alive,
        bm25=bm25,
        columns=columns,
        vectors=vectors,
        generation=generation,
        db_uuid=snap.db_uuid,
        live_stats=bm25.live_stats(alive),
    )


def merge_segments(segments: tuple[Postings, ...], new: Postings) -> tuple[Postings, ...]:
    """(base,) or (base, delta): new postings join the delta, which joins the base when large."""
    base = segments[0]
    if not base.nnz():
        return (new,)
    delta = Postings.merge([*segments[1:], new])
    if delta.nnz() > DELTA_MERGE_SHARE * (base.nnz() + delta.nnz()):
        return (Postings.merge([base, delta]),)
    return (base, delta)


def _append_vectors(old: VectorIndex | None, rows: Sequence[IndexRow], start: int, dim: int) -> VectorIndex:
    m = len(rows)
    prev = old.matrix if old is not None else np.zeros((0, dim), np.float32)
    has_prev = old.has_vec if old is not None else np.zeros(0, bool)
    n = start + m
    # amortised growth: old snapshots keep viewing rows [:start] of the same buffer; those rows
    # are only ever written where the old snapshot has no vector (fill_vectors), which its
    # searches never read, so readers need no copy
    base = prev.base if isinstance(prev.base, np.ndarray) and prev.base.ndim == 2 else None
    if base is not None and base.shape[0] >= n and prev.shape[0] == start:
        buf = base
    else:
        buf = np.zeros((max(n, int(n * 1.25) + 1024), dim), np.float32)
        buf[:start] = prev
    has_vec = np.concatenate([has_prev, np.zeros(m, bool)])
    for i, r in enumerate(rows):
        if r[6] is not None:
            buf[start + i] = np.frombuffer(r[6], np.float32)
            has_vec[start + i] = True
    return VectorIndex(buf[:n], has_vec)


def fill_vectors(
    vectors: VectorIndex, rowids: np.ndarray, filled: Sequence[tuple[int, bytes]]
) -> tuple[VectorIndex, np.ndarray]:
    """``vectors`` with the rows ``filled`` ((row id, vector bytes), set after the snapshot was
    taken) written in; returns it and their positions.

    Rows that had no vector are written into the shared buffer (older snapshots do not read
    them); a row whose vector is *replaced* forces a copy, so older snapshots keep theirs.
    """
    wanted = np.fromiter((r for r, _ in filled), np.int64, len(filled))
    pos = np.searchsorted(rowids, wanted)
    inside = pos < len(rowids)
    inside[inside] = rowids[pos[inside]] == wanted[inside]
    keep = np.flatnonzero(inside)
    pos = pos[keep]
    matrix = vectors.matrix
    if len(pos) and vectors.has_vec[pos].any():
        matrix = matrix.copy()
    for p, i in zip(pos.tolist(), keep.tolist(), strict=True):
        matrix[p] = np.frombuffer(filled[i][1], np.float32)
    has_vec = vectors.has_vec.copy()
    has_vec[pos] = True
    return VectorIndex(matrix, has_vec, vectors.hnsw), pos
