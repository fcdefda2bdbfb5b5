"""One upload while its files arrive: its job id, its spool folder, its share of the budget.

The files are written straight into ``$ZHIWEN_HOME/uploads/<job id>/`` as their bytes arrive,
each under its safe, unique name (:mod:`zhiwen.uploads.names`). Every write is checked first: a
file past ``ingest.max_file_bytes`` is refused (413, :class:`FileTooLarge`) — also before a byte
of it is read when its size is declared — and the queue's byte cap or a full disk refuse it
(507, :class:`~zhiwen.uploads.budget.UploadSpoolFull`). A slot that is closed without becoming a
job removes its folder, so a refused or broken upload leaves nothing behind.

Example::

    >>> slot = uploads.open_upload("policies", declared=None)   # UploadService.open_upload
    >>> with slot.open_file("通知.pdf") as out:
    ...     out.write(b"%PDF-1.7 ...")
    >>> slot.names
    ['通知.pdf']
    >>> slot.close()                                            # no job took it: the folder goes
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from zhiwen.errors import PayloadTooLarge
from zhiwen.ingest.limits import mb
from zhiwen.uploads.budget import SpoolBudget
from zhiwen.uploads.names import safe_filename, unique_name


class FileTooLarge(PayloadTooLarge):
    """One uploaded file is over ``ingest.max_file_bytes`` (413 / 3005)."""

    def __init__(self, name: str, limit: int, size: int | None = None) -> None:
        data: dict[str, object] = {"file": name, "max_file_bytes": limit}
        if size is not None:
            data["declared_bytes"] = size
        super().__init__(
            f"file {name!r} over {limit} bytes",
            message=f"「{name}」文件过大（单个文件上限 {mb(limit)}），已拒绝上传",
            data=data,
        )


class SpoolFile:
    """One file of the upload as it is written; every write is checked before it is made."""

    def __init__(self, slot: UploadSlot, name: str) -> None:
        self.slot = slot
        self.name = name
        self.size = 0
        self._out: BinaryIO = (slot.folder / name).open("wb")

    def write(self, data: bytes) -> None:
        """Append ``data``; 413 past the per-file limit, 507 past the queue's byte cap."""
        limit = self.slot.max_file_bytes
        if self.size + len(data) > limit:
            raise FileTooLarge(self.name, limit)
        self.slot.take(len(data))
        self._out.write(data)
        self.size += len(data)

    def close(self) -> None:
        self._out.close()

    def __enter__(self) -> SpoolFile:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class UploadSlot:
    """One upload while its bytes arrive (see the module docstring); made by
    :meth:`~zhiwen.uploads.service.UploadService.open_upload`, closed by its caller."""

    def __init__(
        self,
        kb: str,
        spool_root: Path,
        budget: SpoolBudget,
        *,
        max_file_bytes: int,
        on_close: Callable[[UploadSlot], None],
    ) -> None:
        self.kb = kb
        self.job_id = uuid.uuid4().hex[:16]
        self.folder = spool_root / self.job_id
        self.budget = budget
        self.max_file_bytes = max_file_bytes
        self.names: list[str] = []
        self.form: dict[str, str] = {}  # the upload's form fields that are not files (format=faq)
        self.received = 0
        self.queued = False
        self._files: list[SpoolFile] = []
        self._on_close = on_close
        self.folder.mkdir(parents=True, exist_ok=True)

    def open_file(self, filename: str | None, declared: int | None = None) -> SpoolFile:
        """A new file of the upload under its safe, unique name; a ``declared`` size over the
        per-file limit is refused (413) before anything is written."""
        name = unique_name(safe_filename(filename), set(self.names))
        if declared is not None and declared > self.max_file_bytes:
            raise FileTooLarge(name, self.max_file_bytes, declared)
        out = SpoolFile(self, name)
        self.names.append(name)
        self._files.append(out)
        return out

    def take(self, size: int) -> None:
        """``size`` more bytes arrived; 507 once the queue's byte cap or the disk is full."""
        self.budget.take(size)
        self.received += size

    def close(self) -> None:
        """The upload is over: a job now owns the folder, or it is removed."""
        for out in self._files:
            out.close()
        if not self.queued:
            shutil.rmtree(self.folder, ignore_errors=True)
        self._on_close(self)
