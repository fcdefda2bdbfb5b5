"""On-disk embedding cache keyed by (embedder name, content hash).

Re-indexing a source embeds only chunks whose text changed: every other vector comes from here
(counted in ``EMBED_CACHE_HITS``). One SQLite file (WAL mode) holds all models and KBs, so two
knowledge bases over the same documents share vectors too.

Vectors are committed batch by batch as they are computed, so a run killed half-way (Ctrl-C,
``kill -9``, a full disk) keeps every finished batch and a re-run embeds only the rest. The cache
is an accelerator, never a reason to fail: when it cannot be written (read-only or full disk)
it says so once in the log and the run goes on without it.

Example::

    >>> cache = EmbeddingCache(tmp_dir, model=emb.name)
    >>> vectors, n_embedded = embed_chunks(emb, [c.embed_text for c in chunks], cache)
    >>> vectors2, n2 = embed_chunks(emb, [c.embed_text for c in chunks], cache)
    >>> n2
    0
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from zhiwen.documents import content_hash
from zhiwen.embed.base import Embedder
from zhiwen.embed.batch import progress_columns
from zhiwen.metrics import EMBED_CACHE_HITS

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL,
    hash TEXT NOT NULL,
    vec BLOB NOT NULL,
    PRIMARY KEY (model, hash)
) WITHOUT ROWID
"""
_BATCH = 500  # stays under SQLite's host-parameter limit


def default_cache_dir(home: Path) -> Path:
    return home / "cache" / "embeddings"


class EmbeddingCache:
    """Vectors by (model, content hash) in ``<dir>/embeddings.sqlite``.

    ``model`` set here is the default namespace; :func:`embed_chunks` always passes the
    embedder's name explicitly, so one cache object serves any embedder.
    """

    def __init__(self, directory: str | Path, model: str | None = None) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / "embeddings.sqlite"
        self.model = model
        self.read_only = False  # set when a write failed: later writes are skipped
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(_SCHEMA)
        self._conn.commit()

    def _model(self, model: str | None) -> str:
        name = model or self.model
        if not name:
            raise ValueError("EmbeddingCache needs a model name (constructor or call)")
        return name

    def get_many(self, hashes: Iterable[str], model: str | None = None) -> dict[str, np.ndarray]:
        name = self._model(model)
        wanted = list(dict.fromkeys(hashes))
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for i in range(0, len(wanted), _BATCH):
                part = wanted[i : i + _BATCH]
                marks = ",".join("?" * len(part))
                rows = self._conn.execute(
                    f"SELECT hash, vec FROM embeddings WHERE model = ? AND hash IN ({marks})",
                    [name, *part],
                ).fetchall()
                for h, blob in rows:
                    found[h] = np.frombuffer(blob, dtype=np.float32).copy()
        return found

    def put_many(self, items: Mapping[str, np.ndarray], model: str | None = None) -> bool:
        """Store vectors in one transaction; False (logged once) when the disk refuses the write."""
        name = self._model(model)
        rows = [(name, h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in items.items()]
        if not rows or self.read_only:
            return False
        with self._lock:
            try:
                self._conn.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)", rows)
                self._conn.commit()
            except sqlite3.Error as exc:  # full or read-only disk: keep going without the cache
                with contextlib.suppress(sqlite3.Error):
                    self._conn.rollback()
                self.read_only = True
                log.warning("embedding cache %s not writable (%s); continuing without it", self.path, exc)
                return False
        return True

    def count(self, model: str | None = None) -> int:
        with self._lock:
            if model is None and self.model is None:
                row = self._conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()
            else:
                row = self._conn.execute(
                    "SELECT COUNT(*) FROM embeddings WHERE model = ?", [self._model(model)]
                ).fetchone()
        return int(row[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def cached_vectors(
    embedder: Embedder, hashes: Sequence[str], cache: EmbeddingCache | None
) -> dict[str, np.ndarray]:
    """The cached vectors of ``hashes`` for ``embedder`` (wrong-width entries ignored)."""
    if cache is None or not hashes:
        return {}
    found = cache.get_many(hashes, model=embedder.name)
    known = {h: v for h, v in found.items() if v.shape[0] == embedder.dim}
    hits = sum(1 for h in hashes if h in known)
    if hits:
        EMBED_CACHE_HITS.inc(hits)
    return known


def embed_chunks(
    embedder: Embedder,
    texts: Sequence[str],
    cache: EmbeddingCache | None = None,
    batch_size: int = 32,
    progress: bool = False,
) -> tuple[np.ndarray, int]:
    """Embed passages, reusing cached vectors; returns ``(vectors, number actually embedded)``.

    Texts are keyed by :func:`~zhiwen.documents.content_hash`, the same hash as
    ``Chunk.content_hash`` when ``texts`` are ``chunk.embed_text``. Duplicate texts are
    embedded once. Each batch is committed to ``cache`` before the next one starts, so an
    interrupted call loses at most the batch in flight.
    """
    n = len(texts)
    if n == 0:
        return np.zeros((0, embedder.dim), dtype=np.float32), 0
    if batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    hashes = [content_hash(t) for t in texts]
    known = cached_vectors(embedder, hashes, cache)
    todo: dict[str, str] = {}
    for h, t in zip(hashes, texts, strict=True):
        if h not in known and h not in todo:
            todo[h] = t
    if todo:
        keys, pending = list(todo), list(todo.values())

        def run(advance: Callable[[int], None]) -> None:
            for start in range(0, len(pending), batch_size):
                vecs = embedder.embed_passages(pending[start : start + batch_size])
                new = dict(zip(keys[start : start + len(vecs)], vecs, strict=True))
                if cache is not None:
                    cache.put_many(new, model=embedder.name)
                known.update(new)
                advance(len(vecs))

        if progress:
            from rich.progress import Progress

            with Progress(*progress_columns(), transient=True) as bar:
                task = bar.add_task("向量化", total=len(pending))
                run(lambda k: bar.advance(task, k))
        else:
            run(lambda k: None)
    log.debug("embedded %d of %d texts (%d from cache)", len(todo), n, n - len(todo))
    return np.stack([known[h] for h in hashes]).astype(np.float32, copy=False), len(todo)
