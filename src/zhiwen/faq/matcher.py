"""Does an FAQ entry answer this question word for word?

A KB's enabled entries are held in memory: every entry question (main and similar) is one row
with its vector (the KB's embedder) and its lexical terms (:mod:`zhiwen.faq.lexical`). A question
is scored against every row::

    score = dense_weight × cosine(question, row) + (1 − dense_weight) × lexical(question, row)
            − contrast_penalty × (differences: another number, the opposite polarity, a new name, …)

(the differences, :mod:`zhiwen.faq.contrast`, are looked for in the best ``contrast_rows`` rows);
an entry's score is its best row's, and the best entry answers when its score reaches
``threshold`` AND it leads the best other entry by ``margin`` (two entries that alike are a
guess). A question whose normal form (:func:`~zhiwen.faq.normalize.normalise_question`) is an
entry question's is answered with score 1.0 before anything is embedded. Otherwise the entries
over ``suggest_floor`` are the near misses for 「您是不是想问：」.

The threshold, margin and weight are ``faq`` settings, chosen by ``bench/bench_faq.py``.
Row vectors are embedded with ``embed_query`` (a question against questions: the same side of
e5 on both ends) and kept in the embedding cache under ``<embedder>|query`` by content hash, and
a rebuilt matcher takes the vectors of unchanged questions from the one it replaces: a KB of
5,000 entries loads without embedding anything.

Example::

    >>> matcher = FAQMatcher(entries, get_embedder("hash"))
    >>> decision = matcher.match("外国人免签入境能待几天", query_vector=None)
    >>> match decision:
    ...     case FAQMatch(entry=entry, question=asked, score=score): print(entry.answer)
    ...     case FAQMiss(suggestions=near): print("您是不是想问：", [s.question for s in near])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from zhiwen.config import FAQSettings, get_settings
from zhiwen.documents import content_hash
from zhiwen.embed.base import Embedder
from zhiwen.embed.cache import EmbeddingCache
from zhiwen.faq.contrast import QuestionFacts
from zhiwen.faq.lexical import LexicalIndex
from zhiwen.faq.model import FAQDecision, FAQEntry, FAQMatch, FAQMiss, FAQSuggestion
from zhiwen.faq.normalize import normalise_question
from zhiwen.text.tokenizer import Tokenizer


@dataclass(frozen=True, slots=True)
class RowScores:
    """A question's dense and lexical similarity to every row (the bench sweeps blends of them)."""

    dense: np.ndarray
    lexical: np.ndarray

    def blend(self, dense_weight: float) -> np.ndarray:
        return dense_weight * self.dense + (1.0 - dense_weight) * self.lexical


