"""On-disk embedding cache keyed by (embedder name, content hash).

Re-indexing a source embeds only chunks whose text changed: every other vector comes from here
(counted in ``EMBED_CACHE_HITS``). One SQLite file (WAL mode) holds all models and KBs, so two
knowledge bases over the same documents share vectors too.

Example::

    >>> cache = EmbeddingCache(tmp_dir, model=emb.name)
    >>> vectors, n_embedded = embed_chunks(emb, [c.embed_text for c in chunks], cache)
    >>> vectors2, n2 = embed_chunks(emb, [c.embed_text for c in chunks], cache)
    >>> n2
    0
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from zhiwen.documents import content_hash
from zhiwen.embed.base import Embedder
from zhiwen.embed.batch import embed_passages_batched
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

    def put_many(self, items: Mapping[str, np.ndarray], model: str | None = None) -> None:
        name = self._model(model)
        rows = [(name, h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in items.items()]
        with self._lock:
            self._conn.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)", rows)
            self._conn.commit()

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
    embedded once.
    """
    n = len(texts)
    if n == 0:
        return np.zeros((0, embedder.dim), dtype=np.float32), 0
    hashes = [content_hash(t) for t in texts]
    known: dict[str, np.ndarray] = {}
    if cache is not None:
        known = {
            h: v for h, v in cache.get_many(hashes, model=embedder.name).items() if v.shape[0] == embedder.dim
        }
        hits = sum(1 for h in hashes if h in known)
        if hits:
            EMBED_CACHE_HITS.inc(hits)
    todo: dict[str, str] = {}
    for h, t in zip(hashes, texts, strict=True):
        if h not in known and h not in todo:
            todo[h] = t
    if todo:
        fresh = embed_passages_batched(embedder, list(todo.values()), batch_size, progress)
        new = dict(zip(todo.keys(), fresh, strict=True))
        if cache is not None:
            cache.put_many(new, model=embedder.name)
        known.update(new)
    log.debug("embedded %d of %d texts (%d from cache)", len(todo), n, n - len(todo))
    return np.stack([known[h] for h in hashes]).astype(np.float32, copy=False), len(todo)
