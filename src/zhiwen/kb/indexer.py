"""The two phases of :meth:`KnowledgeBase.index_documents` (see :mod:`zhiwen.kb.knowledge_base`).

* :func:`index_lexical` — phase 1: tokens, one upsert (with the vectors the embedding cache
  has), pruning, one revision bump, all under the KB's write lock;
* :func:`index_dense` — phase 2 in the foreground (:mod:`zhiwen.kb.dense`), handed to the
  process's background filler, or skipped;
* :func:`index_one_phase` — stores that do not write lexical-first (their ``features``), and
  KBs without vectors: embed all, then one atomic upsert.

Example::

    indexer.index_lexical(kb, docs, chunks, prune=True, prog=NullProgress(), report=report, wait=True)
    indexer.index_dense(kb, "background", NullProgress(), report, wait=True)
"""

from __future__ import annotations

import contextlib
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np

from zhiwen.curation import Curation, KBTokenizer
from zhiwen.documents import Chunk, Document
from zhiwen.embed.base import Embedder
from zhiwen.errors import InvalidParameter
from zhiwen.kb import lexical
from zhiwen.kb.dense import FillReport, FillTarget
from zhiwen.kb.diskfaults import disk_errors
from zhiwen.kb.interrupt import deferred
from zhiwen.kb.progress import IndexProgress

# passages in the first committed slice of a new KB: searchable about a second after phase 1 starts
FIRST_SLICE = 256

DenseMode = Literal["foreground", "background", "skip"]
DENSE_MODES = ("foreground", "background", "skip")


class IndexTarget(FillTarget, Protocol):
    """What the two phases need of their KB (:class:`~zhiwen.kb.knowledge_base.KnowledgeBase` is one)."""

    @property
    def name(self) -> str: ...

    @property
    def tokenizer(self) -> KBTokenizer: ...

    @property
    def embedder(self) -> Embedder | None: ...

    @property
    def curation(self) -> Curation: ...

    @property
    def revision(self) -> int: ...

    @property
    def vectors_enabled(self) -> bool: ...

    def cached_vectors(self, chunk_list: list[Chunk]) -> dict[str, np.ndarray]:
        """Content hash → cached vector for the chunks of this run."""
        ...

    def reading(self) -> AbstractContextManager[None]:
        """A read of the store that no write of this process cuts in two."""
        ...

    def changing(self) -> AbstractContextManager[None]:
        """A store write: this process's searches wait; disk faults become clear errors."""
        ...

    def bump_revision(self) -> None:
        """One more revision in ``kb.json`` (the write lock held)."""
        ...

    def fill_vectors(self, *, progress: IndexProgress, wait: bool = True) -> FillReport:
        """Phase 2 in the foreground."""
        ...

    def fill_vectors_behind(self) -> None:
        """Phase 2 handed to this process's background filler."""
        ...

    def build_vector_index(self) -> None:
        """Ask the store to build its vector index in the background."""
        ...


@dataclass(slots=True)
class IndexReport:
    documents: int = 0
    chunks: int = 0
    embedded: int = 0  # passages actually sent to the model (the rest came from a cache)
    deleted_documents: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    changed: bool = False  # False when the store already held exactly this content
    revision: int = 0
    resumed: int = 0  # chunks whose vectors were already stored or cached (not recomputed)
    vectors_missing: int = 0  # chunks still without a vector when the call returned
    lexical_seconds: float = 0.0  # until the KB was BM25-searchable
    dense: str = "foreground"


