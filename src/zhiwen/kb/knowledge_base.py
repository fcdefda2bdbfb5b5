"""One named knowledge base: tokenizer + embedder + store + hybrid retriever.

Indexing runs in two phases (``index_documents``):

1. **lexical** — validate, chunk, tokenise, then one ``store.upsert`` without the vectors the
   embedding cache does not have, and a revision bump: from here on the KB is BM25-searchable,
   from this and from every other process (seconds, even for a large corpus). Bad input fails
   before the store is touched and leaves the existing index as it was.
2. **dense** — the missing vectors, batch by batch, each batch committed to the embedding cache
   and the store before the next (:mod:`zhiwen.kb.dense`). ``dense="foreground"`` (the default:
   the call returns a complete KB), ``"background"`` (a worker thread of this process,
   :mod:`zhiwen.kb.background`, that :mod:`zhiwen.kb.registry` runs and hands each KB it opens;
   the server and ``zhiwen demo`` use it) or ``"skip"``. A search
   during the fill fuses what exists and reports the ``dense_coverage``; an interrupted or failed
   fill leaves a searchable KB that the next run (or the server's start) completes.

One writer per KB across processes (:mod:`zhiwen.kb.writer`): phase 1 and every commit of
vectors hold the KB's write lock, and the revision is re-read from ``kb.json`` under it, so
concurrent runs bump it by exactly one each. A store whose features say it does not write
lexical-first (:class:`~zhiwen.store.base.StoreFeatures`; a minimal custom backend) gets the
one-phase run: everything embedded first, then one atomic upsert.

Obtain instances with :func:`zhiwen.kb.open_kb` (one shared, thread-safe instance per home,
name and process).

Example::

    >>> kb = open_kb("manual", create=True, embedder="hash")
    >>> report = kb.index_path(Path("docs"), fmt="markdown")
    >>> report = kb.index_documents(docs, dense="background")   # returns once BM25-searchable
    >>> kb.info()["dense_coverage"]
    0.42
    >>> [h.chunk.title for h in kb.search("怎么安装", top_k=3)]
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from zhiwen.config import Settings
from zhiwen.curation import CuratedStore, Curation, KBTokenizer
from zhiwen.documents import Chunk, Document
from zhiwen.embed.base import Embedder
from zhiwen.errors import InvalidParameter, KnowledgeBaseNotFound
from zhiwen.ingest.base import Corpus
from zhiwen.kb import indexer, lexical
from zhiwen.kb.config import KBConfig, load_config, mask_url
from zhiwen.kb.dense import FillReport, fill_vectors
from zhiwen.kb.diskfaults import disk_errors, write_config
from zhiwen.kb.embedding import VECTORS_KEY, KBEmbedding
from zhiwen.kb.indexer import DENSE_MODES, DenseMode, IndexReport
from zhiwen.kb.interrupt import deferred
from zhiwen.kb.lazy_embedder import LazyEmbedder
from zhiwen.kb.locks import RWLock
from zhiwen.kb.progress import IndexProgress, NullProgress, RichIndexProgress
from zhiwen.kb.search import KBSearch
from zhiwen.kb.writer import KBLock, LockKind, kb_lock, wait_message
from zhiwen.retrieve.hybrid import HybridRetriever
from zhiwen.store import Store, open_store

log = logging.getLogger(__name__)

__all__ = ["DENSE_MODES", "VECTORS_KEY", "DenseMode", "IndexReport", "KnowledgeBase", "config_stamp"]


def config_stamp(path: Path) -> int:
    """The kb.json's modification time (-1 when absent): tells a re-index by another process."""
    try:
        return (path / "kb.json").stat().st_mtime_ns
    except OSError:
        return -1


