"""The embedded store's HNSW graph, built off the search path: after writes settle, in a thread.

Stores with at least ``HNSW_MIN_ROWS`` vectors search a faiss HNSW graph
(:mod:`zhiwen.store._vectors`). Building it takes minutes at 100k rows on two cores, so no
search ever builds it: a search uses exact numpy search until the graph is ready, and the
:class:`GraphBuilder` of the store builds it in a daemon thread once the store has been quiet
(no committed write, by any process) for ``GRAPH_SETTLE_S`` — so an index run that is still
filling vectors is not slowed by a graph that would soon be stale. ``build()`` does the same
work at once in the caller's thread (``zhiwen index`` at its end, tests).

What the work is, decided by :func:`plan_graph` from a synced snapshot:

* ``"rebuild"`` — no graph yet, or many rows got their vector after they were added to the
  graph (lexical-first indexing fills vectors later): a new graph is built privately and swapped
  in when complete;
* ``"grow"`` — rows appended since: added to the shared graph in steps of ``GROW_STEP`` rows,
  releasing its lock between steps so searches keep running;
* ``"none"`` — up to date, or too few vectors to need a graph.

The store persists the graph with its index cache afterwards (:mod:`zhiwen.store._embedded_cache`)
when the work was worth a save — a new graph, ``PERSIST_MIN_ROWS`` more rows, an explicit
``build()``/``kick(force=True)``, or a store never saved before; smaller growth is saved by
``close()``, so a server taking one upload at a time does not rewrite its cache each time.

Example::

    builder = GraphBuilder(store)        # store implements GraphHost
    builder.kick()                       # after a sync: build once writes settle
    builder.build()                      # or now, in this thread
    builder.state                        # "not_needed" | "pending" | "building" | "ready"
    builder.stop()
"""

from __future__ import annotations

import logging
import threading
from typing import Literal, Protocol

import numpy as np

from zhiwen.store import _vectors
from zhiwen.store._embedded_index import Snapshot
from zhiwen.store._vectors import HNSW

log = logging.getLogger(__name__)

GRAPH_SETTLE_S = 2.0  # quiet time (no committed write) before a background build starts
GROW_STEP = 1024  # rows per locked add (~1 s at 384 dims on 2 cores): searches wait at most that
REBUILD_SHARE = 0.1  # rebuild when this share of the graph's rows got their vector after it
PERSIST_MIN_ROWS = 1000  # graph growth worth rewriting the index cache for, in the background

Plan = Literal["none", "grow", "rebuild"]
State = Literal["not_needed", "pending", "building", "ready"]


class GraphHost(Protocol):
    """What the builder needs from its store."""

    @property
    def graph(self) -> HNSW | None: ...

    def graph_snapshot(self) -> tuple[Snapshot, int]:
        """The store's snapshot synced to the database, and its layout epoch (row positions)."""
        ...

    def generation(self) -> int: ...

    def install_graph(self, hnsw: HNSW, layout: int, generation: int) -> bool:
        """Use ``hnsw`` (built from the snapshot of ``generation``) from now on, unless the row
        layout changed since ``layout``."""
        ...

    def persist(self) -> None: ...

    @property
    def saved_once(self) -> bool:
        """The index cache was written (or loaded) by this store."""
        ...


def vector_rows(snap: Snapshot) -> int:
    """Live rows that have a vector."""
    if snap.vectors is None:
        return 0
    return int(np.count_nonzero(snap.alive & snap.vectors.has_vec))


def plan_graph(snap: Snapshot, hnsw: HNSW | None) -> Plan:
    vectors = snap.vectors
    if vectors is None or (hnsw is None and vector_rows(snap) < _vectors.HNSW_MIN_ROWS):
        return "none"
    if hnsw is None or hnsw.size > snap.n:
        return "rebuild"
    size = hnsw.size
    covered = hnsw.covered
    stale = snap.alive[:size] & vectors.has_vec[:size] & ~covered[:size]
    if int(np.count_nonzero(stale)) > max(_vectors.EXACT_MAX_ROWS, REBUILD_SHARE * size):
        return "rebuild"
    return "grow" if size < snap.n else "none"


