"""Chinese-first tokenisation on jieba segmentation (rjieba, the Rust port: same tokens, ~40× faster).

Indexing and querying use ``cut_for_search`` (it also emits the sub-words of long words, e.g.
``上海浦东`` → ``上海``, ``浦东``, ``上海浦东``), which measured ~1 nDCG point above plain ``cut``
on RGB-zh (``../shared/BASELINES.md``). Punctuation, whitespace and stop words are dropped;
Latin words are lower-cased.

``mode="mixed"`` adds the character bigrams of every run of Chinese characters to the words
(``浦东机场`` → … ``浦东``, ``东机``, ``机场``): a word the dictionary splits differently in the
query and the passage still matches through its bigrams. It is a KB-level choice (the index
stores the tokens) and pays only with a smaller BM25 ``k1`` (bigrams repeat what words say);
``bench/bench_retrieval.py`` measures it.

Example::

    >>> tok = Tokenizer()
    >>> tok.tokenize("上海浦东机场怎么去？")
    ['上海', '浦东', '上海浦东', '机场', '怎么', '去']
    >>> add_words(["知识库"])  # domain words stay whole (and their sub-words are kept)
    >>> tok.tokenize("怎么创建知识库？")
    ['宫保', '鸡丁', '宫保鸡', '知识库', '怎么', '做']
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from pathlib import Path

import rjieba

_LOCK = threading.Lock()
_LOADED_DICTS: set[str] = set()


# a letter or digit of any script (Unicode categories L* and N*): \w minus the underscore
_WORD_CHAR = re.compile(r"[^\W_]")
# runs of CJK unified ideographs (basic block + extension A), the characters bigrams are made of
_HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]{2,}")

MODES = ("search", "exact", "mixed")


def han_bigrams(text: str) -> list[str]:
    """Overlapping character bigrams of every run of Chinese characters, in order."""
    out: list[str] = []
    for run in _HAN_RUN.findall(text):
        out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


def _is_word(token: str) -> bool:
    """Keep tokens with at least one letter, digit or CJK character."""
    # a regex search is ~4x cheaper per token than a unicodedata.category loop, and this runs
    # on every token at indexing time
    return _WORD_CHAR.search(token) is not None


@lru_cache(maxsize=1)
def default_stopwords() -> frozenset[str]:
    text = resources.files("zhiwen.text").joinpath("stopwords_zh.txt").read_text("utf-8")
    return frozenset(w.strip() for w in text.splitlines() if w.strip() and not w.startswith("#"))


def load_user_dict(path: str | Path) -> int:
    """Add a jieba-format user dictionary (``word [freq] [tag]`` per line); returns words added.

    rjieba's dictionary is process-wide, like jieba's: a word added once applies to every
    tokenizer in the process.
    """
    key = str(Path(path).resolve())
    with _LOCK:
        if key in _LOADED_DICTS:
            return 0
        n = 0
        for line in Path(path).read_text("utf-8").splitlines():
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            freq = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
            tag = parts[2] if len(parts) > 2 else None
            rjieba.add_word(parts[0], freq, tag)
            n += 1
        _LOADED_DICTS.add(key)
        return n


def add_words(words: Iterable[str]) -> None:
    """Teach the segmenter domain words (dish names, estate names) so they stay whole."""
    with _LOCK:
        for w in words:
            if w and not rjieba.has_word(w):
                rjieba.add_word(w, None, None)


class Tokenizer:
    """Segment, normalise and filter Chinese (and mixed) text into BM25 tokens."""

    def __init__(
        self,
        *,
        mode: str = "search",
        stopwords: Iterable[str] | None = None,
        user_dict: str | Path | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.mode = mode
        self.stopwords = default_stopwords() if stopwords is None else frozenset(stopwords)
        if user_dict is not None:
            load_user_dict(user_dict)

    def segment(self, text: str) -> list[str]:
        """Raw segmentation, nothing dropped (used for display and rules)."""
        if self.mode == "exact":
            return list(rjieba.cut(text, True))
        return list(rjieba.cut_for_search(text, True))

    def tokenize(self, text: str) -> list[str]:
        out: list[str] = []
        stop = self.stopwords
        for raw in self.segment(text):
            tok = raw.strip().lower()
            if tok and tok not in stop and _is_word(tok):
                out.append(tok)
        if self.mode == "mixed":
            out.extend(han_bigrams(text))
        return out

    def tokenize_many(self, texts: Iterable[str]) -> list[list[str]]:
        return [self.tokenize(t) for t in texts]

    # Queries go through the same path; kept separate so query-time expansion can differ.
    def tokenize_query(self, text: str) -> list[str]:
        return self.tokenize(text)
