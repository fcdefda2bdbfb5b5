"""Phase 2 of an index run: fill the vectors the store is missing, batch by batch, resumably.

The KB is already BM25-searchable (phase 1 stored every chunk, with the vectors the embedding
cache had). This phase asks the store which chunks still lack a vector, takes what the cache
has, and embeds the rest, shortest passages first (less padding per batch), in a worker
thread (:class:`~zhiwen.embed.batch.BatchWorker`). Each batch is committed to the embedding
cache and to the store (``set_vectors``) before the next one is taken, so Ctrl-C, ``kill -9`` or
a failing model lose at most the batch in flight; a re-run resumes from there.

Only one process fills a KB at a time (the KB's ``fill`` lock). Each commit takes the KB's
writer locks for a moment (:meth:`KnowledgeBase.writing`) and checks that the chunk still has
the text that was embedded: another run may have changed it meanwhile, and a vector must never
land on the wrong text. Chunks added while the fill runs are picked up by the next round.

Example::

    report = fill_vectors(kb, progress=NullProgress())
    report.embedded, report.resumed, report.missing
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from zhiwen.config import Settings
from zhiwen.embed.base import Embedder
from zhiwen.embed.batch import BatchWorker
from zhiwen.errors import InvalidParameter, KnowledgeBaseBusy
from zhiwen.ingest.memory import release_memory
from zhiwen.kb.config import KBConfig
from zhiwen.kb.interrupt import deferred
from zhiwen.kb.progress import IndexProgress
from zhiwen.kb.rates import Rates
from zhiwen.kb.writer import KBLock, LockKind
from zhiwen.store import Store

log = logging.getLogger(__name__)

_PAGE = 2_000  # chunks read from the store at a time
_ROUNDS = 3  # re-asks for missing ids (chunks added by a concurrent run)
_LARGE_FILL = 2_000  # passages embedded, past which the fill hands memory back at the end


class FillTarget(Protocol):
    """What a fill needs of its KB (:class:`~zhiwen.kb.knowledge_base.KnowledgeBase` is one)."""

    @property
    def store(self) -> Store: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def config(self) -> KBConfig: ...

    def lock(self, kind: LockKind = "write") -> KBLock:
        """The KB's cross-process ``write`` or ``fill`` lock."""
        ...

    def writing(
        self, *, wait: bool = True, on_wait: Callable[[str], None] | None = None
    ) -> AbstractContextManager[None]:
        """The KB's writer locks, held for one commit of vectors."""
        ...

    def real_embedder(self) -> Embedder:
        """The provider itself (its ``name`` keys the embedding cache)."""
        ...

    def embedding_cache(self) -> Any:
        """The home's embedding cache (a new connection; close it), or None."""
        ...

    def set_vectors(self, ids: Sequence[str], vectors: np.ndarray) -> int:
        """Store vectors of existing chunks (the write lock held)."""
        ...


@dataclass(slots=True)
class FillReport:
    total: int = 0  # chunks in the KB
    had: int = 0  # chunks that had a vector when the fill began
    from_cache: int = 0  # vectors taken from the embedding cache
    embedded: int = 0  # passages sent to the model (unique texts)
    filled: int = 0  # chunks that got a vector in this fill
    missing: int = 0  # chunks still without a vector at the end
    busy: bool = False  # another process holds the fill (wait=False)
    embedded_chars: int = 0  # characters of the passages sent to the model
    embed_seconds: float = 0.0  # time spent embedding them (commits included)

    @property
    def resumed(self) -> int:
        """Chunks that needed no model call: vectors already stored or cached."""
        return self.had + self.from_cache


def fill_vectors(
    kb: FillTarget,
    *,
    progress: IndexProgress,
    wait: bool = True,
    cancel: threading.Event | None = None,
    batch_size: int | None = None,
) -> FillReport:
    """Give every chunk of ``kb`` a vector (see the module docstring).

    ``batch_size`` defaults to the embedding settings'; a server filling behind live traffic
    passes a small one, so a query's embedding never waits long behind a batch.
    """
    report = FillReport()
    fill_lock = kb.lock("fill")
    try:
        fill_lock.acquire(wait=wait, on_wait=progress.note, cancel=cancel)
    except KnowledgeBaseBusy:
        if wait:
            raise  # cancelled while waiting
        report.busy = True
        report.missing = len(kb.store.missing_vector_ids())
        return report
    try:
        size = max(1, int(batch_size or kb.settings.embedding.batch_size))
        _fill(kb, report, progress, cancel, size)
    finally:
        fill_lock.release()
    report.missing = len(kb.store.missing_vector_ids())
    # the next setup's ETA starts from what this machine really did
    Rates(kb.settings).record_embed(
        kb.config.embedder, chars=report.embedded_chars, seconds=report.embed_seconds
    )
    if report.embedded >= _LARGE_FILL:
        release_memory()  # the texts, batches and engine buffers of a large fill go back (#29)
    return report


