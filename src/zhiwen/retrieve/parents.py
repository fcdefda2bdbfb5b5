"""Parent aggregation: matched child chunks → whole parent documents.

When a question matches several sections of one document, the document is returned once. Parents
are ranked by how many of their children matched, then by their best child's score, then by
the rank of that best child (so equal parents keep retrieval order). A parent's ``score`` is its
best child's score; ``matched_chunks`` are its children in retrieval order.

How many chunks to aggregate is decided here once (:func:`chunk_window`), for the KB's own
``search_parents`` and the pipeline's alike.

Example::

    >>> hits = retriever.run("怎么创建知识库", top_k=chunk_window(3))     # 10 chunks for 3 parents
    >>> parents = aggregate_parents(hits, store, top_k=3)
    >>> parents[0].document.title, len(parents[0].matched_chunks)
    ('创建知识库', 4)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from zhiwen.documents import Document, ParentHit, SearchHit

#: documents a parent search returns when its caller does not say
DEFAULT_PARENT_TOP_K = 5


class ParentSource(Protocol):
    def get_parents(self, ids: Sequence[str]) -> list[Document]: ...


def chunk_window(top_k: int) -> int:
    """How many chunks to aggregate into ``top_k`` parents: ``max(3 × top_k, 10)``.

    The matched-children count only means something among the closest chunks: a longer window
    lets long documents win by their size.
    """
    return max(3 * top_k, 10)


def parent_key(hit: SearchHit) -> str:
    return hit.chunk.parent_id or hit.chunk.doc_id


def group_by_parent(hits: Sequence[SearchHit]) -> dict[str, list[SearchHit]]:
    """parent id → its hits, parents in order of first appearance."""
    groups: dict[str, list[SearchHit]] = {}
    for hit in hits:
        groups.setdefault(parent_key(hit), []).append(hit)
    return groups


def _score(hit: SearchHit) -> float:
    return hit.score


def rank_parents(
    groups: dict[str, list[SearchHit]], score_of: Callable[[SearchHit], float] = _score
) -> list[str]:
    """Parent ids: most matched children first, then best child score, then first appearance.

    ``score_of`` is what a child counts with (its score; a conversation's focus adds to it,
    :mod:`zhiwen.retrieve.focus`).
    """
    first_seen = {pid: i for i, pid in enumerate(groups)}

    def key(pid: str) -> tuple[int, float, int]:
        children = groups[pid]
        return (-len(children), -max(score_of(h) for h in children), first_seen[pid])

    return sorted(groups, key=key)


def _stand_in(parent_id: str, children: list[SearchHit]) -> Document:
    """A parent missing from the store (e.g. chunks indexed without parents): its children joined."""
    first = children[0].chunk
    ordered = sorted({h.chunk.id: h.chunk for h in children}.values(), key=lambda c: c.id)
    return Document(
        id=parent_id,
        text="\n\n".join(c.text for c in ordered),
        title=first.title,
        metadata=dict(first.metadata),
    )


def aggregate_parents(
    hits: Sequence[SearchHit],
    store: ParentSource,
    top_k: int,
    score_of: Callable[[SearchHit], float] = _score,
) -> list[ParentHit]:
    """Collapse ``hits`` into at most ``top_k`` :class:`ParentHit` (see module docstring); a
    parent's ``score`` is its best child's own score whatever ``score_of`` ranked them by."""
    if top_k < 1 or not hits:
        return []
    groups = group_by_parent(hits)
    order = rank_parents(groups, score_of)[:top_k]
    docs = {d.id: d for d in store.get_parents(order)}
    out: list[ParentHit] = []
    for pid in order:
        children = groups[pid]
        doc = docs.get(pid) or _stand_in(pid, children)
        out.append(
            ParentHit(document=doc, score=max(h.score for h in children), matched_chunks=list(children))
        )
    return out
