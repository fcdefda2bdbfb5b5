"""The embedding provider contract.

Providers return float32 arrays with L2-normalised rows, so cosine similarity is a dot product.
Passages and queries are separate calls because asymmetric models (e5) prefix them differently.

Example::

    >>> emb = get_embedder("hash")
    >>> emb.embed_passages(["创建知识库"]).shape
    (1, 256)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    #: stable identifier of model + settings; the embedding cache and KB metadata key on it
    name: str
    dim: int

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, rows L2-normalised."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """(dim,) float32, L2-normalised."""
        ...
