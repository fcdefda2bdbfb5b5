"""Writing the log off the request path: a bounded queue and one writer thread.

:meth:`RecordWriter.put` never blocks and never raises: a full queue drops the record and counts
it (``zhiwen_question_log_dropped_total{reason="full"}``). The thread wakes for a first record,
sleeps ``idle_s`` and inserts what came meanwhile, up to ``batch_size``, in one transaction
(under a trickle of answers it wakes twice a second, not once per answer; a backlog is written
without a pause); a failed insert (the database
is down) drops that batch, counted (``reason="error"``), and the thread goes on. Between
batches, at most once every ``purge_every_s``, it deletes the records older than the retention
``purge_batch`` at a time (one batch per turn, so writes are never held up for long).

:meth:`flush` waits until what was queued before it is written; :meth:`close` flushes and stops
the thread (the app's lifespan, the CLI at exit).

Example::

    >>> writer = RecordWriter(store, queue_size=10_000, batch_size=500)
    >>> writer.put(record)          # ~1 µs, from any thread
    True
    >>> writer.flush(); writer.close()
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from zhiwen.metrics import QUESTION_LOG_DROPPED, QUESTION_LOG_QUEUE, QUESTION_LOG_WRITTEN
from zhiwen.questionlog.base import QuestionStore
from zhiwen.questionlog.model import LoggedQuestion

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Retention:
    """Records older than ``days`` (0: kept for ever) go, ``batch`` at a time, the purge
    starting at most every ``every_s`` seconds."""

    days: int = 180
    every_s: float = 3600.0
    batch: int = 5000


class _Flush:
    """A marker in the queue: set once every record queued before it is written."""

    __slots__ = ("done",)

    def __init__(self) -> None:
        self.done = threading.Event()


_STOP = object()


class RecordWriter:
    """The bounded queue and its writer thread (started on the first record)."""

    def __init__(
        self,
        store: QuestionStore,
        *,
        queue_size: int = 10_000,
        batch_size: int = 500,
        idle_s: float = 0.5,
        retention: Retention | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.batch_size = batch_size
        self.idle_s = idle_s
        self.retention = retention or Retention()
        self._clock = clock
        self._queue: queue.Queue[object] = queue.Queue(maxsize=queue_size)
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._closed = False
        self._purged_at = float("-inf")
        self._purging = False
        self._ring = threading.Event()  # a flush or the stop: the sleeping thread takes it now
        # answer ids queued and not yet written: feedback for one of them flushes first
        self._pending: set[str] = set()
        self._pending_lock = threading.Lock()

    # -- the request side ----------------------------------------------------------------------
    def put(self, record: LoggedQuestion) -> bool:
        """Queue ``record`` for writing; False (and counted) when it was dropped."""
        if self._closed:
            QUESTION_LOG_DROPPED.labels(reason="closed").inc()
            return False
        if self._thread is None:
            self._start()
        with self._pending_lock:
            self._pending.add(record.answer_id)
        try:
            self._queue.put_nowait(record)
        except queue.Full:
            with self._pending_lock:
                self._pending.discard(record.answer_id)
            QUESTION_LOG_DROPPED.labels(reason="full").inc()
            return False
        return True

    def pending(self, answer_id: str) -> bool:
        """Whether ``answer_id`` is queued and not written yet."""
        with self._pending_lock:
            return answer_id in self._pending

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Wait until every record queued before this call is written (True) or ``timeout_s``."""
        if self._thread is None or not self._thread.is_alive():
            return True
        marker = _Flush()
        try:
            self._queue.put(marker, timeout=timeout_s)
        except queue.Full:
            return False
        self._ring.set()
        return marker.done.wait(timeout_s)

    def close(self, timeout_s: float = 10.0) -> None:
        """Write what is queued, then stop the thread; later records are dropped (counted)."""
        self._closed = True
        thread = self._thread
        if thread is None or not thread.is_alive():
            return
        try:
            self._queue.put(_STOP, timeout=timeout_s)
            self._ring.set()
        except queue.Full:
            log.warning("question log: the writer did not take the stop within %.0f s", timeout_s)
            return
        thread.join(timeout_s)

    # -- the writer thread ---------------------------------------------------------------------
    def _start(self) -> None:
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="zhiwen-question-log", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            batch, markers, stop = self._take()
            self._write(batch)
            for marker in markers:
                marker.done.set()
            if stop:
                return
            self._purge_step()

    def _take(self) -> tuple[list[LoggedQuestion], list[_Flush], bool]:
        """The next batch. The thread wakes for a first record, then sleeps ``idle_s`` unless a
        batch is already waiting or a flush or stop rings, and takes what came meanwhile: the
        answers that follow never wake it (each wake-up would take the GIL from an answer being
        computed, which an overloaded machine pays for in milliseconds)."""
        try:
            first = self._queue.get(timeout=self.idle_s)
        except queue.Empty:
            return [], [], False
        if isinstance(first, LoggedQuestion) and self._queue.qsize() < self.batch_size:
            self._ring.wait(self.idle_s)
        self._ring.clear()
        batch: list[LoggedQuestion] = []
        markers: list[_Flush] = []
        item: object = first
        while True:
            if item is _STOP:
                return batch, markers, True
            if isinstance(item, _Flush):
                markers.append(item)
            elif isinstance(item, LoggedQuestion):
                batch.append(item)
            if len(batch) >= self.batch_size:
                break
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
        QUESTION_LOG_QUEUE.set(self._queue.qsize())
        return batch, markers, False

    def _write(self, batch: list[LoggedQuestion]) -> None:
        if not batch:
            return
        try:
            self.store.add(batch)
            QUESTION_LOG_WRITTEN.inc(len(batch))
        except Exception:  # the log must never take the server down: count, say, go on
            QUESTION_LOG_DROPPED.labels(reason="error").inc(len(batch))
            log.exception("question log: %d records could not be written", len(batch))
        finally:
            with self._pending_lock:
                self._pending.difference_update(q.answer_id for q in batch)

    def _purge_step(self) -> None:
        """One batch of the retention purge, when one is due or under way."""
        r = self.retention
        now = self._clock()
        if r.days <= 0 or (not self._purging and now - self._purged_at < r.every_s):
            return
        if not self._purging:
            self._purging, self._purged_at = True, now
        try:
            removed = self.store.purge(now - r.days * 86_400, limit=r.batch)
        except Exception:
            log.exception("question log: the retention purge failed; next try in %.0f s", r.every_s)
            removed = 0
        self._purging = removed >= r.batch
