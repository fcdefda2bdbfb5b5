"""A deterministic hashing embedder over character 1-3-grams.

It is **not semantic**: two texts are close only when they share characters and short
character sequences (a lexical signal, close to BM25 over character n-grams). It needs no model,
is instant and identical on every machine, so tests and no-model fallbacks use it.

Example::

    >>> emb = HashEmbedder(dim=256)
    >>> v = emb.embed_query("怎么创建知识库")
    >>> v.shape, round(float(v @ v), 3)
    ((256,), 1.0)
"""

from __future__ import annotations

import math
import re
import unicodedata
import zlib
from collections import Counter

import numpy as np

from zhiwen.embed._common import BaseEmbedder

_SPACE = re.compile(r"\s+")


def _normalise_text(text: str) -> str:
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip()


class HashEmbedder(BaseEmbedder):
    """Signed feature hashing of character n-grams, sublinear term frequency, unit rows."""

    provider = "hash"

    def __init__(self, dim: int = 256, ngrams: tuple[int, int] = (1, 3)) -> None:
        if dim < 8:
            raise ValueError("hash embedder dim must be >= 8")
        self.dim = dim
        self.ngrams = ngrams
        self.name = f"hash-{dim}-ng{ngrams[0]}{ngrams[1]}"

    def _vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float32)
        t = _normalise_text(text)
        counts: Counter[str] = Counter()
        lo, hi = self.ngrams
        for n in range(lo, hi + 1):
            for i in range(len(t) - n + 1):
                gram = t[i : i + n]
                if gram != " ":
                    counts[gram] += 1
        for gram, tf in counts.items():
            # crc32 is stable across processes (Python's hash() is salted per process)
            h = zlib.crc32(gram.encode("utf-8"))
            sign = 1.0 if (h >> 31) & 1 else -1.0
            vec[h % self.dim] += sign * (1.0 + math.log(tf))
        return vec

    def _passages(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._vector(t) for t in texts])

    def _query(self, text: str) -> np.ndarray:
        return self._vector(text)
