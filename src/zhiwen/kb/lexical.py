"""Phase 1 of an index run, before the store is touched: validate, chunk, tokenise, compare.

Everything here can fail on bad input, so it all runs before the first write: a malformed
corpus leaves the existing index as it was.

Example::

    docs, chunks = prepare(documents, None, max_chars=800, overlap=100)
    tokens = tokenize(tokenizer, chunks, progress)
    unchanged(store, docs, chunks)        # True: a full re-sync that brings nothing new
"""

from __future__ import annotations

from collections.abc import Iterable

from zhiwen.curation.lexicon import KBTokenizer
from zhiwen.documents import Chunk, Document
from zhiwen.errors import IngestError
from zhiwen.kb.progress import IndexProgress
from zhiwen.store import Store

_TOKENIZE_SLICE = 256  # passages per progress step


def prepare(
    documents: Iterable[Document], chunks: Iterable[Chunk] | None, *, max_chars: int, overlap: int
) -> tuple[list[Document], list[Chunk]]:
    """Validate documents (ids present and unique) and chunk them unless ``chunks`` is given."""
    docs = list(documents)
    if not docs:
        raise IngestError("no documents to index", message="导入失败：语料为空，没有可索引的文档")
    seen: set[str] = set()
    for d in docs:
        if not isinstance(d, Document) or not d.id:
            raise IngestError(f"not a Document with an id: {d!r:.80}", message="导入失败：文档缺少 ID")
        if d.id in seen:
            raise IngestError(f"duplicate document id {d.id!r}", message=f"导入失败：文档 ID 重复：{d.id}")
        seen.add(d.id)
    if chunks is None:
        from zhiwen.ingest.chunking import chunk_documents

        chunk_list = chunk_documents(docs, max_chars, overlap)
    else:
        chunk_list = list(chunks)
    if not chunk_list:
        raise IngestError("documents produced no chunks", message="导入失败：文档内容为空，没有可索引的段落")
    ids: set[str] = set()
    for c in chunk_list:
        if c.id in ids:
            raise IngestError(f"duplicate chunk id {c.id!r}", message=f"导入失败：段落 ID 重复：{c.id}")
        ids.add(c.id)
    return docs, chunk_list


def tokenize(tokenizer: KBTokenizer, chunks: list[Chunk], progress: IndexProgress) -> list[list[str]]:
    """Tokens of every chunk (its ``embed_text``'s, with the KB's words, and its keywords),
    advancing the ``lexical`` phase as it goes."""
    out: list[list[str]] = []
    for start in range(0, len(chunks), _TOKENIZE_SLICE):
        part = chunks[start : start + _TOKENIZE_SLICE]
        out.extend(tokenizer.chunk_tokens(c) for c in part)
        progress.advance("lexical", len(part))
    return out


def same_chunk(a: Chunk, b: Chunk) -> bool:
    return (a.text, a.title, a.doc_id, a.parent_id, a.metadata) == (
        b.text,
        b.title,
        b.doc_id,
        b.parent_id,
        b.metadata,
    )


def unchanged(store: Store, docs: list[Document], chunks: list[Chunk], *, outside: int = 0) -> bool:
    """True when the store holds exactly these documents and chunks (a full re-sync with nothing new)
    besides ``outside`` rows an import never touches (chunks added by hand or as FAQ entries to
    documents of their own)."""
    if store.count() != len(chunks) + outside:
        return False
    existing = {c.id: c for c in store.get_chunks([c.id for c in chunks])}
    parents = {d.id: d for d in store.get_parents([d.id for d in docs])}
    if len(existing) != len(chunks) or len(parents) != len(docs):
        return False
    return all(same_chunk(c, existing[c.id]) for c in chunks) and all(parents[d.id] == d for d in docs)
