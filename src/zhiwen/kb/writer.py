"""One writer per knowledge base across processes: the KB layer's file locks.

Two locks per KB, each held by one thread of one process at a time:

* ``write`` — every change of the KB's content (phase 1 of an index run, deletes, each commit of
  vectors) and its ``kb.json`` revision; held for seconds at a time. The KB adds the store's own
  writer lock under it (:meth:`KnowledgeBase.writing`): a PostgreSQL advisory lock, which also
  covers writers on other machines that share the database but not the home;
* ``fill`` — the one process that computes the KB's missing vectors (phase 2); held for the
  whole fill, so two runs never embed the same passages twice.

The lock files live in ``<kbs>/.locks/<name>.<kind>.lock``, outside the KB's own directory: a run
that removes a KB it created (Ctrl-C before anything was committed) holds the lock while the
directory goes, and a run waiting for it must still wait on the same file afterwards — it then
finds no KB and creates it. The lock is the kernel's ``flock`` (through :mod:`filelock`), so it
is released when its process dies, ``kill -9`` included.

Locks are re-entrant in one thread and exclusive between threads and processes. A second
writer waits and says so (``on_wait``), or with ``wait=False`` gets
:class:`~zhiwen.errors.KnowledgeBaseBusy` (3008, HTTP 409).

Example::

    lock = kb_lock(settings, "manual")
    with lock.hold(wait=False):                  # KnowledgeBaseBusy when another run writes
        ...
    with lock.hold(on_wait=console.print):       # prints the waiting message, then waits
        ...
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

from filelock import FileLock, Timeout

from zhiwen.config import Settings
from zhiwen.errors import KnowledgeBaseBusy

log = logging.getLogger(__name__)

LockKind = Literal["write", "fill"]
LOCK_DIR = ".locks"


def wait_message(name: str, kind: LockKind = "write") -> str:
    if kind == "fill":
        return f"另一个进程正在为知识库「{name}」补全向量，等待中…"
    return f"另一个导入任务正在写入知识库「{name}」，等待中…"


def busy_error(name: str, kind: LockKind = "write") -> KnowledgeBaseBusy:
    what = "补全向量" if kind == "fill" else "写入"
    return KnowledgeBaseBusy(
        f"knowledge base {name!r} is locked ({kind}) by another writer",
        message=f"知识库「{name}」正在被另一个导入任务{what}；请等它完成后再试（去掉 --no-wait 可排队等待）",
        data={"kb": name},
    )


class KBLock:
    """The ``kind`` lock of one KB (see the module docstring); get it from :func:`kb_lock`."""

    def __init__(self, path: Path, name: str, kind: LockKind) -> None:
        self.name = name
        self.kind = kind
        self.path = path
        # thread_local (the default): each thread has its own descriptor, so two threads of one
        # process exclude each other like two processes do; one thread may re-enter
        self._file = FileLock(str(path), timeout=-1, poll_interval=0.05)
        self._depth = threading.local()

    @property
    def is_locked(self) -> bool:
        """Held by the calling thread."""
        return bool(getattr(self._depth, "n", 0))

    def acquire(
        self,
        *,
        wait: bool = True,
        on_wait: Callable[[str], None] | None = None,
        cancel: threading.Event | None = None,
        timeout: float | None = None,
    ) -> None:
        """Take the lock; ``wait=False`` or ``timeout`` seconds passed → KnowledgeBaseBusy."""
        depth = getattr(self._depth, "n", 0)
        if depth:
            self._depth.n = depth + 1
            return
        try:
            self._acquire_file(wait, on_wait, cancel, timeout)
        except OSError as exc:  # the lock file cannot be made: a read-only or full disk
            from zhiwen.kb.diskfaults import classify, disk_error

            kind = classify(exc)
            if kind is None:
                raise
            raise disk_error(self.name, exc, kind) from exc
        self._depth.n = 1

    def _acquire_file(
        self,
        wait: bool,
        on_wait: Callable[[str], None] | None,
        cancel: threading.Event | None,
        timeout: float | None,
    ) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._file.acquire(blocking=False)
        except Timeout:
            if not wait:
                raise busy_error(self.name, self.kind) from None
            self._announce(on_wait)
            check = cancel.is_set if cancel is not None else None
            try:
                self._file.acquire(timeout=-1 if timeout is None else timeout, cancel_check=check)
            except Timeout:  # cancelled (server shutdown) or waited long enough
                raise busy_error(self.name, self.kind) from None

    def _announce(self, on_wait: Callable[[str], None] | None) -> None:
        message = wait_message(self.name, self.kind)
        log.info("%s", message)
        if on_wait is not None:
            on_wait(message)

    def release(self) -> None:
        depth = getattr(self._depth, "n", 0)
        if depth <= 0:
            return
        self._depth.n = depth - 1
        if depth > 1:
            return
        self._file.release()

    @contextlib.contextmanager
    def hold(
        self,
        *,
        wait: bool = True,
        on_wait: Callable[[str], None] | None = None,
        cancel: threading.Event | None = None,
        timeout: float | None = None,
    ) -> Iterator[None]:
        self.acquire(wait=wait, on_wait=on_wait, cancel=cancel, timeout=timeout)
        try:
            yield
        finally:
            self.release()


_LOCKS: dict[str, KBLock] = {}
_LOCKS_GUARD = threading.Lock()


def lock_path(settings: Settings, name: str, kind: LockKind) -> Path:
    return settings.kb_root / LOCK_DIR / f"{name}.{kind}.lock"


def kb_lock(settings: Settings, name: str, kind: LockKind = "write") -> KBLock:
    """The process-wide :class:`KBLock` of KB ``name`` (one object per lock file and process)."""
    path = lock_path(settings, name, kind)
    key = str(path.resolve())
    with _LOCKS_GUARD:
        lock = _LOCKS.get(key)
        if lock is None:
            lock = _LOCKS[key] = KBLock(path, name, kind)
        return lock