def index_lexical(
    kb: IndexTarget,
    docs: list[Document],
    chunk_list: list[Chunk],
    prune: bool,
    prog: IndexProgress,
    report: IndexReport,
    wait: bool,
) -> None:
    """Phase 1: every chunk stored (with the vectors the cache has) and the revision bumped.

    A KB that holds nothing yet is stored in growing slices of whole documents, each tokenised
    and committed before the next, so it answers searches after the first slice (a second
    instead of the whole corpus's tokenisation). A KB with content gets one atomic upsert: a
    failure leaves it exactly as it was.
    """
    prog.start("lexical", len(chunk_list))
    known = kb.cached_vectors(chunk_list)
    progressive = kb.store.count() == 0  # a hint; re-checked under the lock
    tokens = None if progressive else lexical.tokenize(kb.tokenizer, chunk_list, prog)
    with kb.writing(wait=wait, on_wait=prog.note):
        if tokens is None and kb.store.count() != 0:
            tokens = lexical.tokenize(kb.tokenizer, chunk_list, prog)  # filled meanwhile
        if tokens is None:
            try:
                _store_in_slices(kb, docs, chunk_list, known, prog)
            except BaseException:  # Ctrl-C or a failure between slices: what went in is kept
                if kb.store.count():
                    with contextlib.suppress(Exception), deferred():
                        kb.bump_revision()
                raise
            _commit(kb, docs, chunk_list, prune, False, report)
        else:
            with kb.reading():
                same = prune and _unchanged(kb, docs, chunk_list)
            if not same:
                _store(kb, docs, chunk_list, tokens, known)
            _commit(kb, docs, chunk_list, prune, same, report)
    prog.finish("lexical")


def _unchanged(kb: IndexTarget, docs: list[Document], chunk_list: list[Chunk]) -> bool:
    """A full re-sync that brings nothing new (chunks added by hand to other documents aside)."""
    outside = kb.curation.rows_outside({d.id for d in docs} | {c.doc_id for c in chunk_list})
    return lexical.unchanged(kb.store, docs, chunk_list, outside=outside)


def _store(
    kb: IndexTarget,
    docs: list[Document],
    chunk_list: list[Chunk],
    tokens: list[list[str]],
    known: dict[str, np.ndarray],
) -> None:
    """One atomic upsert; the cached vectors go in with it (or right after, when some are missing)."""
    hashes = [c.content_hash for c in chunk_list]
    complete = all(h in known for h in hashes)
    vectors = np.stack([known[h] for h in hashes]) if complete else None
    with kb.changing():
        kb.store.upsert(chunk_list, tokens=tokens, vectors=vectors, parents=docs)
    if vectors is None and known:
        _set_known_vectors(kb, chunk_list, known)


def _store_in_slices(
    kb: IndexTarget,
    docs: list[Document],
    chunk_list: list[Chunk],
    known: dict[str, np.ndarray],
    prog: IndexProgress,
) -> None:
    """Whole documents in slices of FIRST_SLICE, then twice as many each time (see index_lexical)."""
    by_doc: dict[str, list[Chunk]] = {}
    for c in chunk_list:
        by_doc.setdefault(c.doc_id, []).append(c)
    parents = {d.id: d for d in docs}
    size = FIRST_SLICE
    part_chunks: list[Chunk] = []
    part_docs: list[Document] = []
    order = list(by_doc) + [d.id for d in docs if d.id not in by_doc]
    for i, doc_id in enumerate(order):
        part_chunks.extend(by_doc.get(doc_id, ()))
        if doc_id in parents:
            part_docs.append(parents[doc_id])
        if len(part_chunks) >= size or i == len(order) - 1:
            tokens = lexical.tokenize(kb.tokenizer, part_chunks, prog)
            _store(kb, part_docs, part_chunks, tokens, known)
            size *= 2
            part_chunks, part_docs = [], []


def _set_known_vectors(kb: IndexTarget, chunk_list: list[Chunk], known: dict[str, np.ndarray]) -> None:
    """After a vector-less upsert: the cached vectors of chunks that still have none."""
    missing = set(kb.store.missing_vector_ids())
    todo = [c for c in chunk_list if c.id in missing and c.content_hash in known]
    if todo:
        kb.set_vectors([c.id for c in todo], np.stack([known[c.content_hash] for c in todo]))