def _fill(
    kb: FillTarget,
    report: FillReport,
    progress: IndexProgress,
    cancel: threading.Event | None,
    size: int,
) -> None:
    store = kb.store
    embedder = kb.real_embedder()
    cache = kb.embedding_cache()
    try:
        for round_no in range(_ROUNDS):
            missing = store.missing_vector_ids()
            if round_no == 0:
                report.total = store.count()
                report.had = max(report.total - len(missing), 0)
            if not missing or (cancel is not None and cancel.is_set()):
                break
            todo = _take_cached(kb, missing, embedder.name, cache, report)
            total = report.total if round_no == 0 else store.count()
            done = total - sum(len(ids) for _, _, ids in todo)
            progress.start("dense", total, completed=done, resumed=report.resumed)
            if todo:
                _embed(kb, todo, embedder, cache, report, progress, cancel, size)
        progress.finish("dense")
    finally:
        if cache is not None:
            cache.close()


# (content hash, text, chunk ids with that text)
_Todo = list[tuple[str, str, list[str]]]


def _take_cached(kb: FillTarget, missing: Sequence[str], model: str, cache: Any, report: FillReport) -> _Todo:
    """Commit what the cache has for ``missing``; return the texts still to embed, shortest first."""
    by_hash: dict[str, tuple[str, list[str]]] = {}
    for start in range(0, len(missing), _PAGE):
        for chunk in kb.store.get_chunks(missing[start : start + _PAGE]):
            entry = by_hash.setdefault(chunk.content_hash, (chunk.embed_text, []))
            entry[1].append(chunk.id)
    if cache is not None and by_hash:
        dim = kb.store.dim
        hashes = list(by_hash)
        for start in range(0, len(hashes), _PAGE):
            part = hashes[start : start + _PAGE]
            found = {h: v for h, v in cache.get_many(part, model=model).items() if v.shape[0] == dim}
            if found:
                n = _commit(kb, {h: by_hash[h][1] for h in found}, found, None, model)
                report.from_cache += n
                report.filled += n
            for h in found:
                by_hash.pop(h, None)
    todo = [(h, text, ids) for h, (text, ids) in by_hash.items()]
    todo.sort(key=lambda item: len(item[1]))
    return todo


def _embed(
    kb: FillTarget,
    todo: _Todo,
    embedder: Any,
    cache: Any,
    report: FillReport,
    progress: IndexProgress,
    cancel: threading.Event | None,
    size: int,
) -> None:
    batches = [todo[i : i + size] for i in range(0, len(todo), size)]
    started = time.perf_counter()
    with BatchWorker(embedder, ([text for _, text, _ in batch] for batch in batches)) as worker:
        for batch, vectors in zip(batches, worker, strict=False):
            if vectors.shape != (len(batch), kb.store.dim):
                raise InvalidParameter(
                    f"embedder {embedder.name} gives shape {vectors.shape}, store dim {kb.store.dim}",
                    message=f"向量模型输出维度与知识库（{kb.store.dim}）不一致",
                )
            new = {h: vectors[i] for i, (h, _, _) in enumerate(batch)}
            n = _commit(kb, {h: ids for h, _, ids in batch}, new, cache, embedder.name)
            report.embedded += len(batch)
            report.embedded_chars += sum(len(text) for _, text, _ in batch)
            report.embed_seconds = time.perf_counter() - started
            report.filled += n
            progress.advance("dense", sum(len(ids) for _, _, ids in batch))
            if cancel is not None and cancel.is_set():
                return


def _commit(
    kb: FillTarget,
    ids_by_hash: dict[str, list[str]],
    vectors: dict[str, np.ndarray],
    cache: Any,
    model: str,
) -> int:
    """Commit one batch: to the embedding cache (when given), then ``set_vectors`` for the chunks
    that still have the text that was embedded. Returns the chunks updated."""
    # the locks may be waited for (interruptible); the commit itself is not cut by Ctrl-C
    with kb.writing(on_wait=_log_wait), deferred():
        if cache is not None:
            cache.put_many(vectors, model=model)
        wanted = [cid for ids in ids_by_hash.values() for cid in ids]
        current = {c.id: c.content_hash for c in kb.store.get_chunks(wanted)}
        ids: list[str] = []
        rows: list[np.ndarray] = []
        for h, cids in ids_by_hash.items():
            for cid in cids:
                if current.get(cid) == h:
                    ids.append(cid)
                    rows.append(vectors[h])
        if not ids:
            return 0
        return kb.set_vectors(ids, np.stack(rows))


def _log_wait(message: str) -> None:
    log.info("%s", message)
