"""Score answer units against a question: lexical overlap, answer type, retrieval position, dense.

Each unit of the retrieved parents gets one score, a weighted sum of (all in [0, 1] unless said):

* ``lexical`` — share of the question's content terms (our tokenizer; weighted by jieba's general
  IDF, so 公司/时间 count little and names count much) found in the unit;
* ``bigram`` — share of the question's character bigrams found in the unit (robust to segmentation);
* ``context`` — the same term share over the unit, its neighbours and its heading path;
* ``heading`` — the term share of its own section headings (markdown: the section named like the
  question is where the answer is);
* ``answer_type`` — 1 when the unit holds a span of the expected type (a date for 哪年, …);
* ``typed_context`` — that, times the ``context`` share: the answer next to the question's terms;
* ``consensus`` — how many other retrieved documents state that same span near the question;
* ``cue`` — 1 when it holds a word that introduces the kind of answer asked (又称 for 别名,
  因为 for 为什么, 为食 for 吃什么);
* ``rank`` / ``section`` — its parent's retrieval rank, its section's best chunk score;
* ``dense`` — cosine between the question and the unit, where the embedder is cheap.

The relevance floor (:mod:`zhiwen.answer.relevance`) reads the best units' evidence.

Example::

    >>> q = analyse_question("广茂铁路全长多少公里？")
    >>> scored = score_units(q, [Candidate(split_units(doc), rank=0, section_scores={})])
    >>> scored[0].unit.text
    '广茂铁路全长364公里。'
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from zhiwen.answer.question_types import Question, answer_spans, has_cue
from zhiwen.answer.units import DocUnits, Unit
from zhiwen.text.tokenizer import Tokenizer

EmbedTexts = Callable[[list[str]], np.ndarray]  # rows L2-normalised

_UNKNOWN_IDF = 12.0  # words missing from jieba's table are mostly names: informative
_IDF_FLOOR = 1.0
_SINGLE_CHAR_IDF = 4.0  # single-character question terms below this IDF are not scored
_BIGRAM_CHARS = re.compile(r"[\u4e00-\u9fffA-Za-z0-9]")
_lock = threading.Lock()
_idf: dict[str, str] | None = None


def _load_idf() -> dict[str, str]:
    """jieba's general-corpus IDF table (word → idf as text; parsed on lookup, 270k words)."""
    global _idf
    with _lock:
        if _idf is None:
            import jieba

            path = Path(jieba.__file__).parent / "analyse" / "idf.txt"
            parts = path.read_text("utf-8").split()
            _idf = dict(zip(parts[0::2], parts[1::2], strict=False))
        return _idf


def preload_idf() -> None:
    """Load the IDF table now (a server warms it at start; the first answer then pays nothing)."""
    _load_idf()


@lru_cache(maxsize=65536)
def term_weight(term: str) -> float:
    raw = _load_idf().get(term)
    if raw is None:
        return _UNKNOWN_IDF
    try:
        return max(_IDF_FLOOR, float(raw))
    except ValueError:
        return _UNKNOWN_IDF


@lru_cache(maxsize=1)
def _tokenizer() -> Tokenizer:
    return Tokenizer()


@lru_cache(maxsize=65536)
def unit_terms(text: str) -> frozenset[str]:
    return frozenset(_tokenizer().tokenize(text))


@lru_cache(maxsize=65536)
def bigrams(text: str) -> frozenset[str]:
    chars = "".join(_BIGRAM_CHARS.findall(text.lower()))
    return frozenset(chars[i : i + 2] for i in range(len(chars) - 1))


@dataclass(frozen=True, slots=True)
class Weights:
    """How much each signal counts; a zero switches it off (the per-lever benchmark does that).

    Tuned on half a of CMRC2018 and RGB-zh (bench/bench_answers.py); ``heading`` and ``echo``
    matter for markdown manuals only (those sets have no headings) and were set by hand.
    """

    lexical: float = 1.0
    bigram: float = 0.25
    context: float = 0.3
    answer_type: float = 0.25
    typed_context: float = 0.5  # answer type × how much of the question the unit's context covers
    cue: float = 0.1  # the unit holds a word that introduces the kind of answer asked (又称, 因为)
    consensus: float = 0.3  # its typed answer recurs in other retrieved documents
    heading: float = 0.4  # its own section headings (below the title) name the question's terms
    echo: float = 0.5  # subtracted when the unit quotes the question itself (输入“…？”): no answer
    rank: float = 0.1  # subtracted per parent rank
    section: float = 0.6  # its section's best chunk score (0..1)
    position: float = 0.02  # subtracted for units late in their document
    dense: float = 0.0