def _commit(
    kb: IndexTarget,
    docs: list[Document],
    chunk_list: list[Chunk],
    prune: bool,
    same: bool,
    report: IndexReport,
) -> None:
    """Prune documents no longer in the source, then bump the revision once (write lock held)."""
    stale: list[str] = []
    removed = 0
    if prune:
        keep = {d.id for d in docs} | {c.doc_id for c in chunk_list}
        gone = sorted(kb.store.doc_ids() - keep)
        if gone:
            # a document holding chunks added by hand or FAQ entries keeps those
            stale, parsed = kb.curation.pruning(gone)
            with kb.changing():
                removed = kb.store.delete(doc_ids=stale, chunk_ids=parsed) if stale or parsed else 0
                kb.curation.forget(doc_ids=stale, chunk_ids=parsed)
    report.deleted_documents = len(stale)
    report.changed = not same or bool(stale) or bool(removed)
    if report.changed:
        with deferred(), disk_errors(kb.name):  # the rows are committed: the revision must follow
            kb.bump_revision()
    report.revision = kb.revision


def index_dense(
    kb: IndexTarget, dense: DenseMode, prog: IndexProgress, report: IndexReport, wait: bool
) -> None:
    """Phase 2, as ``dense`` says; ``report`` learns what was resumed and what is still missing.
    A text-only KB (``kb.vectors_enabled`` false) is never filled, whatever ``dense`` says."""
    if not kb.vectors_enabled:
        dense = "skip"
    if dense == "foreground":
        fill = kb.fill_vectors(progress=prog, wait=wait)
        report.embedded, report.resumed, report.vectors_missing = fill.embedded, fill.resumed, fill.missing
        if not fill.busy:
            kb.build_vector_index()
        return
    missing = len(kb.store.missing_vector_ids())
    report.vectors_missing = missing
    report.resumed = max(kb.store.count() - missing, 0)
    if dense == "background" and missing:
        kb.fill_vectors_behind()
    elif not missing:
        kb.build_vector_index()


def index_one_phase(
    kb: IndexTarget,
    docs: list[Document],
    chunk_list: list[Chunk],
    prune: bool,
    prog: IndexProgress,
    report: IndexReport,
    wait: bool,
) -> None:
    """Stores that do not write lexical-first: embed everything, then one atomic upsert."""
    prog.start("lexical", len(chunk_list))
    tokens = lexical.tokenize(kb.tokenizer, chunk_list, prog)
    vectors: np.ndarray | None = None
    if kb.store.dim is not None and kb.embedder is not None and kb.vectors_enabled:
        vectors, report.embedded = _embed_all(kb, chunk_list)
        report.resumed = len(chunk_list) - report.embedded
    with kb.writing(wait=wait, on_wait=prog.note):
        with kb.reading():
            same = prune and _unchanged(kb, docs, chunk_list)
        if not same:
            with kb.changing():
                kb.store.upsert(chunk_list, tokens=tokens, vectors=vectors, parents=docs)
        _commit(kb, docs, chunk_list, prune, same, report)
    prog.finish("lexical")


def _embed_all(kb: IndexTarget, chunk_list: list[Chunk]) -> tuple[np.ndarray, int]:
    from zhiwen.embed import embed_chunks

    real = kb.real_embedder()
    cache = kb.embedding_cache()
    try:
        vectors, n = embed_chunks(
            real, [c.embed_text for c in chunk_list], cache, batch_size=kb.settings.embedding.batch_size
        )
    finally:
        if cache is not None:
            cache.close()
    if vectors.shape != (len(chunk_list), kb.store.dim):
        raise InvalidParameter(
            f"embedder {real.name} gives vectors of shape {vectors.shape}, store dim {kb.store.dim}",
            message=f"向量模型输出维度与知识库（{kb.store.dim}）不一致",
        )
    return vectors, n
