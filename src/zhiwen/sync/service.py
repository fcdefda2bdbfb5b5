"""Syncs in the background of a server: on demand (``POST /api/v1/kbs/{kb}/sync``) and on each
KB's schedule (``sync_interval`` in its ``kb.json``), one at a time per KB, never on a request's
thread.

One :class:`SyncService` per home and process (:func:`sync_service`); ``zhiwen serve`` runs its
schedule for as long as the app runs (:func:`running_syncs`, in the app's lifespan). The
schedule looks every :data:`TICK_S` seconds for KBs whose last sync started at least their
interval ago (a KB never synced is due at once).

Example::

    service = sync_service(settings)
    service.start("manual")          # False when a sync of it is already running
    service.tick()                   # start every KB that is due
    service.wait_idle(timeout=60)
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from zhiwen.config import Settings
from zhiwen.errors import ZhiwenError
from zhiwen.sync.state import SyncState

log = logging.getLogger(__name__)

TICK_S = 30.0
STOP_WAIT_S = 30.0  # at shutdown, how long a running sync may take to finish


class SyncService:
    """Background syncs of the KBs of one home (see the module docstring); thread-safe."""

    def __init__(self, settings: Settings, *, clock: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self._clock = clock
        self._lock = threading.Lock()
        self._running: dict[str, threading.Thread] = {}
        self._stop = threading.Event()
        self._schedule: threading.Thread | None = None

    # -- one KB ---------------------------------------------------------------------------
    def running(self, name: str) -> bool:
        with self._lock:
            return name in self._running

    def start(self, name: str) -> bool:
        """Sync KB ``name`` in a thread of its own; False when one is running already."""
        with self._lock:
            if name in self._running:
                return False
            thread = threading.Thread(target=self._run, args=(name,), name=f"zhiwen-sync-{name}", daemon=True)
            self._running[name] = thread
        thread.start()
        return True

    def _run(self, name: str) -> None:
        from zhiwen.kb.registry import open_kb
        from zhiwen.sync.run import sync_kb

        try:
            result = sync_kb(open_kb(name, settings=self.settings))
            log.info(
                "synced kb=%s added=%d changed=%d removed=%d unchanged=%d errors=%d in %.1fs",
                name,
                result.added,
                result.changed,
                result.removed,
                result.unchanged,
                len(result.errors),
                result.seconds,
            )
        except ZhiwenError as exc:
            log.warning("sync of %s failed: %s", name, exc.message)
        except Exception:  # a background thread: say it, keep serving
            log.exception("sync of %s failed", name)
        finally:
            with self._lock:
                self._running.pop(name, None)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait for the running syncs; False when some still run after ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                threads = list(self._running.values())
            if not threads:
                return True
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            threads[0].join(left)

    # -- the schedule ----------------------------------------------------------------------
    def due(self) -> list[str]:
        """KBs with a ``sync_interval`` whose last sync started at least that long ago."""
        from zhiwen.kb.config import load_config
        from zhiwen.kb.registry import list_kbs

        now = self._clock()
        out: list[str] = []
        for name in list_kbs(self.settings):
            path = Path(self.settings.kb_root) / name
            try:
                config = load_config(path, name)
            except ZhiwenError:
                continue
            if not config.sync_interval or not config.sources:
                continue
            last = SyncState.load(path).last
            if last is None or now - last.started_at >= config.sync_interval:
                out.append(name)
        return out

    def tick(self) -> list[str]:
        """Start every due KB that is not syncing; returns those started."""
        return [name for name in self.due() if self.start(name)]

    def start_schedule(self, tick_s: float = TICK_S) -> None:
        self._stop.clear()
        self._schedule = threading.Thread(
            target=self._loop, args=(tick_s,), name="zhiwen-sync-schedule", daemon=True
        )
        self._schedule.start()

    def _loop(self, tick_s: float) -> None:
        while not self._stop.is_set():
            try:
                self.tick()
            except Exception:  # an unreadable home must not end the schedule
                log.exception("sync schedule")
            self._stop.wait(tick_s)

    def stop(self) -> None:
        self._stop.set()
        if self._schedule is not None:
            self._schedule.join(timeout=STOP_WAIT_S)
            self._schedule = None
        if not self.wait_idle(STOP_WAIT_S):
            log.warning("a sync still runs at shutdown; its KB keeps what it had committed")


def status(settings: Settings, kb: Any) -> dict[str, Any]:
    """What ``GET /api/v1/kbs/{kb}/sync`` says: sources, interval, running, the last result."""
    last = SyncState.load(Path(kb.path)).last
    return {
        "kb": kb.name,
        "sources": list(kb.config.sources),
        "sync_interval": kb.config.sync_interval,
        "running": sync_service(settings).running(kb.name),
        "last": last.as_dict() if last is not None else None,
    }


def sync_service(settings: Settings) -> SyncService:
    """The service of ``settings.home`` in this process."""
    key = str(Path(settings.home).resolve())
    with _SERVICES_LOCK:
        service = _SERVICES.get(key)
        if service is None:
            service = _SERVICES[key] = SyncService(settings)
        return service


@contextlib.contextmanager
def running_syncs(settings: Settings, enabled: bool) -> Iterator[None]:
    """The schedule for as long as the app runs (``zhiwen serve``)."""
    if not enabled:
        yield
        return
    service = sync_service(settings)
    service.start_schedule()
    try:
        yield
    finally:
        service.stop()


_SERVICES: dict[str, SyncService] = {}
_SERVICES_LOCK = threading.Lock()
