"""A conversation's focus as a prior over retrieval's candidates (look-alike pages).

Among pages of sibling organisations that share their headings, a follow-up such as
「本科生毕业要修多少学分？」 matches every sibling's 本科生培养 page alike; even with the topic
written in, the siblings' pages stay close. :class:`Focus` names what the conversation is about
(the topic; documents a previous answer cited) and :func:`apply_focus` rescores the candidates
after fusion (and rerank): a candidate whose title names the focus, or whose document is one of
its ids, moves up. The candidates are fetched with the focus's names in front of the query
(:meth:`Focus.query`): among a hundred look-alike pages the topic's own would not be among
them otherwise. It works on the hits any store returns, so every backend (embedded,
PostgreSQL, Qdrant) behaves alike.

Strategies (``Focus.strategy``, by name in :data:`STRATEGIES`):

* ``boost`` (default) — a focused hit gains ``weight`` × the candidates' score range, so a far
  better match elsewhere still wins;
* ``first`` — focused hits first, in their order, then the rest (a filter that never empties).

Scores reported to the reader are never changed: only the order is (``hit.extra["focus"]``
marks a focused hit). Without a conversation there is no focus and retrieval is untouched;
:meth:`~zhiwen.retrieve.pipeline.RetrievalPipeline.search_parents` also answers exactly as
without one when no candidate matches it.

Example::

    >>> def page(title, score):
    ...     return SearchHit(Chunk(id=title + "#0", doc_id=title, text="…", title=title), score)
    >>> hits = [page("西岭大学计算机学院本科生培养", 0.9), page("东湖大学计算机学院本科生培养", 0.8),
    ...         page("东湖大学计算机学院联系方式", 0.1)]
    >>> [h.chunk.title for h in apply_focus(hits, Focus(names=("东湖大学计算机学院",)))][:2]
    ['东湖大学计算机学院本科生培养', '西岭大学计算机学院本科生培养']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from zhiwen.documents import Chunk, SearchHit

#: a focused hit gains this share of the candidates' score range (``boost``)
DEFAULT_WEIGHT = 0.5
#: chunks fetched when a focus is given, so that its documents are among the candidates
DEFAULT_DEPTH = 50


@dataclass(frozen=True, slots=True)
class Focus:
    """What the conversation is about, as retrieval can see it (see the module docstring)."""

    names: tuple[str, ...] = ()  # a title that contains one of these is focused
    doc_ids: frozenset[str] = frozenset()  # these documents are focused (e.g. the last answer's)
    weight: float = DEFAULT_WEIGHT
    depth: int = DEFAULT_DEPTH
    strategy: str = "boost"
    expand: bool = True  # fetch the candidates with the names in front of the query (see ``query``)

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"unknown focus strategy {self.strategy!r} (one of {sorted(STRATEGIES)})")

    def __bool__(self) -> bool:
        return bool(self.names or self.doc_ids) and self.weight > 0

    def query(self, query: str) -> str:
        """The query the candidates are fetched with: with ``expand``, the focus's names that the
        query does not name go in front (among a hundred look-alike 招生信息 pages, only the
        topic's name brings the topic's own among the candidates)."""
        missing = [n for n in self.names if n not in query] if self.expand else []
        return " ".join([*missing, query]) if missing else query

    def matches(self, chunk: Chunk) -> bool:
        if chunk.doc_id in self.doc_ids or (chunk.parent_id or "") in self.doc_ids:
            return True
        return any(name in chunk.title for name in self.names)


def _gain(hits: Sequence[SearchHit], share: float) -> float:
    scores = [h.score for h in hits]
    return share * ((max(scores) - min(scores)) or abs(max(scores)) or 1.0)


def boost(hits: Sequence[SearchHit], focus: Focus) -> list[float]:
    """A focused hit's key gains ``weight`` × (best − worst score)."""
    gain = _gain(hits, focus.weight) if hits else 0.0
    return [h.score + gain if focus.matches(h.chunk) else h.score for h in hits]


def first(hits: Sequence[SearchHit], focus: Focus) -> list[float]:
    """Every focused hit's key above every other one's (their own order kept)."""
    gain = _gain(hits, 1.0) * 2 if hits else 0.0
    return [h.score + gain if focus.matches(h.chunk) else h.score for h in hits]


#: a strategy gives each hit its ordering key (the hit's score, plus what the focus adds)
Strategy = Callable[[Sequence[SearchHit], Focus], list[float]]
#: the strategies by name
STRATEGIES: dict[str, Strategy] = {"boost": boost, "first": first}


def focus_keys(hits: Sequence[SearchHit], focus: Focus) -> dict[str, float]:
    """Each hit's ordering key under ``focus``, by chunk id."""
    keys = STRATEGIES[focus.strategy](hits, focus)
    return {h.chunk.id: k for h, k in zip(hits, keys, strict=True)}


def apply_focus(hits: Sequence[SearchHit], focus: Focus | None) -> list[SearchHit]:
    """``hits`` in the order the focus gives them, focused ones marked ``extra["focus"]``; their
    scores are left as they were (unchanged without a focus)."""
    if focus is None or not focus or not hits:
        return list(hits)
    keys = STRATEGIES[focus.strategy](hits, focus)
    order = sorted(range(len(hits)), key=lambda i: (-keys[i], i))
    return [_marked(hits[i]) if focus.matches(hits[i].chunk) else hits[i] for i in order]


def _marked(hit: SearchHit) -> SearchHit:
    return replace(hit, extra={**hit.extra, "focus": True})


def any_focused(hits: Sequence[SearchHit], focus: Focus) -> bool:
    """Whether the focus names any of ``hits`` (none: retrieval answers as without it)."""
    return any(focus.matches(h.chunk) for h in hits)