@dataclass(slots=True)
class Candidate:
    """One retrieved parent: its units, its rank, and its sections' best chunk scores (0..1)."""

    doc: DocUnits
    rank: int
    section_scores: dict[tuple[str, ...], float] = field(default_factory=dict)
    score: float = 0.0  # the parent's retrieval score (normalised, 0..1)
    dense: float | None = None  # best question–chunk cosine among its matched chunks (None: unknown)


@dataclass(slots=True)
class ScoredUnit:
    unit: Unit
    candidate: Candidate
    index: int  # position of the unit in its document
    score: float
    evidence: float  # question coverage by the unit and its context (for the relevance floor)
    typed: bool  # holds a span of the expected answer type
    parts: dict[str, float] = field(default_factory=dict)


def _composed_of(term: str, terms: dict[str, float]) -> bool:
    """Every character of ``term`` lies inside one of the other ``terms`` found in it."""
    covered = [False] * len(term)
    for part in terms:
        if part != term and len(part) < len(term):
            start = term.find(part)
            while start >= 0:
                covered[start : start + len(part)] = [True] * len(part)
                start = term.find(part, start + 1)
    return len(term) > 1 and all(covered)


@dataclass(frozen=True, slots=True)
class QuestionTerms:
    terms: dict[str, float]  # term → weight
    total: float
    grams: frozenset[str]

    @classmethod
    def of(cls, question: Question) -> QuestionTerms:
        weighted = {t: term_weight(t) for t in unit_terms(question.content or question.text)}
        # a common single character (下 in 离线模式下, 年 in 2021年) matches everywhere: no evidence
        terms = {t: w for t, w in weighted.items() if len(t) > 1 or w >= _SINGLE_CHAR_IDF} or weighted
        # a compound whose parts are terms too (文件格式 → 文件, 格式) is evidence only through
        # them: "支持的导入格式…以 .md 文件为主" answers 支持哪些文件格式, though it never says 文件格式
        terms = {t: w for t, w in terms.items() if not _composed_of(t, terms)} or terms
        return cls(terms, sum(terms.values()), bigrams(question.content or question.text))

    def coverage(self, tokens: frozenset[str] | set[str]) -> float:
        if not self.total:
            return 0.0
        return sum(w for t, w in self.terms.items() if t in tokens) / self.total

    def gram_share(self, text: str, *, exclude: str = "") -> float:
        """Share of the question's bigrams in ``text``, leaving out those ``exclude`` already has."""
        grams = self.grams - bigrams(exclude) if exclude else self.grams
        if not grams:
            return 0.0
        return len(grams & bigrams(text)) / len(grams)


def _section_score(candidate: Candidate, path: tuple[str, ...]) -> float:
    scores = candidate.section_scores
    if not scores:
        return candidate.score
    if path in scores:
        return scores[path]
    best = [s for p, s in scores.items() if p[: len(path)] == path or path[: len(p)] == p]
    return max(best, default=0.0)


def _section_terms(title: str, path: tuple[str, ...]) -> frozenset[str]:
    """Terms of the unit's own headings: the path without the document title (usually its H1)."""
    own = path[1:] if path and path[0] == title else path
    return unit_terms(" ".join(own)) if own else frozenset()


def _discrimination(token_sets: Sequence[frozenset[str]], terms: dict[str, float]) -> dict[str, float]:
    """Question term weights × how rare the term is among the candidate units (local IDF, 0..1)."""
    n = len(token_sets)
    if n < 2:
        return dict(terms)
    top = math.log(1 + n)
    out = {}
    for term, weight in terms.items():
        df = sum(term in tokens for tokens in token_sets)
        out[term] = weight * (math.log(1 + n / df) / top if df else 1.0)
    return out


