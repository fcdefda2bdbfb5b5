"""The upload queue's caps, checked before an upload is read and while its bytes arrive.

Unfinished jobs past ``ingest.max_queued_jobs`` → :class:`UploadQueueFull` (429, 3010);
spooled bytes of unfinished jobs past ``ingest.max_spool_bytes``, or a disk without room →
:class:`UploadSpoolFull` (507, 3011).

Example::

    >>> budget = SpoolBudget(max_jobs=100, max_bytes=2 << 30, folder=home / "uploads")
    >>> budget.admit(declared=None)       # 429 with the queue full, 507 when declared bytes cannot fit
    >>> budget.take(65536)                # 507 past the byte cap or the disk's free space
    >>> budget.settle(65536, queued=True) # the upload became a job keeping its bytes
"""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from zhiwen.errors import ZhiwenError

if TYPE_CHECKING:
    from zhiwen.uploads.jobqueue import JobStore

DISK_MARGIN = 64 * 1024 * 1024  # the spool never fills the disk to the last byte


class UploadQueueFull(ZhiwenError):
    """Too many unfinished upload jobs (``ingest.max_queued_jobs``)."""

    code = 3010
    http_status = 429
    user_message = "导入队列已满，请等待已有的导入任务完成后再上传"

    @property
    def headers(self) -> dict[str, str]:
        return {"Retry-After": "30"}


class UploadSpoolFull(ZhiwenError):
    """The spooled uploads would pass ``ingest.max_spool_bytes``, or the disk has no room."""

    code = 3011
    http_status = 507
    user_message = "暂存上传文件的空间不足，请等待已有的导入任务完成后再上传"


class SpoolBudget:
    """``spooled``: bytes kept by unfinished jobs (from the queue); ``receiving``: bytes of uploads
    still arriving. Both live in this process: one server per home (:mod:`zhiwen.home_lock`)."""

    def __init__(self, max_jobs: int, max_bytes: int, folder: Path) -> None:
        self.max_jobs = max_jobs
        self.max_bytes = max_bytes
        self.folder = folder
        self._lock = threading.Lock()
        self.jobs = 0
        self.spooled = 0
        self.receiving = 0
        self.uploads = 0  # uploads still arriving: they become jobs

    def refresh(self, store: JobStore) -> None:
        with self._lock:
            self.jobs, self.spooled = store.load()

    def admit(self, declared: int | None) -> None:
        """Room for one more upload (of ``declared`` bytes, if known), else 429 / 507."""
        with self._lock:
            if self.jobs + self.uploads >= self.max_jobs:
                raise UploadQueueFull(
                    f"{self.jobs} unfinished jobs, {self.uploads} uploads arriving",
                    message=f"导入队列已满（最多 {self.max_jobs} 个未完成的任务），请等已有任务完成后再上传",
                    data={"max_queued_jobs": self.max_jobs},
                )
            if declared:
                self._check_room(declared)
            self.uploads += 1

    def take(self, size: int) -> None:
        """``size`` more bytes arrived for an upload; 507 past the cap or the disk's free space."""
        with self._lock:
            self._check_room(size)
            self.receiving += size

    def settle(self, received: int, *, queued: bool) -> None:
        """An upload is over: its bytes become a job's (``queued``) or are gone."""
        with self._lock:
            self.uploads -= 1
            self.receiving -= received
            if queued:
                self.jobs += 1
                self.spooled += received

    def _check_room(self, size: int) -> None:
        used = self.spooled + self.receiving
        if used + size > self.max_bytes:
            raise UploadSpoolFull(
                f"spool {used} + {size} bytes over {self.max_bytes}",
                message=(
                    f"暂存上传文件的空间不足（上限 {_mb(self.max_bytes)}，已用 {_mb(used)}），"
                    "请等待已有的导入任务完成后再上传"
                ),
                data={"max_spool_bytes": self.max_bytes, "spooled_bytes": used},
            )
        if size > _free_bytes(self.folder):
            raise UploadSpoolFull(
                f"disk full under {self.folder}",
                message="磁盘空间不足，无法暂存上传的文件；请清理磁盘后再上传",
            )


def _mb(size: int) -> str:
    return f"{size / 1024 / 1024:.0f} MB"


_FREE_CACHE: dict[str, tuple[float, int]] = {}


def _free_bytes(folder: Path) -> int:
    """Free bytes of the disk under ``folder``, less :data:`DISK_MARGIN` (asked at most once a second)."""
    key = str(folder)
    now = time.monotonic()
    cached = _FREE_CACHE.get(key)
    if cached is None or now - cached[0] > 1.0:
        folder.mkdir(parents=True, exist_ok=True)
        cached = _FREE_CACHE[key] = (now, shutil.disk_usage(folder).free - DISK_MARGIN)
    return cached[1]
