"""From overlays to the store: one chunk-level write that makes a curation change searchable.

A change is a list of (before, after) overlays. :func:`plan_write` turns it into one
:meth:`~zhiwen.store.base.Store.put_chunks`: the rows of every ``after`` (the chunk with its
effective text and its question rows, tokenized by the KB's tokenizer with the chunk's keywords),
the rows only ``before`` had removed, the touched documents' parents as curated
(:func:`curated_parent`) — and the vectors, which cost a model call only for text nobody has
embedded yet: the vector a disabled chunk left behind, a stored vector of the same text, the
KB's embedding cache, in that order.

Example::

    write = plan_write(host, db, [(before, after)])
    host.store.put_chunks(write.rows, tokens=write.tokens, vectors=write.vectors,
                          parents=write.parents, remove=write.remove)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from zhiwen.curation.db import CurationDB
from zhiwen.curation.lexicon import KBTokenizer
from zhiwen.curation.model import Overlay
from zhiwen.documents import Chunk, Document
from zhiwen.store.base import Store

Pair = tuple[Overlay | None, Overlay | None]


class CurationHost(Protocol):
    """What curation needs of its knowledge base (:class:`~zhiwen.kb.KnowledgeBase` is one)."""

    name: str
    path: Path
    store: Store
    tokenizer: KBTokenizer

    def writing(self, *, wait: bool = True) -> AbstractContextManager[None]:
        """The KB's writer locks (one writer across processes)."""
        ...

    def changing(self) -> AbstractContextManager[None]:
        """A store write: this process's searches wait; disk faults become clear errors."""
        ...

    def bump_revision(self) -> None:
        """One more content revision (answer caches key on it; other processes reopen the KB)."""
        ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray | None:
        """Passage vectors with the KB's embedder and embedding cache; None: a KB without vectors."""
        ...


@dataclass(slots=True)
class StoreWrite:
    rows: list[Chunk] = field(default_factory=list)
    tokens: list[list[str]] = field(default_factory=list)
    vectors: np.ndarray | None = None
    remove: list[str] = field(default_factory=list)
    parents: list[Document] = field(default_factory=list)
    #: parents seen for the first time, kept as imported
    originals: list[Document] = field(default_factory=list)
    #: chunk id → (content hash, vector) of chunks this write takes out of search
    kept: dict[str, tuple[str, np.ndarray]] = field(default_factory=dict)

    def apply(self, store: Store) -> None:
        store.put_chunks(
            self.rows, tokens=self.tokens, vectors=self.vectors, parents=self.parents, remove=self.remove
        )


def plan_write(host: CurationHost, db: CurationDB, pairs: Sequence[Pair]) -> StoreWrite:
    """The store write of a change (see the module docstring)."""
    write = StoreWrite()
    keywords: dict[str, Sequence[str]] = {}
    gone: set[str] = set()
    for before, after in pairs:
        if after is not None:
            write.rows.extend(after.rows())
            keywords[after.chunk_id] = after.keywords
        gone.update(before.row_ids() if before is not None else ())
        gone.update(after.row_ids() if after is not None else ())
    put = {r.id for r in write.rows}
    write.remove = sorted(gone - put)
    write.tokens = [host.tokenizer.chunk_tokens(r, keywords=keywords.get(r.id, ())) for r in write.rows]
    write.kept = _leaving(host.store, pairs)
    write.vectors = _vectors(host, db, write.rows)
    write.parents, write.originals = _parents(host.store, db, pairs)
    return write


def _leaving(store: Store, pairs: Sequence[Pair]) -> dict[str, tuple[str, np.ndarray]]:
    """The vectors of chunks this change takes out of search, to bring them back without a model."""
    out = [b.effective for b, a in pairs if b is not None and a is not None and b.rows() and not a.rows()]
    if not out or store.dim is None:
        return {}
    stored = store.get_vectors([c.id for c in out])
    return {c.id: (c.content_hash, stored[c.id]) for c in out if c.id in stored}


def _vectors(host: CurationHost, db: CurationDB, rows: list[Chunk]) -> np.ndarray | None:
    if not rows or host.store.dim is None:
        return None
    want = {r.id: r.content_hash for r in rows}
    found: dict[str, np.ndarray] = {}
    for cid, (h, vec) in db.kept_vectors(list(want)).items():
        if want.get(cid) == h:
            found[cid] = vec
    same = [
        c.id
        for c in host.store.get_chunks([i for i in want if i not in found])
        if c.content_hash == want[c.id]
    ]
    found.update(host.store.get_vectors(same))
    missing = [r for r in rows if r.id not in found]
    if missing:
        new = host.embed_passages([r.embed_text for r in missing])
        if new is None:
            return None
        found.update(zip([r.id for r in missing], new, strict=True))
    return np.stack([np.asarray(found[r.id], np.float32) for r in rows])


def _parents(store: Store, db: CurationDB, pairs: Sequence[Pair]) -> tuple[list[Document], list[Document]]:
    """The curated parents of the documents a change touches, and those seen for the first time."""
    docs = sorted({o.doc_id for pair in pairs for o in pair if o is not None})
    originals = db.parents(docs)
    first = store.get_parents([d for d in docs if d not in originals])
    originals.update((d.id, d) for d in first)
    if not originals:
        return [], []
    overlays = db.overlays_of_docs(list(originals))
    for before, after in pairs:
        if after is not None:
            overlays[after.chunk_id] = after
        elif before is not None:
            overlays.pop(before.chunk_id, None)
    by_doc: dict[str, list[Overlay]] = {}
    for o in overlays.values():
        by_doc.setdefault(o.doc_id, []).append(o)
    return [curated_parent(doc, by_doc.get(doc.id, ())) for doc in originals.values()], first


def curated_parent(original: Document, overlays: Iterable[Overlay]) -> Document:
    """``original`` as its curated chunks read: disabled or deleted paragraphs out, edited ones in
    their new words, chunks added to it appended — so a whole-document answer never quotes what
    the owners switched off."""
    text = original.text
    added: list[str] = []
    for o in sorted(overlays, key=lambda o: o.place):
        if o.origin == "parsed":
            if not o.rows():
                text = text.replace(o.source.text, "", 1)
            elif o.edited:
                text = text.replace(o.source.text, o.effective.text, 1)
        elif o.rows() and (o.source.parent_id or o.doc_id) == original.id:
            added.append(o.effective.text)
    if added:
        text = "\n\n".join([text.rstrip(), *added])
    return original if text == original.text else dataclasses.replace(original, text=text)
