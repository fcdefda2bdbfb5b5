"""Edits survive re-import: an index run of curated documents writes them as curated.

Chunk ids of an import are positional (``<doc id>#<n>``) and stable: the same source gives the
same ids. :func:`curate_batch` takes an import's documents and chunks and, for the documents
that have overlays, returns what the store must hold instead:

* a chunk whose source text did not change keeps its overlay — edit, disabled or deleted,
  questions, keywords — under its id, or under the id its paragraph moved to when a section
  was inserted above it (matched by the source text's hash);
* a chunk whose source changed under an overlay keeps it, with the new source — the new
  paragraph most like the old one (rapidfuzz ratio ≥ 60, the same place counts a little) —
  marked ``stale`` (「原文已更新」) for the owners to review; a deletion does not outlive a
  changed paragraph: it comes back, stale;
* an overlaid chunk whose paragraph is gone (nothing similar left) stays, stale, under its id
  (or a new one when a new paragraph took it), unless it was deleted;
* chunks added by hand or as FAQ entries (``manual``, ``faq``) are never removed by an import
  of parsed documents; pruning a document that holds some removes only its parsed chunks
  (:func:`prune_plan`).

The parents of curated documents go to the store as curated (:func:`~zhiwen.curation.sync.curated_parent`)
and are kept as imported in ``curation.sqlite``.

Example::

    batch = curate_batch(db, docs, chunks)       # the same lists when nothing was curated
    store.upsert(batch.chunks, tokens=..., parents=batch.docs)
    commit_batch(db, batch)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from rapidfuzz import fuzz

from zhiwen.curation.db import CurationDB
from zhiwen.curation.model import Overlay
from zhiwen.curation.sync import curated_parent
from zhiwen.documents import Chunk, Document, content_hash
from zhiwen.store.base import Store

# how similar (rapidfuzz ratio, 0-100) a changed paragraph must stay to keep its overlay
_SIMILAR = 60.0
_SAME_PLACE = 10.0


@dataclass(slots=True)
class CuratedBatch:
    docs: list[Document]
    chunks: list[Chunk]
    #: overlays as they are after this import (only those that changed), and ids no longer used
    overlays: list[Overlay] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    #: parents of curated documents as imported
    originals: list[Document] = field(default_factory=list)

    @property
    def keywords(self) -> dict[str, tuple[str, ...]]:
        return {o.chunk_id: o.keywords for o in self.overlays if o.keywords}


def curate_batch(db: CurationDB, docs: list[Document], chunks: list[Chunk]) -> CuratedBatch:
    """The import as the store must hold it (see the module docstring)."""
    if not db.exists():
        return CuratedBatch(docs, chunks)
    doc_ids = list(dict.fromkeys([*(d.id for d in docs), *(c.doc_id for c in chunks)]))
    overlays = db.overlays_of_docs(doc_ids)
    if not overlays:
        return CuratedBatch(docs, chunks)
    parsed: dict[str, list[Chunk]] = {}
    for c in chunks:
        parsed.setdefault(c.doc_id, []).append(c)
    by_doc: dict[str, dict[str, Overlay]] = {}
    for o in overlays.values():
        by_doc.setdefault(o.doc_id, {})[o.chunk_id] = o
    batch = CuratedBatch(docs=[], chunks=[])
    for doc_id in doc_ids:
        mine = by_doc.get(doc_id)
        if not mine:
            batch.chunks.extend(parsed.get(doc_id, ()))
            continue
        now = _curate_doc(parsed.get(doc_id, []), mine)
        batch.chunks.extend(row for o in now.values() for row in o.rows())
        batch.chunks.extend(c for c in parsed.get(doc_id, []) if c.id not in now)
        batch.overlays.extend(o for cid, o in now.items() if overlays.get(cid) != o)
        batch.dropped.extend(cid for cid in mine if cid not in now)
    curated = {cid: o for cid, o in overlays.items() if cid not in batch.dropped}
    curated.update((o.chunk_id, o) for o in batch.overlays)
    for doc in docs:
        mine_now = [o for o in curated.values() if o.doc_id == doc.id]
        if mine_now:
            batch.originals.append(doc)
        batch.docs.append(curated_parent(doc, mine_now) if mine_now else doc)
    return batch


def _curate_doc(chunks: list[Chunk], overlays: dict[str, Overlay]) -> dict[str, Overlay]:
    """The document's overlays after the import, by chunk id (see the module docstring)."""
    by_id = {c.id: c for c in chunks}
    now: dict[str, Overlay] = {o.chunk_id: o for o in overlays.values() if o.origin != "parsed"}
    waiting: list[Overlay] = []
    for o in (o for o in overlays.values() if o.origin == "parsed"):
        c = by_id.get(o.chunk_id)
        if c is not None and content_hash(c.text) == o.source_hash:
            now[c.id] = o.with_(source=c)
        else:
            waiting.append(o)
    if not waiting:
        return now
    free = {content_hash(c.text): c for c in reversed(chunks) if c.id not in now}
    changed: list[Overlay] = []
    for o in waiting:
        c = free.get(o.source_hash)
        if c is not None and c.id not in now:
            now[c.id] = o.with_(source=c)  # its paragraph moved (a section inserted above it)
        else:
            changed.append(o)
    for o in changed:
        c = _closest(o, [c for c in chunks if c.id not in now])
        if c is not None:
            now[c.id] = o.with_(source=c, stale=True, deleted=False)
        elif not o.deleted:  # its paragraph is gone: kept, stale, for the owners to decide
            cid = o.chunk_id if o.chunk_id not in by_id else f"{o.doc_id}#o{o.source_hash[:12]}"
            now[cid] = o.with_(source=dataclasses.replace(o.source, id=cid), stale=True)
    return now


def _closest(overlay: Overlay, candidates: list[Chunk]) -> Chunk | None:
    """The new paragraph an overlay's changed source most likely became: the most similar text
    (rapidfuzz ratio, a small bonus for the same place), if similar enough."""
    best, best_score = None, _SIMILAR
    for c in candidates:
        score = fuzz.ratio(overlay.source.text, c.text) + (_SAME_PLACE if c.id == overlay.chunk_id else 0.0)
        if score >= best_score:
            best, best_score = c, score
    return best


def commit_batch(db: CurationDB, batch: CuratedBatch) -> None:
    """Record what an import changed in the overlays (after its store write succeeded)."""
    if not (batch.overlays or batch.dropped or batch.originals):
        return
    with db.transaction() as tx:
        tx.drop_overlays(batch.dropped)
        for o in batch.overlays:
            tx.put_overlay(o)
        tx.put_parents(batch.originals)


def prune_plan(db: CurationDB, store: Store, stale_docs: Sequence[str]) -> tuple[list[str], list[str]]:
    """Documents no longer in a re-synced source: (documents to delete whole, chunk ids to delete)
    — a document holding chunks added by hand or as FAQ entries loses only its parsed chunks."""
    keep_docs = sorted(db.protected_docs(stale_docs)) if db.exists() else []
    whole = [d for d in stale_docs if d not in keep_docs]
    if not keep_docs:
        return whole, []
    overlays = db.overlays_of_docs(keep_docs)
    kept_rows = {rid for o in overlays.values() if o.origin != "parsed" for rid in o.row_ids()}
    return whole, [cid for cid in store.list_chunk_ids(keep_docs) if cid not in kept_rows]
