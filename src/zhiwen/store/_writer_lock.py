"""One writer per knowledge base across processes: the store side of the index lock (#17).

:meth:`Store.writer_lock <zhiwen.store.base.Store.writer_lock>` is a context manager the KB
layer holds around a whole index run. Every backend builds it from :class:`WriterLock`, which
gives all of them the same semantics:

* **exclusive** between processes and between threads of one process (each acquisition has its
  own file descriptor or database session, so the kernel or the server arbitrates);
* **re-entrant** in the thread that holds it (keyed by the lock's identity — its file or its
  advisory key — not by the store object, so two stores of one KB in one thread do not
  deadlock);
* ``wait=False`` tries once and raises :class:`~zhiwen.errors.KnowledgeBaseBusy` (3008, HTTP
  409); ``wait=True`` calls ``on_wait()`` once, only when it is about to block, then waits at
  most ``timeout`` seconds (forever when None) before raising the same error;
* **released** on exit, on an exception and when its process dies (``kill -9`` included): a
  ``flock`` dies with its file descriptor, an advisory lock with its database session.

The backends: :class:`FileWriterLock` (:mod:`filelock`, a file in the store's directory; the
embedded store and Qdrant Edge) and :class:`~zhiwen.store._pg_lock.AdvisoryWriterLock`
(PostgreSQL). A Qdrant server has no local directory: its lock is :class:`NoWriterLock`.

Example::

    lock = FileWriterLock(store_dir / WRITER_LOCK_FILE, kb="manual")
    with lock.hold(wait=False):                              # KnowledgeBaseBusy if taken
        ...
    with lock.hold(timeout=30, on_wait=lambda: print("等待中…")):
        ...
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Generic, TypeVar

from filelock import FileLock, Timeout

from zhiwen.errors import InvalidParameter, KnowledgeBaseBusy
from zhiwen.store._disk import store_write_error

OnWait = Callable[[], None]
H = TypeVar("H")  # what one acquisition holds: a FileLock, a database connection

WRITER_LOCK_FILE = "writer.lock"
_POLL_S = 0.05

# per thread: lock identity → how many times this thread has entered it
_held = threading.local()


def _depths() -> dict[Hashable, int]:
    # thread-local: a thread that never took a lock has no depths yet
    depths: dict[Hashable, int] | None = getattr(_held, "depths", None)
    if depths is None:
        depths = _held.depths = {}
    return depths


def busy_error(kb: str, *, waited_s: float | None = None) -> KnowledgeBaseBusy:
    """The error for a knowledge base whose writer lock another process or thread holds."""
    if waited_s is None:
        detail = f"knowledge base {kb!r} is being written by another process"
        message = f"知识库「{kb}」正在被另一个导入任务写入，请等它完成后再试"
    else:
        detail = f"knowledge base {kb!r} still locked by another writer after {waited_s:g} s"
        message = f"知识库「{kb}」正在被另一个导入任务写入，等待 {waited_s:g} 秒后仍未释放，请稍后再试"
    return KnowledgeBaseBusy(detail, message=message, data={"kb": kb})


class WriterLock(ABC, Generic[H]):
    """The semantics in the module docstring; subclasses say how to take one lock handle."""

    def __init__(self, kb: str, identity: Hashable) -> None:
        self.kb = kb
        self.identity = identity

    @contextmanager
    def hold(
        self, *, wait: bool = True, timeout: float | None = None, on_wait: OnWait | None = None
    ) -> Iterator[None]:
        if timeout is not None and not timeout >= 0:
            raise InvalidParameter(f"invalid lock timeout {timeout!r}", message=f"等待时间无效：{timeout}")
        depths = _depths()
        depth = depths.get(self.identity, 0)
        if depth:  # re-entered by the thread that holds it
            depths[self.identity] = depth + 1
            try:
                yield
            finally:
                depths[self.identity] = depth
            return
        handle = self._acquire(wait, timeout, on_wait)
        depths[self.identity] = 1
        try:
            yield
        finally:
            depths.pop(self.identity, None)
            self._close(handle)

    def _acquire(self, wait: bool, timeout: float | None, on_wait: OnWait | None) -> H:
        handle = self._open()
        try:
            if self._try(handle):
                return handle
            if not wait:
                raise busy_error(self.kb)
            if on_wait is not None:
                on_wait()
            if not self._block(handle, timeout):
                raise busy_error(self.kb, waited_s=timeout)
            return handle
        except BaseException:  # Ctrl-C in the wait included: never keep a half-taken lock
            self._close(handle)
            raise

    @abstractmethod
    def _open(self) -> H:
        """A fresh handle (its own descriptor or session) that does not hold the lock yet."""

    @abstractmethod
    def _try(self, handle: H) -> bool:
        """Take the lock if it is free; False at once if another holder has it."""

    @abstractmethod
    def _block(self, handle: H, timeout: float | None) -> bool:
        """Wait for the lock, at most ``timeout`` seconds (None: no limit); False on timeout."""

    @abstractmethod
    def _close(self, handle: H) -> None:
        """Release the lock if held and free the handle; never raises for a lost handle."""


class FileWriterLock(WriterLock[FileLock]):
    """A ``flock`` on ``path`` (through :mod:`filelock`); the file stays, empty, between runs.

    The file must outlive the lock: a directory removed while the lock is held lets the next
    writer lock a new file at the same path. The KB layer's own lock, outside the KB directory,
    covers runs that remove a knowledge base.
    """

    def __init__(self, path: Path, kb: str) -> None:
        self.path = Path(path)
        super().__init__(kb, ("file", str(self.path.absolute())))

    def _open(self) -> FileLock:
        # a new object per acquisition: its own descriptor, so threads exclude each other too
        return FileLock(str(self.path), thread_local=False, poll_interval=_POLL_S)

    def _try(self, handle: FileLock) -> bool:
        return self._acquire_file(handle, blocking=False)

    def _block(self, handle: FileLock, timeout: float | None) -> bool:
        return self._acquire_file(handle, blocking=True, timeout=-1 if timeout is None else timeout)

    def _acquire_file(self, handle: FileLock, *, blocking: bool, timeout: float = -1) -> bool:
        try:
            handle.acquire(blocking=blocking, timeout=timeout)
        except Timeout:
            return False
        except OSError as exc:  # the lock file cannot be created: read-only or full disk
            raise store_write_error(exc, self.path.parent) from exc
        return True

    def _close(self, handle: FileLock) -> None:
        handle.release(force=True)


class NoWriterLock(WriterLock[None]):
    """Holds nothing: for a store with no directory on this machine and no server-side lock."""

    def __init__(self, kb: str) -> None:
        super().__init__(kb, ("none", id(self)))

    def _open(self) -> None:
        return None

    def _try(self, handle: None) -> bool:
        return True

    def _block(self, handle: None, timeout: float | None) -> bool:
        return True

    def _close(self, handle: None) -> None:
        return None