class FAQMatcher:
    """The matcher of one KB's entries (disabled ones left out); rebuild it when they change."""

    def __init__(
        self,
        entries: Iterable[FAQEntry],
        embedder: Embedder,
        *,
        settings: FAQSettings | None = None,
        tokenizer: Tokenizer | None = None,
        cache: EmbeddingCache | None = None,
        previous: FAQMatcher | None = None,
    ) -> None:
        self.settings = settings or get_settings().faq
        self.embedder = embedder
        self.entries: tuple[FAQEntry, ...] = tuple(e for e in entries if e.enabled)
        self.row_entry, self.row_text = _rows(self.entries)
        # rows of one entry are contiguous: an entry's score is the max over its slice
        self._starts = np.searchsorted(self.row_entry, np.arange(len(self.entries)))
        self._exact: dict[str, int] = {}
        for row, text in enumerate(self.row_text):
            self._exact.setdefault(normalise_question(text), row)
        self._tokenizer = tokenizer
        self._facts: dict[int, QuestionFacts] = {}
        self._answers: dict[int, str] = {}  # a row's numbers, polarity, names: on first need
        self._vectors_by_hash = _question_vectors(self.row_text, embedder, cache, previous)
        self.vectors = (
            np.stack([self._vectors_by_hash[content_hash(t)] for t in self.row_text])
            if self.row_text
            else np.zeros((0, embedder.dim), dtype=np.float32)
        )

    @cached_property
    def lexical(self) -> LexicalIndex:
        """The rows' lexical index, built on first use (never with ``dense_weight`` 1.0)."""
        return LexicalIndex(self.row_text, self._tokenizer or Tokenizer())

    def __len__(self) -> int:
        return len(self.entries)

    def exact(self, question: str) -> FAQMatch | None:
        """The entry asking ``question`` in the same normal form, score 1.0."""
        row = self._exact.get(normalise_question(question))
        if row is None:
            return None
        return FAQMatch(self.entries[self.row_entry[row]], self.row_text[row], 1.0)

    def scores(
        self, question: str, query_vector: np.ndarray | None = None, *, lexical: bool = True
    ) -> RowScores:
        """``question``'s similarity to every row; ``query_vector`` is its ``embed_query`` (the
        one retrieval computes anyway), embedded here when None. ``lexical=False`` leaves the
        lexical scores at 0."""
        if not self.row_text:
            empty = np.zeros(0, dtype=np.float32)
            return RowScores(empty, empty)
        vector = self.embedder.embed_query(question) if query_vector is None else query_vector
        dense = np.clip(self.vectors @ np.asarray(vector, dtype=np.float32), 0.0, 1.0)
        sims = self.lexical.similarities(question) if lexical else np.zeros_like(dense)
        return RowScores(dense, sims)

    def match(self, question: str, *, query_vector: np.ndarray | None = None) -> FAQDecision:
        """The entry answering ``question`` word for word, or the near misses."""
        hit = self.exact(question)
        if hit is not None:
            return hit
        if not self.entries:
            return FAQMiss()
        weight = self.settings.dense_weight
        blended = self.scores(question, query_vector, lexical=weight < 1.0).blend(weight)
        return self.decide(self.contrasted(question, blended), suggest_from=blended)

    def contrasted(
        self, question: str, row_scores: np.ndarray, settings: FAQSettings | None = None
    ) -> np.ndarray:
        """``row_scores`` less ``contrast_penalty`` for each difference (another number, the
        opposite polarity, a name the row lacks: :mod:`zhiwen.faq.contrast`) between the question
        and each of the ``contrast_rows`` best rows."""
        cfg = settings or self.settings
        if cfg.contrast_penalty <= 0 or cfg.contrast_rows <= 0 or not len(row_scores):
            return row_scores
        k = min(cfg.contrast_rows, len(row_scores))
        facts = QuestionFacts(question)
        out = row_scores.copy()
        for row in np.argpartition(-row_scores, k - 1)[:k]:
            found = facts.differences(self.row_text[row], self._row_facts(int(row)))
            out[row] -= len(found) * cfg.contrast_penalty
        return out

    def _row_facts(self, row: int) -> QuestionFacts:
        facts = self._facts.get(row)
        if facts is None:
            facts = self._facts[row] = QuestionFacts(self.row_text[row])
        return facts

    def decide(
        self,
        row_scores: np.ndarray,
        settings: FAQSettings | None = None,
        *,
        suggest_from: np.ndarray | None = None,
    ) -> FAQDecision:
        """Threshold and margin over per-row scores (:meth:`RowScores.blend`, :meth:`contrasted`);
        the near misses are ranked by ``suggest_from`` when given (the scores before the contrast
        checks: 「144小时过境免签」 is still worth offering 「240小时过境免签是什么政策？」)."""
        cfg = settings or self.settings
        if not self.entries:
            return FAQMiss()
        per_entry = np.maximum.reduceat(row_scores, self._starts)
        best, runner_up = self._top(per_entry, 2)
        score = float(per_entry[best])
        second = float(per_entry[runner_up]) if runner_up is not None else 0.0
        if score >= cfg.threshold and score - second >= cfg.margin:
            return FAQMatch(self.entries[best], self._best_row_text(best, row_scores), round(score, 4))
        return FAQMiss(self._suggestions(per_entry if suggest_from is None else suggest_from, cfg))

    def _top(self, per_entry: np.ndarray, k: int) -> tuple[int, int | None]:
        order = _best_first(per_entry, k)
        return int(order[0]), (int(order[1]) if len(order) > 1 else None)

    def _suggestions(self, row_scores: np.ndarray, cfg: FAQSettings) -> tuple[FAQSuggestion, ...]:
        if cfg.suggestions <= 0:
            return ()
        per_entry = np.maximum.reduceat(row_scores, self._starts)
        return tuple(
            FAQSuggestion(self.entries[int(i)], round(float(per_entry[i]), 4))
            for i in _best_first(per_entry, cfg.suggestions)
            if per_entry[i] >= cfg.suggest_floor
        )

    def _best_row_text(self, entry: int, row_scores: np.ndarray) -> str:
        start = int(self._starts[entry])
        count = len(self.entries[entry].questions)
        return self.row_text[start + int(np.argmax(row_scores[start : start + count]))]


def _best_first(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest values, largest first (a partition, then a sort of ``k``)."""
    k = min(len(values), k)
    top = np.argpartition(-values, k - 1)[:k]
    return top[np.argsort(-values[top], kind="stable")]


def _rows(entries: Sequence[FAQEntry]) -> tuple[np.ndarray, list[str]]:
    owner: list[int] = []
    texts: list[str] = []
    for i, entry in enumerate(entries):
        for question in entry.questions:
            owner.append(i)
            texts.append(question)
    return np.asarray(owner, dtype=np.int64), texts


def query_side(embedder: Embedder) -> str:
    """The embedding cache's name for question vectors embedded with ``embed_query``."""
    return f"{embedder.name}|query"


def _question_vectors(
    texts: Sequence[str], embedder: Embedder, cache: EmbeddingCache | None, previous: FAQMatcher | None
) -> dict[str, np.ndarray]:
    """Content hash → query-side vector: from the previous matcher, the cache, else embedded."""
    wanted = list(dict.fromkeys(content_hash(t) for t in texts))
    known: dict[str, np.ndarray] = {}
    if previous is not None and previous.embedder.name == embedder.name:
        known = {h: previous._vectors_by_hash[h] for h in wanted if h in previous._vectors_by_hash}
    missing = [h for h in wanted if h not in known]
    if cache is not None and missing:
        found = cache.get_many(missing, model=query_side(embedder))
        known.update((h, v) for h, v in found.items() if v.shape[0] == embedder.dim)
    todo = {content_hash(t): t for t in texts if content_hash(t) not in known}
    fresh = {h: embedder.embed_query(t) for h, t in todo.items()}
    if cache is not None and fresh:
        cache.put_many(fresh, model=query_side(embedder))
    known.update(fresh)
    return known
