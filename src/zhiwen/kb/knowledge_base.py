"""One named knowledge base: tokenizer + embedder + store + hybrid retriever.

Indexing is atomic towards the store: loading, chunking, tokenising and embedding all happen
before the single ``store.upsert``, so bad input or a failing model leaves the existing index as
it was. Obtain instances with :func:`zhiwen.kb.open_kb` (one shared, thread-safe instance per
home, name and process).

Example::

    >>> kb = open_kb("manual", create=True, embedder="hash")
    >>> report = kb.index_path(Path("docs"), fmt="markdown")
    >>> [h.chunk.title for h in kb.search("怎么安装", top_k=3)]
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from zhiwen.config import Settings
from zhiwen.documents import Chunk, Document, ParentHit, SearchHit
from zhiwen.embed.base import Embedder
from zhiwen.errors import IngestError, InvalidParameter
from zhiwen.fsutil import atomic_write_text
from zhiwen.ingest.base import Corpus
from zhiwen.kb.config import KBConfig, mask_url
from zhiwen.kb.lazy_embedder import LazyEmbedder
from zhiwen.kb.locks import RWLock
from zhiwen.retrieve.hybrid import HybridRetriever, RetrievalResult
from zhiwen.retrieve.parents import aggregate_parents
from zhiwen.store import Store, open_store
from zhiwen.store.filters import Filter
from zhiwen.text.tokenizer import Tokenizer

log = logging.getLogger(__name__)


def config_stamp(path: Path) -> int:
    """The kb.json's modification time (-1 when absent): tells a re-index by another process."""
    try:
        return (path / "kb.json").stat().st_mtime_ns
    except OSError:
        return -1


def _same_chunk(a: Chunk, b: Chunk) -> bool:
    return (a.text, a.title, a.doc_id, a.parent_id, a.metadata) == (
        b.text,
        b.title,
        b.doc_id,
        b.parent_id,
        b.metadata,
    )


@dataclass(slots=True)
class IndexReport:
    documents: int = 0
    chunks: int = 0
    embedded: int = 0  # chunks actually sent to the model (the rest came from the cache)
    deleted_documents: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    changed: bool = False  # False when the store already held exactly this content
    revision: int = 0


