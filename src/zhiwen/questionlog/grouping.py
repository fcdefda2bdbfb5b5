"""The most asked questions, grouped when they ask the same thing.

Two steps. **Exact**: questions with the same normal form (:func:`zhiwen.faq.normalize.
normalise_question`: width, case, traditional characters, punctuation, final particles) are one
phrasing — the store counts them (:meth:`~zhiwen.questionlog.base.QuestionStore.phrasings`).
**Near**: with an embedder, two phrasings whose vectors' cosine reaches ``threshold`` are joined
(union-find, so the groups are a partition), unless the FAQ matcher's contrast checks say they
are different questions (another number, the opposite polarity or direction, another name:
:class:`zhiwen.faq.contrast.QuestionFacts`, both ways): 「144小时过境免签」 and
「240小时过境免签」 stay apart.
``bench/bench_question_log.py`` measured the threshold (``log.group_threshold``).

Example::

    >>> groups = group_phrasings(store.phrasings("manual", Span(), limit=200),
    ...                          vectors=embedder.embed_passages, threshold=0.95)
    >>> groups[0].question, groups[0].count, len(groups[0].variants)
    ('怎么创建知识库', 12, 3)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from zhiwen.faq.contrast import QuestionFacts
from zhiwen.questionlog.base import Phrasing

#: texts → (n, dim) float32 rows, L2-normalised (an :class:`~zhiwen.embed.base.Embedder`'s
#: ``embed_passages``)
Vectors = Callable[[Sequence[str]], np.ndarray]


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


def group_phrasings(
    phrasings: Sequence[Phrasing],
    *,
    vectors: Vectors | None = None,
    threshold: float = 0.95,
    contrast: bool = True,
) -> list[AskedGroup]:
    """``phrasings`` (one per normal form) joined into groups, most asked group first; without
    ``vectors`` each phrasing is its own group."""
    items = list(phrasings)
    joined = DisjointSet(len(items))
    if vectors is not None and len(items) > 1:
        texts = [p.question for p in items]
        for i, j in near_pairs(texts, vectors(texts), threshold, contrast=contrast):
            joined.union(i, j)
    groups = [
        AskedGroup(tuple(sorted((items[i] for i in members), key=lambda p: (-p.count, -p.last_at))))
        for members in joined.groups()
    ]
    return sorted(groups, key=lambda g: (-g.count, -g.last_at, g.question))
