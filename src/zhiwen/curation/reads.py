"""The read side of curation: a document's chunks in order, a search over them, one chunk, the log,
and hit counts.

Mixed into :class:`~zhiwen.curation.service.Curation`. A listing merges what the store holds
(enabled chunks, with their effective text) with what only ``curation.sqlite`` holds (disabled
chunks, in their place); question rows never show as chunks of their own. Hits — how often a
search returned a chunk — are counted in memory and written in batches, never on the search's
time, and only once the KB has a curation file (a search never creates one).

Example::

    [v.id for v in kb.curation.list_chunks("guide.md")]       # ['guide.md#0', 'guide.md#1', …]
    kb.curation.search_chunks("退货", limit=10)               # owners looking for a paragraph
    kb.curation.get_chunk("guide.md#1").questions
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from zhiwen.curation.db import CurationDB
from zhiwen.curation.model import Change, ChunkView, Overlay, question_target
from zhiwen.documents import Chunk
from zhiwen.errors import InvalidParameter, NotFound

if TYPE_CHECKING:
    from zhiwen.curation.sync import CurationHost

_HITS_FLUSH_S = 5.0
_MAX_LIMIT = 500


class CurationReads:
    """Listings, search, lookups and hit counts (see the module docstring)."""

    host: CurationHost
    db: CurationDB

    _hits: Counter[str]
    _hits_lock: threading.Lock
    _hits_at: float

    def list_chunks(self, doc_id: str) -> list[ChunkView]:
        """Every chunk of a document in order, disabled ones in their place (404: no such document)."""
        store = self.host.store
        ids = [i for i in store.list_chunk_ids([doc_id]) if question_target(i) is None]
        overlays = self.db.overlays_of_docs([doc_id])
        if not ids and not overlays:
            raise NotFound(
                f"no document {doc_id!r}", message=f"文档不存在：{doc_id}", data={"doc_id": doc_id}
            )
        views = self._views_of(store.get_chunks(ids), overlays)
        return sorted(views, key=lambda v: (v.position, v.id))

    def get_chunk(self, chunk_id: str) -> ChunkView:
        found = self.views([chunk_id])
        if not found:
            raise NotFound(f"no chunk {chunk_id!r}", message=f"段落不存在：{chunk_id}", data={"id": chunk_id})
        return found[0]

    def views(self, chunk_ids: Sequence[str]) -> list[ChunkView]:
        """The chunks ``chunk_ids`` as owners see them, in that order (unknown ids skipped)."""
        ids = [i for i in chunk_ids if isinstance(i, str) and question_target(i) is None]
        overlays = self.db.overlays(ids)
        by_id = {v.id: v for v in self._views_of(self.host.store.get_chunks(ids), overlays)}
        return [by_id[i] for i in ids if i in by_id]

    def search_chunks(self, query: str, *, limit: int = 20, doc_id: str | None = None) -> list[ChunkView]:
        """Chunks matching ``query`` for their owners: the lexical search over enabled chunks (a
        question's hit is its chunk's), then disabled chunks that contain the words."""
        if not isinstance(query, str) or not query.strip():
            raise InvalidParameter("empty query", message="请输入要查找的内容")
        limit = max(1, min(int(limit), _MAX_LIMIT))
        tokens = self.host.tokenizer.tokenize_query(query)
        scored = self.host.store.search_text(tokens, limit * 4 if doc_id else limit * 2) if tokens else []
        ids = list(dict.fromkeys(question_target(cid) or cid for cid, _ in scored))
        found = [v for v in self.views(ids) if doc_id is None or v.doc_id == doc_id]
        off = [
            o for o in self.db.disabled_matching(query.strip(), limit) if doc_id is None or o.doc_id == doc_id
        ]
        found += self._views_of((), {o.chunk_id: o for o in off})
        return found[:limit]

    def chunks_of_origin(self, origin: str) -> list[ChunkView]:
        """Every chunk added by hand (``manual``) or as an FAQ entry (``faq``), disabled ones too."""
        overlays = {o.chunk_id: o for o in self.db.overlays_of_origin(origin) if not o.deleted}
        return self._views_of(self.host.store.get_chunks(list(overlays)), overlays)

    def changes(self, *, limit: int = 50, chunk_id: str | None = None) -> list[Change]:
        """The change log, newest first (of one chunk, or of the whole KB)."""
        return self.db.changes(limit=max(1, min(int(limit), _MAX_LIMIT)), target=chunk_id)

    def _views_of(self, chunks: Iterable[Chunk], overlays: dict[str, Overlay]) -> list[ChunkView]:
        """Views of stored chunks and of overlays whose chunk is out of search (not deleted ones)."""
        chunks = list(chunks)
        seen = {c.id for c in chunks}
        hits = self.hit_counts([*seen, *overlays])
        out = [ChunkView.of(c, overlays.get(c.id), hits.get(c.id, 0)) for c in chunks]
        out += [
            ChunkView.of(o.effective, o, hits.get(o.chunk_id, 0))
            for cid, o in overlays.items()
            if cid not in seen and not o.deleted
        ]
        return out

    # -- hit counts ------------------------------------------------------------------------
    def note_hits(self, chunk_ids: Iterable[str]) -> None:
        """Count one search's hits (in memory; written every few seconds by a short thread)."""
        with self._hits_lock:
            self._hits.update(chunk_ids)
            due = time.monotonic() - self._hits_at > _HITS_FLUSH_S
            if due:
                self._hits_at = time.monotonic()
        if due:
            threading.Thread(target=self.flush_hits, name="zhiwen-hits", daemon=True).start()

    def flush_hits(self) -> None:
        with self._hits_lock:
            counts, self._hits = self._hits, Counter()
        if counts:
            try:
                self.db.add_hits(counts)
            except Exception:  # a count is a report: never fail anything over it
                with self._hits_lock:
                    self._hits.update(counts)

    def hit_counts(self, chunk_ids: Sequence[str]) -> dict[str, int]:
        stored = self.db.hits(list(chunk_ids))
        with self._hits_lock:
            return {cid: stored.get(cid, 0) + self._hits.get(cid, 0) for cid in chunk_ids}
