"""The engine's data types: source documents, searchable chunks and search hits.

A *document* is one source unit (a markdown file, a BEIR passage, a CSV row). Ingest splits it
into *chunks*, the units that are embedded and searched. Header chunking gives every chunk the
document as its parent (``parent_id == doc_id``), so search can aggregate children back into
whole documents (parent-document aggregation).

Example::

    >>> doc = Document(id="meat_dish/知识库", text="# 创建知识库\\n...", title="知识库")
    >>> chunk = Chunk(id="meat_dish/知识库#0", doc_id=doc.id, text="...", parent_id=doc.id)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

# Metadata values the stores can filter on: scalars only (lists are stored but not filterable).
MetadataValue = str | int | float | bool | None


@dataclass(frozen=True, slots=True)
class Document:
    id: str
    text: str
    title: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Chunk:
    id: str
    doc_id: str
    text: str
    title: str = ""
    parent_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def content_hash(self) -> str:
        """Hash of what is embedded; the embedding cache is keyed by it."""
        return content_hash(self.embed_text)

    @property
    def embed_text(self) -> str:
        """What the dense branch embeds: the title gives context to short sections."""
        if self.title and not self.text.startswith(self.title):
            return f"{self.title}\n{self.text}"
        return self.text


def chunk_id(doc_id: str, index: int) -> str:
    """The id of a document's ``index``-th chunk (``doc#3``): the one rule, for whoever writes
    a document's chunks and whoever reads them back in order (the tables' catalogue)."""
    return f"{doc_id}#{index}"


def content_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


@dataclass(slots=True)
class SearchHit:
    """One ranked chunk with the score of every stage that saw it.

    ``score`` is the score the list is ordered by (fused, rerank or app-specific).
    """

    chunk: Chunk
    score: float
    bm25_score: float | None = None
    vector_score: float | None = None
    fused_score: float | None = None
    rerank_score: float | None = None
    bm25_rank: int | None = None
    vector_rank: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.chunk.id


@dataclass(slots=True)
class ParentHit:
    """A document aggregated from its matched chunks (parent-document aggregation)."""

    document: Document
    score: float
    matched_chunks: list[SearchHit] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.document.id
