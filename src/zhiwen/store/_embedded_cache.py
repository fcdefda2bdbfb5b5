"""On-disk cache of the embedded store's derived index, so a new process starts warm.

Layout (in the store's ``index/`` directory)::

    cache.npz           the snapshot: row ids, chunk ids, tombstones, BM25 postings, metadata
                        columns, vectors; plus the generation and database uuid it was built from
    hnsw-<token>.faiss  the faiss HNSW graph, when the store has one; ``cache.npz`` names its token
                        and holds which of its rows it covers (``hnsw_covered``)

Both files are written with :func:`zhiwen.fsutil.atomic_path` — graph first, then the cache
that points at it, then older graphs are removed — so a crash at any point leaves either the
previous pair or the new one. The cache is only an optimisation: a cache that is missing,
corrupt, of another version or of another database (uuid) is ignored and the index is rebuilt
from SQLite; a failed save is logged, never raised.

Example::

    cache = IndexCache(store_dir / "index")
    cache.save(snap, hnsw)                    # True when written
    loaded = cache.load(db_uuid=db.uuid, dim=384)
    if loaded is not None:
        snap, hnsw = loaded                   # hnsw None when no matching graph was saved
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

import numpy as np

from zhiwen.fsutil import atomic_path
from zhiwen.store._bm25 import BM25Index, Postings
from zhiwen.store._columns import MetadataColumns, pack_strs, unpack_strs
from zhiwen.store._embedded_index import Snapshot
from zhiwen.store._vectors import HNSW, VectorIndex

log = logging.getLogger(__name__)

CACHE_NAME = "cache.npz"
CACHE_VERSION = 1


class IndexCache:
    """The ``index/`` directory of one embedded store (see module docstring)."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    @property
    def path(self) -> Path:
        return self.directory / CACHE_NAME

    def _graph_path(self, token: str) -> Path:
        return self.directory / f"hnsw-{token}.faiss"

    def save(self, snap: Snapshot, hnsw: HNSW | None) -> bool:
        """Write ``snap`` (and ``hnsw``); False, after a warning, when that failed."""
        seg = snap.bm25.segments[0] if len(snap.bm25.segments) == 1 else Postings.merge(snap.bm25.segments)
        token = uuid.uuid4().hex[:12] if hnsw is not None else ""
        arrays: dict[str, np.ndarray] = {
            "version": np.array([CACHE_VERSION], np.int64),
            "generation": np.array([snap.generation], np.int64),
            "db_uuid": pack_strs([snap.db_uuid]),
            "hnsw_token": pack_strs([token]),
            "rowids": snap.rowids,
            "ids": pack_strs(snap.ids),
            "alive": snap.alive,
            "lengths": snap.bm25.lengths,
            "indptr": seg.indptr,
            "post_rows": seg.rows,
            "post_tfs": seg.tfs,
            **snap.columns.to_arrays(),
        }
        if snap.vectors is not None:
            arrays["matrix"] = snap.vectors.matrix
            arrays["has_vec"] = snap.vectors.has_vec
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            if hnsw is not None:
                with atomic_path(self._graph_path(token)) as tmp:
                    arrays["hnsw_covered"] = hnsw.save(tmp)
            with atomic_path(self.path) as tmp:
                np.savez(tmp, **arrays)  # type: ignore[arg-type]
            for old in self.directory.glob("hnsw-*.faiss"):
                if old.name != self._graph_path(token).name:
                    old.unlink(missing_ok=True)
        except (OSError, RuntimeError) as exc:  # faiss reports I/O errors as RuntimeError
            log.warning("could not save index cache in %s: %s", self.directory, exc)
            return False
        return True

    def load(self, *, db_uuid: str, dim: int | None) -> tuple[Snapshot, HNSW | None] | None:
        """The saved snapshot and its graph, or None when there is no usable cache."""
        path = self.path
        if not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as z:
                arrays = {name: z[name] for name in z.files}
            if int(arrays["version"][0]) != CACHE_VERSION or unpack_strs(arrays["db_uuid"])[0] != db_uuid:
                return None
            vectors = None
            hnsw = None
            if dim is not None:
                matrix = arrays.get("matrix")
                if matrix is None or matrix.shape[1:] != (dim,):
                    return None
                token = unpack_strs(arrays["hnsw_token"])[0]
                graph = self._graph_path(token)
                if token and graph.exists():
                    # caches from before vector fills have no mask: every row was covered
                    covered = arrays.get("hnsw_covered")
                    loaded = HNSW.load(graph, covered if covered is not None else arrays["has_vec"])
                    hnsw = loaded if loaded.size <= len(matrix) else None
                vectors = VectorIndex(matrix, arrays["has_vec"], hnsw)
            snap = Snapshot(
                rowids=arrays["rowids"],
                ids=unpack_strs(arrays["ids"]),
                alive=arrays["alive"],
                bm25=BM25Index(
                    (Postings(arrays["indptr"], arrays["post_rows"], arrays["post_tfs"]),), arrays["lengths"]
                ),
                columns=MetadataColumns.from_arrays(arrays),
                vectors=vectors,
                generation=int(arrays["generation"][0]),
                db_uuid=db_uuid,
            )
        except Exception as exc:  # a corrupt or foreign cache is rebuilt from the database
            log.warning("ignoring index cache %s: %s", path, exc)
            return None
        return snap, hnsw
