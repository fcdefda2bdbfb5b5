"""The most asked questions, grouped when they ask the same thing.

Two steps. **Exact**: questions with the same normal form (:func:`zhiwen.faq.normalize.
normalise_question`: width, case, traditional characters, punctuation, final particles) are one
phrasing — the store counts them (:meth:`~zhiwen.questionlog.base.QuestionStore.phrasings`).
**Near**, with an embedder: the most asked phrasing leads a group and a less asked one joins
the closest leader whose cosine reaches ``threshold``, unless the FAQ matcher's contrast checks
say they are different questions (another number, the opposite polarity or direction, another
name: :class:`zhiwen.faq.contrast.QuestionFacts`, both ways): 「144小时过境免签」 and
「240小时过境免签」 stay apart. The groups are a partition. Union-find over every close pair
(``linkage="single"``) chains A≈B≈C into one group; on the FAQ bench's questions it kept less
pairwise precision (0.79 against 0.83 held out, ``bench/bench_question_log.py``, which also
chose ``log.group_threshold``). Question vectors: the KB's embedder's ``embed_query`` (the FAQ
matcher's side, on which the threshold was measured).

Example::

    >>> vectors = lambda texts: np.stack([embedder.embed_query(t) for t in texts])
    >>> groups = group_phrasings(store.phrasings("manual", Span(), limit=500), vectors=vectors)
    >>> groups[0].question, groups[0].count, len(groups[0].variants)
    ('怎么创建知识库', 12, 3)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from zhiwen.faq.contrast import QuestionFacts
from zhiwen.questionlog.base import Phrasing

#: texts → (n, dim) float32 rows, L2-normalised (an :class:`~zhiwen.embed.base.Embedder`'s
#: ``embed_passages``)
Vectors = Callable[[Sequence[str]], np.ndarray]
Linkage = Literal["leader", "single"]


@dataclass(frozen=True, slots=True)
class AskedGroup:
    """Phrasings that ask the same thing: the most asked wording names the group."""

    variants: tuple[Phrasing, ...]  # most asked first

    @property
    def question(self) -> str:
        return self.variants[0].question

    @property
    def count(self) -> int:
        return sum(v.count for v in self.variants)

    @property
    def unanswered(self) -> int:
        return sum(v.unanswered for v in self.variants)

    @property
    def last_at(self) -> float:
        return max(v.last_at for v in self.variants)

    def to_json(self) -> dict[str, object]:
        return {
            "question": self.question,
            "count": self.count,
            "unanswered": self.unanswered,
            "last_at": self.last_at,
            "variants": [{"question": v.question, "count": v.count} for v in self.variants],
        }


class DisjointSet:
    """Union-find over ``0 … n-1`` (path halving, union by size).

    Example::

        >>> s = DisjointSet(3); s.union(0, 2); s.find(2) == s.find(0), s.find(1) == s.find(0)
        (True, False)
    """

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))
        self.size = [1] * n

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        if self.size[ra] < self.size[rb]:
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.size[ra] += self.size[rb]

    def groups(self) -> list[list[int]]:
        found: dict[int, list[int]] = {}
        for i in range(len(self.parent)):
            found.setdefault(self.find(i), []).append(i)
        return list(found.values())


def near_pairs(
    texts: Sequence[str], vectors: np.ndarray, threshold: float, *, contrast: bool = True
) -> list[tuple[int, int]]:
    """Index pairs ``i < j`` whose cosine reaches ``threshold`` (and, with ``contrast``, that the
    contrast checks do not tell apart)."""
    if len(texts) < 2:
        return []
    sims = np.asarray(vectors, dtype=np.float32) @ np.asarray(vectors, dtype=np.float32).T
    rows, cols = np.nonzero(np.triu(sims >= threshold, k=1))
    pairs = [(int(i), int(j)) for i, j in zip(rows, cols, strict=True)]
    if contrast:
        facts: dict[int, QuestionFacts] = {}
        pairs = [(i, j) for i, j in pairs if not _told_apart(texts, i, j, facts)]
    return pairs


def _told_apart(texts: Sequence[str], i: int, j: int, facts: dict[int, QuestionFacts]) -> bool:
    """The contrast checks both ways (a name only one of them says sets them apart)."""
    for k in (i, j):
        if k not in facts:
            facts[k] = QuestionFacts(texts[k])
    return bool(facts[i].differences(texts[j], facts[j]) or facts[j].differences(texts[i], facts[i]))


def leader_groups(
    texts: Sequence[str], vectors: np.ndarray, threshold: float, *, contrast: bool = True
) -> list[list[int]]:
    """Groups of indexes (``texts`` most asked first), each around a leader, listed first: a
    phrasing joins the closest earlier leader whose cosine reaches ``threshold`` (and that the
    contrast checks do not tell apart), else leads a group of its own. Unlike union-find, a
    chain of small steps (A≈B≈C≈D) never joins A and D."""
    sims = np.asarray(vectors, dtype=np.float32) @ np.asarray(vectors, dtype=np.float32).T
    facts: dict[int, QuestionFacts] = {}
    leaders: list[int] = []
    members: dict[int, list[int]] = {}
    for i in range(len(texts)):
        near = [(float(sims[i, lead]), lead) for lead in leaders if sims[i, lead] >= threshold]
        joined = next(
            (
                lead
                for _, lead in sorted(near, reverse=True)
                if not (contrast and _told_apart(texts, i, lead, facts))
            ),
            None,
        )
        if joined is None:
            leaders.append(i)
            members[i] = [i]
        else:
            members[joined].append(i)
    return list(members.values())


def _union_groups(
    texts: Sequence[str], vectors: np.ndarray, threshold: float, contrast: bool
) -> list[list[int]]:
    joined = DisjointSet(len(texts))
    for i, j in near_pairs(texts, vectors, threshold, contrast=contrast):
        joined.union(i, j)
    return joined.groups()


def group_phrasings(
    phrasings: Sequence[Phrasing],
    *,
    vectors: Vectors | None = None,
    threshold: float = 0.96,
    contrast: bool = True,
    linkage: Linkage = "leader",
) -> list[AskedGroup]:
    """``phrasings`` (one per normal form) joined into groups, most asked group first; without
    ``vectors`` each phrasing is its own group. ``linkage``: ``leader`` (:func:`leader_groups`,
    the default) or ``single`` (union-find over every close pair: chains, measured in the bench)."""
    items = sorted(phrasings, key=lambda p: (-p.count, -p.last_at))  # the most asked lead
    parts: list[list[int]] = [[i] for i in range(len(items))]
    if vectors is not None and len(items) > 1:
        texts = [p.question for p in items]
        vecs = vectors(texts)
        if linkage == "leader":
            parts = leader_groups(texts, vecs, threshold, contrast=contrast)
        else:
            parts = _union_groups(texts, vecs, threshold, contrast)
    # members come in the items' order: the most asked (a leader) first
    groups = [AskedGroup(tuple(items[i] for i in sorted(members))) for members in parts]
    return sorted(groups, key=lambda g: (-g.count, -g.last_at, g.question))
