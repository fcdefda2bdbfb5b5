"""Batched passage embedding with an optional rich progress bar.

Example::

    >>> emb = get_embedder("hash")
    >>> embed_passages_batched(emb, ["一", "二", "三"], batch_size=2).shape
    (3, 256)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from zhiwen.embed.base import Embedder


def embed_passages_batched(
    embedder: Embedder,
    texts: Sequence[str],
    batch_size: int = 32,
    progress: bool = False,
    description: str = "向量化",
) -> np.ndarray:
    """Embed ``texts`` in batches of ``batch_size``; ``(len(texts), dim)`` float32."""
    if batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    n = len(texts)
    if n == 0:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    out: np.ndarray | None = None
    if progress:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        columns = (
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
        )
        with Progress(*columns, transient=True) as bar:
            task = bar.add_task(description, total=n)
            for start in range(0, n, batch_size):
                vecs = embedder.embed_passages(texts[start : start + batch_size])
                out = _place(out, vecs, start, n)
                bar.advance(task, len(vecs))
    else:
        for start in range(0, n, batch_size):
            out = _place(out, embedder.embed_passages(texts[start : start + batch_size]), start, n)
    assert out is not None
    return out


def _place(out: np.ndarray | None, vecs: np.ndarray, start: int, n: int) -> np.ndarray:
    # allocate from the first batch's width: an OpenAI-compatible provider may learn its dim late
    if out is None:
        out = np.empty((n, vecs.shape[1]), dtype=np.float32)
    out[start : start + len(vecs)] = vecs
    return out