class KnowledgeBase:
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
    ) -> None:
        self.name = config.name
        self.config = config
        self.path = path
        self.settings = settings
        self.store: Store = store if store is not None else self._open_store()
        self.tokenizer = Tokenizer(mode=config.tokenizer_mode, user_dict=config.extra.get("user_dict"))
        if embedder is None and self.store.dim is not None:
            embedder = LazyEmbedder(config.embedder, config.dim, settings)  # type: ignore[assignment]
        self.embedder: Embedder | None = embedder
        self.retriever = HybridRetriever(
            self.store, self.tokenizer, self.embedder, settings=settings.retrieval, kb_name=self.name
        )
        self._rw = RWLock()
        self._index_lock = threading.Lock()
        self._closed = False
        self.config_stamp = config_stamp(path)  # which kb.json this instance reflects

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
        self.path.mkdir(parents=True, exist_ok=True)
        atomic_write_text(
            self.config_path, json.dumps(self.config.model_dump(), ensure_ascii=False, indent=2) + "\n"
        )
        self.config_stamp = config_stamp(self.path)

    def _bump_revision(self) -> None:
        self.config = self.config.model_copy(update={"revision": self.config.revision + 1})
        self.save_config()
        self.retriever.query_cache.clear()  # cheap; keeps memory bounded across re-indexes

    def _embedding_cache(self) -> Any:
        from zhiwen.embed import EmbeddingCache, default_cache_dir

        if not self.settings.embedding.cache:
            return None
        return EmbeddingCache(default_cache_dir(self.settings.home))

    # -- indexing ---------------------------------------------------------------------------
    def index_documents(
        self,
        documents: Iterable[Document],
        *,
        chunks: Iterable[Chunk] | None = None,
        prune: bool = False,
        progress: bool = True,
    ) -> IndexReport:
        """Chunk (markdown-header parent/child unless ``chunks`` given), embed (cached), upsert.

        ``prune=True`` deletes documents of this KB that are not in ``documents`` (a full re-sync
        of a source). Atomic: on error nothing is written.
        """
        start = time.perf_counter()
        docs, chunk_list = self._prepare(documents, chunks)
        report = IndexReport(documents=len(docs), chunks=len(chunk_list))

        tokens = self.tokenizer.tokenize_many(c.embed_text for c in chunk_list)
        vectors: np.ndarray | None = None
        if self.store.dim is not None and self.embedder is not None:
            vectors, report.embedded = self._embed(chunk_list, progress)

        with self._index_lock:
            keep = {d.id for d in docs} | {c.doc_id for c in chunk_list}
            unchanged = self._unchanged(docs, chunk_list, prune)
            stale: list[str] = []
            with self._rw.write():
                if not unchanged:
                    self.store.upsert(chunk_list, tokens=tokens, vectors=vectors, parents=docs)
                if prune:
                    stale = sorted(self.store.doc_ids() - keep)
                    if stale:
                        self.store.delete(doc_ids=stale)
            report.deleted_documents = len(stale)
            report.changed = not unchanged or bool(stale)
            if report.changed:
                self._bump_revision()
            report.revision = self.revision
        report.seconds = time.perf_counter() - start
        log.info(
            "indexed kb=%s documents=%d chunks=%d embedded=%d deleted=%d changed=%s in %.2fs",
            self.name,
            report.documents,
            report.chunks,
            report.embedded,
            report.deleted_documents,
            report.changed,
            report.seconds,
        )
        return report

    def _prepare(
        self, documents: Iterable[Document], chunks: Iterable[Chunk] | None
    ) -> tuple[list[Document], list[Chunk]]:
        """Validate and chunk before anything touches the store."""
        docs = list(documents)
        if not docs:
            raise IngestError("no documents to index", message="导入失败：语料为空，没有可索引的文档")
        seen: set[str] = set()
        for d in docs:
            if not isinstance(d, Document) or not d.id:
                raise IngestError(f"not a Document with an id: {d!r:.80}", message="导入失败：文档缺少 ID")
            if d.id in seen:
                raise IngestError(
                    f"duplicate document id {d.id!r}", message=f"导入失败：文档 ID 重复：{d.id}"
                )
            seen.add(d.id)
        if chunks is None:
            from zhiwen.ingest.chunking import chunk_documents

            chunk_list = chunk_documents(
                docs, self.config.chunk_max_chars, self.settings.retrieval.chunk_overlap_chars
            )
        else:
            chunk_list = list(chunks)
        if not chunk_list:
            raise IngestError(
                "documents produced no chunks", message="导入失败：文档内容为空，没有可索引的段落"
            )
        ids: set[str] = set()
        for c in chunk_list:
            if c.id in ids:
                raise IngestError(f"duplicate chunk id {c.id!r}", message=f"导入失败：段落 ID 重复：{c.id}")
            ids.add(c.id)
        return docs, chunk_list

    def _embed(self, chunk_list: list[Chunk], progress: bool) -> tuple[np.ndarray, int]:
        from zhiwen.embed import embed_chunks

        assert self.embedder is not None
        real = self.embedder.get() if isinstance(self.embedder, LazyEmbedder) else self.embedder
        cache = self._embedding_cache()
        try:
            vectors, n = embed_chunks(
                real,
                [c.embed_text for c in chunk_list],
                cache,
                batch_size=self.settings.embedding.batch_size,
                progress=progress,
            )
        finally:
            if cache is not None:
                cache.close()
        if vectors.shape != (len(chunk_list), self.store.dim):
            raise InvalidParameter(
                f"embedder {real.name} gives vectors of shape {vectors.shape}, store dim {self.store.dim}",
                message=f"向量模型输出维度与知识库（{self.store.dim}）不一致",
            )
        return vectors, n

    def _unchanged(self, docs: list[Document], chunk_list: list[Chunk], prune: bool) -> bool:
        """True when a full re-sync brings nothing new (skip the write, keep the revision)."""
        if not prune or self.store.count() != len(chunk_list):
            return False
        ids = [c.id for c in chunk_list]
        with self._rw.read():
            existing = {c.id: c for c in self.store.get_chunks(ids)}
            parents = {d.id: d for d in self.store.get_parents([d.id for d in docs])}
        if len(existing) != len(chunk_list) or len(parents) != len(docs):
            return False
        return all(_same_chunk(c, existing[c.id]) for c in chunk_list) and all(
            parents[d.id] == d for d in docs
        )

    def index_path(
        self, path: Path, *, fmt: str = "markdown", prune: bool = True, progress: bool = True, **options: Any
    ) -> IndexReport:
        """Load ``path`` with the engine's ingest loader for ``fmt`` and index it."""
        from zhiwen.ingest import load_corpus

        return self.index_corpus(load_corpus(Path(path), fmt, **options), prune=prune, progress=progress)

    def index_corpus(self, corpus: Corpus, *, prune: bool = True, progress: bool = True) -> IndexReport:
        """Index what any loader (the engine's or an app's) produced."""
        report = self.index_documents(corpus.documents, chunks=corpus.chunks, prune=prune, progress=progress)
        report.warnings[:0] = corpus.warnings
        return report

    # -- search -----------------------------------------------------------------------------
    def embed_query(self, query: str) -> np.ndarray:
        return self.retriever.embed_query(query)

    def search(
        self,
        query: str,
        *,
        mode: str = "hybrid",
        top_k: int = 10,
        filters: Filter | Mapping[str, Any] | None = None,
        candidates: int | None = None,
        fusion: str | None = None,
        rrf_k: int | None = None,
        weights: tuple[float, float] | None = None,
        query_vector: np.ndarray | None = None,
        alpha: float | None = None,
    ) -> list[SearchHit]:
        """BM25 / dense / hybrid search. A failing or empty branch leaves the other to answer.

        ``weights`` = (bm25, dense); ``alpha`` = dense weight of weighted fusion (default from
        settings). ``query_vector`` skips the query embedding.
        """
        return self.search_detailed(
            query,
            mode=mode,
            top_k=top_k,
            filters=filters,
            candidates=candidates,
            fusion=fusion,
            rrf_k=rrf_k,
            weights=weights,
            query_vector=query_vector,
            alpha=alpha,
        ).hits

    def search_detailed(self, query: str, **kwargs: Any) -> RetrievalResult:
        """:meth:`search` with per-stage timings and branch status (see ``RetrievalResult``)."""
        with self._rw.read():
            return self.retriever.run_detailed(query, **kwargs)

    def search_parents(
        self,
        query: str,
        *,
        top_k: int = 5,
        mode: str = "hybrid",
        filters: Filter | Mapping[str, Any] | None = None,
        chunk_k: int | None = None,
    ) -> list[ParentHit]:
        """Children → parents ranked by matched-children count, then best score (seed 002).

        ``chunk_k`` chunks are aggregated (default ``max(3 × top_k, 10)``): the count only means
        something among the closest chunks, a long window lets long documents win by size.
        """
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise InvalidParameter(
                f"top_k must be a positive integer, got {top_k!r}", message="top_k 必须是正整数"
            )
        k = chunk_k or max(3 * top_k, 10)
        with self._rw.read():
            hits = self.retriever.run(query, mode=mode, top_k=k, filters=filters)
            return aggregate_parents(hits, self.store, top_k)

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        with self._rw.read():
            return self.store.get_chunks(list(ids))

    def get_parents(self, ids: Sequence[str]) -> list[Document]:
        with self._rw.read():
            return self.store.get_parents(list(ids))

    def delete_documents(self, doc_ids: list[str]) -> int:
        """Delete whole documents (chunks + parent); returns chunks removed."""
        with self._index_lock:
            with self._rw.write():
                removed = self.store.delete(doc_ids=list(doc_ids))
            if removed:
                self._bump_revision()
        return removed

    def info(self) -> dict[str, Any]:
        with self._rw.read():
            stats = self.store.stats()
            chunks = self.store.count()
            documents = len(self.store.doc_ids())
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
            "config": config,
            "store": stats,
        }

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.retriever.close()
        self.store.close()

    @property
    def closed(self) -> bool:
        return self._closed
