"""Lexical similarity of a question to every entry question: TF-IDF cosine over words and
character bigrams.

Words (the KB's tokenizer, stop words dropped) carry what a question is about; character bigrams
keep a word the segmenter cuts differently, or a typo in a long word, from losing the whole match
(「满五唯一」 typed 「满五为一」 still shares 满五).
IDF is taken over the entry questions, so a word every question shares (怎么, 什么) weighs little
and a name (a country, a city, a tax) weighs much. A query word no entry question has gets the
highest IDF: it lowers the similarity to every entry — the question asks about something the
FAQ does not name (美国 against an FAQ of visa-free countries).

Example::

    >>> index = LexicalIndex(["外国人入境免签可以停留几天", "外国人出境需要什么手续"], Tokenizer())
    >>> sims = index.similarities("外国人免签入境能待几天")
    >>> bool(sims[0] > sims[1])
    True
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import sparse

from zhiwen.faq.normalize import fold, normalise_question
from zhiwen.text.tokenizer import Tokenizer

#: which features a question is made of: words, character bigrams, or both
FEATURES = ("words", "bigrams", "both")


def char_bigrams(text: str) -> list[str]:
    """Overlapping bigrams of the question's normal form (letters and digits only)."""
    bare = normalise_question(text)
    if len(bare) < 2:
        return [bare] if bare else []
    return [bare[i : i + 2] for i in range(len(bare) - 1)]


class LexicalIndex:
    """The entry questions as unit TF-IDF rows (binary term frequency) in one sparse matrix."""

    def __init__(self, texts: Sequence[str], tokenizer: Tokenizer, *, features: str = "both") -> None:
        if features not in FEATURES:
            raise ValueError(f"features must be one of {', '.join(FEATURES)}, got {features!r}")
        self.tokenizer = tokenizer
        self.features = features
        rows = [self.terms(t) for t in texts]
        self.vocabulary: dict[str, int] = {}
        for terms in rows:
            for term in terms:
                self.vocabulary.setdefault(term, len(self.vocabulary))
        n = max(1, len(rows))
        df = np.zeros(len(self.vocabulary), dtype=np.float64)
        for terms in rows:
            df[[self.vocabulary[t] for t in terms]] += 1
        self.idf = np.log((n + 1) / (df + 0.5)).astype(np.float32)
        #: the weight of a query term no entry question has
        self.unseen_idf = float(math.log((n + 1) / 0.5))
        self.matrix = self._matrix(rows)

    def terms(self, text: str) -> set[str]:
        out: set[str] = set()
        if self.features != "bigrams":
            out.update(self.tokenizer.tokenize(fold(text)))
        if self.features != "words":
            out.update("\x00" + b for b in char_bigrams(text))  # kept apart from one-character words
        return out

    def _matrix(self, rows: list[set[str]]) -> sparse.csc_matrix:
        indptr, indices, data = [0], [], []
        for terms in rows:
            cols = sorted(self.vocabulary[t] for t in terms)
            weights = self.idf[cols]
            norm = float(np.linalg.norm(weights)) or 1.0
            indices.extend(cols)
            data.extend((weights / norm).tolist())
            indptr.append(len(indices))
        shape = (len(rows), len(self.vocabulary))
        csr = sparse.csr_matrix((np.asarray(data, dtype=np.float32), indices, indptr), shape=shape)
        return csr.tocsc()  # a query reads a few columns

    def similarities(self, question: str) -> np.ndarray:
        """Cosine of ``question`` with every entry question, (rows,) float32 in [0, 1]."""
        terms = self.terms(question)
        cols = [self.vocabulary[t] for t in terms if t in self.vocabulary]
        n_rows = self.matrix.shape[0]
        if not cols:
            return np.zeros(n_rows, dtype=np.float32)
        weights = self.idf[cols]
        unseen = len(terms) - len(cols)
        norm = math.sqrt(float(weights @ weights) + unseen * self.unseen_idf**2)
        sims = self.matrix[:, cols] @ (weights / norm)
        return np.asarray(sims, dtype=np.float32).reshape(n_rows)