def _span_support(
    rows: Sequence[tuple[Candidate, int, frozenset[str], frozenset[str]]],
    spans: Sequence[list[str]],
    lexical: Sequence[float],
    min_lexical: float = 0.3,
) -> dict[str, float]:
    """Typed span → share of the other retrieved documents that state it near the question's terms.

    News-like corpora repeat a fact (12人, 1月3日) across sources; a span several documents
    give in a sentence about the question is likelier the answer than one only a single source has.
    """
    docs: dict[str, set[int]] = {}
    for (cand, _i, _own, _ctx), found, lex in zip(rows, spans, lexical, strict=True):
        if lex >= min_lexical:
            for span in found:
                docs.setdefault(span, set()).add(cand.rank)
    n = len({r[0].rank for r in rows})
    if n < 2:
        return {}
    return {span: (len(ranks) - 1) / (n - 1) for span, ranks in docs.items()}


def score_units(
    question: Question,
    candidates: Sequence[Candidate],
    *,
    weights: Weights = Weights(),
    query_vector: np.ndarray | None = None,
    embed: EmbedTexts | None = None,
    dense_top: int = 12,
) -> list[ScoredUnit]:
    """Every unit of every candidate, best first (see the module docstring for the signals).

    A unit is read with its document's title and its heading path: the subject a question names
    is usually the title, so every unit of that document gets it, and the units compete on the
    rest of the question (体长, 哪一年 …) instead of the definition sentence always winning.
    """
    q = QuestionTerms.of(question)
    rows: list[tuple[Candidate, int, frozenset[str], frozenset[str]]] = []
    for cand in candidates:
        title_terms = unit_terms(cand.doc.title) if cand.doc.title else frozenset()
        for i, unit in enumerate(cand.doc.units):
            own = unit_terms(unit.plain)
            rows.append((cand, i, own, own | title_terms | unit_terms(" ".join(unit.path))))
    local = _discrimination([r[3] for r in rows], q.terms)
    local_total = sum(local.values()) or 1.0
    lexical = [sum(w for t, w in local.items() if t in r[3]) / local_total for r in rows]
    typed_on = bool(weights.answer_type or weights.consensus) and question.answer_type is not None
    spans = [answer_spans(r[0].doc.units[r[1]].plain, question) if typed_on else [] for r in rows]
    support = _span_support(rows, spans, lexical)
    echo = question.text.rstrip("？?！!。 ") if len(question.content) >= 6 else ""
    out: list[ScoredUnit] = []
    for k, (cand, i, _own, with_context) in enumerate(rows):
        unit = cand.doc.units[i]
        block = cand.doc.blocks[unit.block]
        near = set(with_context)
        for j in (i - 1, i + 1):
            if block.first <= j < block.last:
                near |= rows[k + j - i][2]
        context_text = f"{cand.doc.title} {' '.join(unit.path)}"
        parts = {
            "lexical": lexical[k],
            "bigram": q.gram_share(unit.plain, exclude=context_text),
            "heading": q.coverage(_section_terms(cand.doc.title, unit.path)),
            "context": q.coverage(near),
            "answer_type": 1.0 if spans[k] else 0.0,
            "typed_context": q.coverage(near) if spans[k] else 0.0,
            "consensus": max((support.get(span, 0.0) for span in spans[k]), default=0.0),
            "cue": 1.0 if weights.cue and has_cue(unit.plain, question) else 0.0,
            "section": _section_score(cand, unit.path),
        }
        score = sum(getattr(weights, name) * value for name, value in parts.items())
        score -= weights.rank * cand.rank + weights.position * min(i, 20) / 20
        if echo and echo in unit.plain:
            score -= weights.echo
        out.append(ScoredUnit(unit, cand, i, score, parts["context"], bool(spans[k]), parts))
    out.sort(key=lambda s: -s.score)
    if weights.dense and embed is not None and query_vector is not None and out:
        _add_dense(out, weights.dense, query_vector, embed, dense_top)
    return out


def _add_dense(
    scored: list[ScoredUnit], weight: float, query_vector: np.ndarray, embed: EmbedTexts, top: int
) -> None:
    """Re-score the best ``top`` units with the question–unit cosine (one embedding batch)."""
    head = scored[:top]
    vectors = embed([s.unit.plain[:512] for s in head])
    sims = vectors @ np.asarray(query_vector, dtype=np.float32)
    for s, sim in zip(head, sims, strict=True):
        value = float(sim) if math.isfinite(float(sim)) else 0.0
        s.parts["dense"] = value
        s.score += weight * value
    head.sort(key=lambda s: -s.score)
    scored[:top] = head
