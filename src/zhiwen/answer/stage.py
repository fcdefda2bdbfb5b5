"""The extractive answering stage: retrieved parents → a short, structured, cited offline answer.

Used by generic QA (:mod:`zhiwen.answer.qa`), ``zhiwen ask``, ``POST /api/v1/qa`` and every
app's free-text offline part. Steps: split each parent into units
(:mod:`~zhiwen.answer.units`), score them against the question
(:mod:`~zhiwen.answer.scoring`), compare the best evidence with the relevance floor
(:mod:`~zhiwen.answer.relevance`), compose the markdown (:mod:`~zhiwen.answer.compose`).
Citations ``[n]`` are 1-based positions in ``parents``. Nothing is invented: every word comes from
the passages, except the fixed Chinese framing (相关段落, 可能相关, the not-found line).

Apps whose offline answers are their own (recipes, policy, listings, advisor) use
:func:`excerpt` for their free-text parts: the best part of one passage instead of its opening.

Example::

    >>> found = pipeline.search_parents(kb, "怎么导入文档？", top_k=5)
    >>> ans = answer_from_parents("怎么导入文档？", found.parents, floor=0.5)
    >>> ans.answerable, ans.lead
    (True, '导入文档使用 `zhiwen index` 命令……[1]')
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from zhiwen.answer.compose import NOT_FOUND_LEAD, ComposeOptions, compose, trim_units_text
from zhiwen.answer.crosslingual import question_for, read_across
from zhiwen.answer.question_types import analyse_question
from zhiwen.answer.relevance import DEFAULT_MODEL, RelevanceModel, is_answerable, relevance
from zhiwen.answer.scoring import Candidate, EmbedTexts, QuestionTerms, Weights, score_units
from zhiwen.answer.units import DocUnits, Unit, split_units
from zhiwen.documents import Document, ParentHit


@dataclass(frozen=True, slots=True)
class AnswerOptions:
    weights: Weights = field(default_factory=Weights)
    compose: ComposeOptions = field(default_factory=ComposeOptions)
    dense_top: int = 12  # units re-scored with the dense similarity (when an embedder is given)
    relevance: RelevanceModel = DEFAULT_MODEL


@dataclass(slots=True)
class ExtractiveAnswer:
    text: str  # markdown body, without the extractive note
    lead: str
    answerable: bool
    relevance: float  # best evidence, 0..1 (see zhiwen.answer.relevance)
    floor: float
    cited: list[int] = field(default_factory=list)
    seconds: float = 0.0


def _section(path: object) -> tuple[str, ...]:
    if not isinstance(path, str) or not path:
        return ()
    return tuple(p.strip() for p in path.split(">") if p.strip())


def candidates_from_parents(parents: Sequence[ParentHit]) -> list[Candidate]:
    """Parents → scoring candidates; chunk scores are scaled by the best one (0..1)."""
    top = max((h.score for p in parents for h in p.matched_chunks), default=0.0)
    scale = top if top > 0 else 1.0
    out = []
    for rank, parent in enumerate(parents):
        sections: dict[tuple[str, ...], float] = {}
        for hit in parent.matched_chunks:
            key = _section(hit.chunk.metadata.get("section"))
            sections[key] = max(sections.get(key, 0.0), max(hit.score, 0.0) / scale)
        dense = [h.vector_score for h in parent.matched_chunks if h.vector_score is not None]
        out.append(
            Candidate(
                split_units(parent.document),
                rank,
                sections,
                score=max(parent.score, 0.0) / scale,
                dense=max(dense) if dense else None,
            )
        )
    return out


def passage_texts(parents: Sequence[ParentHit]) -> list[str]:
    """The retrieved passages (best parent first), then their documents: what an English question
    is read against (:mod:`~zhiwen.answer.crosslingual`)."""
    chunks = [h.chunk.text for p in parents for h in sorted(p.matched_chunks, key=lambda h: -h.score)]
    return chunks + [f"{p.document.title}\n{p.document.text}" for p in parents]


def answer_from_parents(
    question: str,
    parents: Sequence[ParentHit],
    *,
    floor: float,
    options: AnswerOptions = AnswerOptions(),
    query_vector: np.ndarray | None = None,
    embed: EmbedTexts | None = None,
    reranker_passed_none: bool = False,
) -> ExtractiveAnswer:
    """The offline answer to ``question`` from ``parents`` (best first); see the module docstring.

    ``reranker_passed_none``: a configured reranker scored the hits and none reached its
    threshold (the parents are its fallback). A cross-encoder reads the question and the passage
    together, which the lexical floor cannot, so its "nothing relevant" stands.
    """
    start = time.perf_counter()
    reading = read_across(question, passage_texts(parents))
    q = analyse_question(reading.text if reading is not None else question)
    candidates = [c for c in candidates_from_parents(parents) if c.doc.units]
    scored = score_units(
        q,
        candidates,
        weights=options.weights,
        query_vector=query_vector,
        embed=embed,
        dense_top=options.dense_top,
    )
    if not scored:
        return ExtractiveAnswer(
            NOT_FOUND_LEAD, NOT_FOUND_LEAD, False, 0.0, floor, [], time.perf_counter() - start
        )
    best = relevance(q, scored, options.relevance)
    supported = reading is None or reading.supported  # an English question: most of its words there
    answerable = is_answerable(best, floor) and not reranker_passed_none and supported
    composed = compose(q, scored, answerable=answerable, options=options.compose)
    return ExtractiveAnswer(
        composed.text,
        composed.lead,
        answerable,
        best,
        floor,
        composed.cited,
        time.perf_counter() - start,
    )


_ENUMERATED = re.compile(
    r"\s*(?:[（(][一二三四五六七八九十\d]{1,3}[)）]|\d{1,3}[.、)]|[一二三四五六七八九十]{1,3}、)"
)


def _item_like(doc: DocUnits, unit: Unit) -> bool:
    """A list item or row, or a paragraph numbered like one (（三）…, 3. …, 三、…)."""
    return doc.blocks[unit.block].kind in ("list", "table") or bool(_ENUMERATED.match(unit.plain))


_BULLET = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+")


def _heading_of(doc: DocUnits, unit: Unit, heading: str) -> str:
    """The heading a list item stands under (``❌ You Cannot``), or "" for anything else.

    A bullet means what its heading says of it: 「Work, study…」 under 「❌ You Cannot」 is a
    prohibition, so it is never quoted without it. The unit's own headings first (those inside
    the passage), else ``heading``: the section a passage cut from a longer one came from.
    """
    if unit.kind != "item":
        return ""
    path = [p for p in unit.path if p and p != doc.title]
    return " › ".join(path) if path else heading.strip()


def excerpt(question: str, title: str, text: str, *, max_chars: int = 200, heading: str = "") -> str:
    """The part of one passage that answers ``question`` best (for apps' free-text parts).

    The best-scored unit and, while they fit in ``max_chars``, the units right after it in the
    same block; a longer unit is trimmed around the question's terms. Markup is kept. A list
    item is quoted with its heading (``heading``: the passage's section, when the passage does
    not carry its heading line itself).

    Example::

        >>> excerpt("过境免签可以停留多久？", "过境免签", policy_text, max_chars=120)
        '部分国家的外国人过境中国可享受二百四十小时免签停留……'
        >>> excerpt("免签可以工作吗？", "免签政策", "### ❌ You Cannot\n\n- Work, study, live long-term.")
        '❌ You Cannot：Work, study, live long-term.'
    """
    q = question_for(question, [text])
    doc = split_units(Document(id=f"excerpt:{title}", text=text, title=title))
    if not doc.units:
        return ""
    scored = score_units(q, [Candidate(doc, 0)])
    best = scored[0]
    block = doc.blocks[best.unit.block]
    # an intro ("有下列情形之一的：") brings what it introduces, even as separate paragraphs
    intro = best.unit.plain.rstrip().endswith(("：", ":")) and best.index + 1 == block.last
    end = len(doc.units) if intro else block.last
    head = _heading_of(doc, best.unit, heading)
    budget = max(max_chars - len(head) - 1, max_chars // 2) if head else max_chars
    pieces = [best.unit.text]
    for unit in doc.units[best.index + 1 : end]:
        if sum(len(p) + 1 for p in pieces) + len(unit.text) > budget:  # + 1: a line break
            break
        if intro and unit.block != best.unit.block and not _item_like(doc, unit):
            break  # the enumeration is over (the next article, a new paragraph)
        if head and unit.path != best.unit.path:
            break  # an item under another heading means what that heading says
        pieces.append(unit.text)
    joined = ("\n" if intro or block.kind in ("list", "table") else "").join(pieces)
    text = trim_units_text(joined, QuestionTerms.of(q), q, budget)  # only a long first unit is cut
    if not head:
        return text
    return f"{head}：{_BULLET.sub('', text)}" if len(pieces) == 1 else f"{head}：\n{text}"