class KnowledgeBase(KBEmbedding, KBSearch):
    """One named knowledge base: tokenizer + embedder + store + hybrid retriever.

    Obtain it with :func:`open_kb`; all methods are safe to call from several threads.
    """

    name: str
    config: KBConfig

    def __init__(
        self,
        config: KBConfig,
        *,
        path: Path,
        settings: Settings,
        store: Store | None = None,
        embedder: Embedder | None = None,
        fill_behind: Callable[[KnowledgeBase], None] | None = None,
    ) -> None:
        """``fill_behind`` queues this KB's missing vectors on the process's background filler:
        the registry that opens the KB owns that filler (``dense="background"`` needs it)."""
        self.name = config.name
        self.config = config
        self.path = path
        self.settings = settings
        self.store: Store = store if store is not None else self._open_store()
        self.tokenizer = KBTokenizer(mode=config.tokenizer_mode, user_dict=config.extra.get("user_dict"))
        if embedder is None and self.store.dim is not None:
            embedder = LazyEmbedder(config.embedder, config.dim, settings)  # type: ignore[assignment]
        self.embedder: Embedder | None = embedder
        self._rw = RWLock()
        self._index_lock = threading.RLock()
        self._closed = False
        self._fill_behind = fill_behind
        self.config_stamp = config_stamp(path)  # which kb.json this instance reflects
        #: the owners' chunks, dictionary and synonyms (``curation.sqlite``; none until a change)
        self.curation = Curation(self)
        # the search sees question rows as their chunk and expands queries with synonyms
        searched = CuratedStore(self.store, self.tokenizer, lambda: self.curation.has_questions)
        self.retriever = HybridRetriever(
            searched, self.tokenizer, self.embedder, settings=settings.retrieval, kb_name=self.name
        )
        self.curation.resume()  # a dictionary change another process could not finish

    def _open_store(self) -> Store:
        return open_store(self.config.store, path=self.path / "store", name=self.name, dim=self.config.dim)

    def __repr__(self) -> str:
        return (
            f"KnowledgeBase(name={self.name!r}, embedder={self.config.embedder!r}, path={str(self.path)!r})"
        )

    # -- config -----------------------------------------------------------------------------
    @property
    def revision(self) -> int:
        return self.config.revision

    @property
    def config_path(self) -> Path:
        return self.path / "kb.json"

    def save_config(self) -> None:
        write_config(self.path, json.dumps(self.config.model_dump(), ensure_ascii=False, indent=2) + "\n")
        self.config_stamp = config_stamp(self.path)

    def _reload_revision(self) -> None:
        """Under the write lock: take the revision (and app/extra) another process may have written."""
        if not self.config_path.is_file():
            raise KnowledgeBaseNotFound(
                f"knowledge base {self.name!r} was deleted meanwhile",
                message=f"知识库「{self.name}」已被删除",
                data={"kb": self.name},
            )
        disk = load_config(self.path, self.name)
        keep = ("revision", "app", "extra", "sources", "sync_interval")  # what others may have changed
        update = {k: getattr(disk, k) for k in keep}
        if any(getattr(self.config, k) != v for k, v in update.items()):
            self.config = self.config.model_copy(update=update)

    def bump_revision(self) -> None:
        """One more revision in ``kb.json`` (call it holding :meth:`writing`)."""
        self.config = self.config.model_copy(update={"revision": self.config.revision + 1})
        self.save_config()
        self.retriever.query_cache.clear()  # cheap; keeps memory bounded across re-indexes

    def lock(self, kind: LockKind = "write") -> KBLock:
        """This KB's cross-process ``write`` or ``fill`` lock (:mod:`zhiwen.kb.writer`)."""
        return kb_lock(self.settings, self.name, kind)

    @contextlib.contextmanager
    def writing(self, *, wait: bool = True, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
        """The KB's writer: this process's index lock, the KB's cross-process write lock, the
        store's own writer lock (PostgreSQL: an advisory lock, for writers on other machines),
        and the revision as ``kb.json`` has it now (another process may have bumped it)."""
        with self._index_lock, self.lock("write").hold(wait=wait, on_wait=on_wait), self._store_lock(wait):
            self._reload_revision()
            yield

    def _store_lock(self, wait: bool) -> contextlib.AbstractContextManager[None]:
        message = wait_message(self.name)
        return self.store.writer_lock(wait=wait, on_wait=lambda: log.info("%s (store lock)", message))

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        with self._rw.read():
            yield

    @contextlib.contextmanager
    def changing(self) -> Iterator[None]:
        """A store write: searches of this process wait; disk faults become clear errors."""
        with self._rw.write(), disk_errors(self.name):
            yield

    # -- indexing ---------------------------------------------------------------------------
    def index_documents(
        self,
        documents: Iterable[Document],
        *,
        chunks: Iterable[Chunk] | None = None,
        prune: bool = False,
        progress: bool | IndexProgress = True,
        dense: DenseMode = "foreground",
        wait: bool = True,
    ) -> IndexReport:
        """Chunk (markdown-header parent/child unless ``chunks`` given), tokenise, store; then vectors.

        ``prune=True`` deletes documents of this KB that are not in ``documents`` (a full re-sync
        of a source); an unchanged re-sync writes nothing. ``dense`` says where the vectors are
        computed (see the module docstring). ``progress``: True for rich bars on stderr, False,
        or an :class:`~zhiwen.kb.progress.IndexProgress`. ``wait=False`` raises
        :class:`~zhiwen.errors.KnowledgeBaseBusy` instead of waiting for another writer.
        """
        if dense not in DENSE_MODES:
            raise InvalidParameter(f"bad dense mode {dense!r}", message=f"dense 取值无效：{dense}")
        with _progress(progress) as prog:
            start = time.perf_counter()
            docs, chunk_list = lexical.prepare(
                documents,
                chunks,
                max_chars=self.config.chunk_max_chars,
                overlap=self.settings.retrieval.chunk_overlap_chars,
            )
            report = IndexReport(documents=len(docs), chunks=len(chunk_list), dense=dense)
            # owners' edits, disabled chunks, questions and keywords survive the re-import
            with self.curation.importing(docs, chunk_list, wait=wait) as batch:
                phase = indexer.index_lexical if self.lexical_first else indexer.index_one_phase
                phase(self, batch.docs, batch.chunks, prune, prog, report, wait)
            report.lexical_seconds = time.perf_counter() - start
            if self.lexical_first:
                indexer.index_dense(self, dense, prog, report, wait)
            report.seconds = time.perf_counter() - start
        log.info(
            "indexed kb=%s documents=%d chunks=%d embedded=%d resumed=%d missing=%d deleted=%d"
            " changed=%s in %.2fs (searchable after %.2fs)",
            self.name,
            report.documents,
            report.chunks,
            report.embedded,
            report.resumed,
            report.vectors_missing,
            report.deleted_documents,
            report.changed,
            report.seconds,
            report.lexical_seconds,
        )
        return report

    def fill_vectors(
        self,
        *,
        progress: bool | IndexProgress = False,
        wait: bool = True,
        cancel: threading.Event | None = None,
        batch_size: int | None = None,
    ) -> FillReport:
        """Phase 2 alone: embed what the store is missing (resumable; see :mod:`zhiwen.kb.dense`).

        ``wait=False`` returns at once (``busy=True``) when another process is filling this KB.
        """
        if not self.lexical_first:
            return FillReport(total=self.store.count(), had=self.store.count())
        if not self.vectors_enabled:
            total, missing = self.store.count(), len(self.store.missing_vector_ids())
            return FillReport(total=total, had=total - missing, missing=missing)
        with _progress(progress) as prog:
            return fill_vectors(self, progress=prog, wait=wait, cancel=cancel, batch_size=batch_size)

    def fill_vectors_behind(self) -> None:
        """Phase 2 handed to this process's background filler (returns at once)."""
        if self._fill_behind is None:
            raise InvalidParameter(
                f"knowledge base {self.name!r} was opened without a background filler",
                message=f"知识库「{self.name}」不能在后台补全向量，请用 dense=foreground",
            )
        self._fill_behind(self)

    def build_vector_index(self) -> None:
        """Ask the store to build its vector index (HNSW) in the background, never on a search."""
        try:
            self.store.build_index(background=True)
        except Exception as exc:  # an optimisation: searches stay exact meanwhile
            log.warning("could not start the vector index build of %s: %s", self.name, exc)

    def index_path(
        self,
        path: Path,
        *,
        fmt: str = "markdown",
        prune: bool = True,
        progress: bool | IndexProgress = True,
        dense: DenseMode = "foreground",
        **options: Any,
    ) -> IndexReport:
        """Load ``path`` with the engine's ingest loader for ``fmt`` and index it."""
        from zhiwen.ingest import load_corpus

        corpus = load_corpus(Path(path), fmt, **options)
        return self.index_corpus(corpus, prune=prune, progress=progress, dense=dense)

    def index_corpus(
        self,
        corpus: Corpus,
        *,
        prune: bool = True,
        progress: bool | IndexProgress = True,
        dense: DenseMode = "foreground",
    ) -> IndexReport:
        """Index what any loader (the engine's or an app's) produced."""
        report = self.index_documents(
            corpus.documents, chunks=corpus.chunks, prune=prune, progress=progress, dense=dense
        )
        report.warnings[:0] = corpus.warnings
        return report

    def delete_documents(self, doc_ids: list[str], *, wait: bool = True) -> int:
        """Delete whole documents (chunks + parent); returns chunks removed."""
        with self.writing(wait=wait):
            with self.changing():
                removed = self.store.delete(doc_ids=list(doc_ids))
                self.curation.forget(doc_ids=list(doc_ids))
            if removed:
                with deferred(), disk_errors(self.name):
                    self.bump_revision()
        return removed

    def info(self) -> dict[str, Any]:
        with self._rw.read():
            stats = self.store.stats()
            chunks = self.store.count()
            documents = len(self.store.doc_ids())
            coverage = self.dense_coverage()
            vectors = self.store.vector_count() if self.store.dim is not None else None
        config = self.config.model_dump()
        config["store"] = mask_url(config["store"])
        return {
            "name": self.name,
            "path": str(self.path),
            "revision": self.revision,
            "app": self.config.app,
            "embedder": self.config.embedder,
            "dim": self.config.dim,
            "documents": documents,
            "chunks": chunks,
            "vectors": vectors,
            "dense_coverage": None if coverage is None else round(coverage, 4),
            "vectors_enabled": self.vectors_enabled,
            "vector_index": stats.get("vector_index"),
            "config": config,
            "store": stats,
        }

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.retriever.close()
        self.curation.close()
        self.store.close()

    @property
    def closed(self) -> bool:
        return self._closed


@contextlib.contextmanager
def _progress(progress: bool | IndexProgress) -> Iterator[IndexProgress]:
    """``True`` → rich bars for the duration, ``False``/None → nothing, else the caller's own."""
    if progress is True:
        with RichIndexProgress() as bars:
            yield bars
    elif not progress:
        yield NullProgress()
    else:
        yield progress