def grow_graph(hnsw: HNSW, matrix: np.ndarray, has_vec: np.ndarray, upto: int, stop: threading.Event) -> bool:
    """Add rows up to ``upto`` in steps; False when ``stop`` was set before the end."""
    while hnsw.size < upto:
        if stop.is_set():
            return False
        hnsw.add(matrix, min(upto, hnsw.size + GROW_STEP), has_vec)
    return True


class GraphBuilder:
    """Builds and grows one store's graph in a daemon thread, or on request in the caller's."""

    def __init__(self, host: GraphHost) -> None:
        self._host = host
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._work_lock = threading.Lock()  # one build at a time (thread or caller)
        self._thread: threading.Thread | None = None
        self._force = False
        self.building = False
        self.last_error: str | None = None

    # -- state ------------------------------------------------------------------------------------
    def state(self, snap: Snapshot | None) -> State:
        """What a search of ``snap`` gets: ``ready`` when the graph answers it."""
        if self.building:
            return "building"
        if snap is None or snap.vectors is None:
            return "not_needed"
        hnsw = self._host.graph
        if hnsw is None:
            return "pending" if vector_rows(snap) >= _vectors.HNSW_MIN_ROWS else "not_needed"
        uncovered = snap.vectors.graph_rows(snap.alive & snap.vectors.has_vec)[1]
        return "ready" if int(np.count_nonzero(uncovered)) <= _vectors.EXACT_MAX_ROWS else "pending"

    # -- triggering ---------------------------------------------------------------------------------
    def kick(self, *, force: bool = False) -> None:
        """Schedule work: after the store settles, or (``force``) at once."""
        if self._stop.is_set():
            return
        self._force = self._force or force
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="zhiwen-hnsw", daemon=True)
            self._thread.start()
        self._wake.set()

    def maybe_kick(self, snap: Snapshot) -> None:
        """Kick when ``snap`` would need graph work (cheap enough to run after every sync)."""
        if not self.building and plan_graph(snap, self._host.graph) != "none":
            self.kick()

    def build(self) -> None:
        """Do the work now, in the caller's thread (waits for a background build first)."""
        self._work(save=True)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the thread (a build in progress stops after its current step)."""
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    # -- the thread -----------------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            if self._stop.is_set():
                return
            force, self._force = self._force, False
            try:
                again = (force or self._settled()) and self._work(save=force)
            except Exception as exc:  # a failed build leaves exact search; never kills the store
                if self._stop.is_set():
                    return  # the store closed under us
                self.last_error = str(exc)
                log.warning("building the HNSW graph failed: %s", exc)
                continue
            if again:
                self._wake.set()

    def _settled(self) -> bool:
        """Wait until no write has committed for ``GRAPH_SETTLE_S``; False when stopped."""
        gen = self._host.generation()
        while not self._stop.wait(GRAPH_SETTLE_S):
            now = self._host.generation()
            if now == gen:
                return True
            gen = now
        return False

    def _work(self, *, save: bool = False) -> bool:
        """One round of graph work, then a save of the index when worth it (``save``: always);
        True when the store moved on meanwhile (go again)."""
        with self._work_lock:
            snap, layout = self._host.graph_snapshot()
            plan = plan_graph(snap, self._host.graph)
            added = 0
            if plan != "none" and snap.vectors is not None:
                self.building = True
                try:
                    added = self._build(plan, snap, layout)
                finally:
                    self.building = False
            if self._stop.is_set():
                return False
            if save or plan == "rebuild" or added >= PERSIST_MIN_ROWS or not self._host.saved_once:
                self._host.persist()
            return self._host.generation() != snap.generation

    def _build(self, plan: Plan, snap: Snapshot, layout: int) -> int:
        """Grow or rebuild the graph over ``snap``; returns the rows added."""
        vectors = snap.vectors
        assert vectors is not None
        matrix, has_vec = vectors.matrix, vectors.has_vec
        current = self._host.graph
        if plan == "grow" and current is not None:
            before = current.size
            log.info("growing HNSW graph %d -> %d rows", before, snap.n)
            grow_graph(current, matrix, has_vec, snap.n, self._stop)
            return current.size - before
        log.info("building HNSW graph over %d rows in the background", snap.n)
        hnsw = HNSW.create(matrix.shape[1])
        if grow_graph(hnsw, matrix, has_vec, snap.n, self._stop):
            self._host.install_graph(hnsw, layout, snap.generation)
        return hnsw.size
