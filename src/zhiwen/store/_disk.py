"""Disk faults during store writes, as errors a user can act on.

A full disk or a read-only directory surfaces from SQLite as ``database or disk is full`` or
``attempt to write a readonly database`` (and from file writes as ``ENOSPC``/``EROFS``); shown
raw they say nothing about what to do, and a half-failed rollback used to add "cannot
rollback". :func:`store_write_error` turns them into
:class:`~zhiwen.errors.StoreUnavailable` (code 2002) with a Chinese message that names the
cause and says the existing data is unchanged — which holds, because every write is one
transaction that SQLite rolls back.

Example::

    try:
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        raise store_write_error(exc, store_dir) from exc
"""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

from zhiwen.errors import StoreUnavailable

# SQLite primary result codes (https://sqlite.org/rescode.html)
_SQLITE_PERM, _SQLITE_READONLY, _SQLITE_IOERR, _SQLITE_FULL, _SQLITE_CANTOPEN = 3, 8, 10, 13, 14
_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_READONLY_ERRNOS = {errno.EROFS, errno.EACCES, errno.EPERM}
#: the faults that mean "the disk refused the write" (full or read-only), unlike ``"io"``
REFUSALS = ("full", "readonly")


def disk_fault(exc: BaseException) -> str | None:
    """``"full"``, ``"readonly"``, ``"io"`` or None (not a disk fault) for a write error.

    The project's one disk-fault classifier: the store's errors and the KB's
    (:mod:`zhiwen.kb.diskfaults`) both name faults with it, so ``data["reason"]`` says the same
    word wherever a write was refused.
    """
    if isinstance(exc, OSError):
        if exc.errno in _FULL_ERRNOS:
            return "full"
        if exc.errno in _READONLY_ERRNOS:
            return "readonly"
        return "io"
    if isinstance(exc, sqlite3.Error):
        return _sqlite_fault(exc)
    return None


def _sqlite_fault(exc: sqlite3.Error) -> str | None:
    # sqlite3 sets ``sqlite_errorcode`` only on the errors it raises itself, not on one built by
    # hand (tests, wrappers): the message is the fallback
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    text = str(exc).lower()
    if code == _SQLITE_FULL or "full" in text:
        return "full"
    if code in (_SQLITE_READONLY, _SQLITE_PERM, _SQLITE_CANTOPEN) or any(
        words in text for words in ("readonly", "read-only", "unable to open")
    ):
        return "readonly"
    if code == _SQLITE_IOERR or "disk i/o error" in text:
        return "io"
    return None


_MESSAGES = {
    "full": "磁盘空间不足，写入失败：{path}（已有数据未改变，请清理空间后重试）",
    "readonly": "存储目录只读或无写权限，写入失败：{path}（已有数据未改变）",
    "io": "磁盘读写错误，写入失败：{path}（已有数据未改变）",
}


def store_open_error(exc: BaseException, path: Path) -> StoreUnavailable:
    """The error for a store that cannot be opened; names a read-only or full disk."""
    kind = disk_fault(exc)
    cause = {"full": "（磁盘空间不足）", "readonly": "（目录只读或无写权限）"}.get(kind or "", "")
    return StoreUnavailable(
        f"cannot open embedded store at {path}: {exc}",
        message=f"无法打开知识库存储{cause}：{path}",
        data={"reason": f"disk_{kind}"} if kind else None,
    )


def store_write_error(exc: BaseException, path: Path) -> BaseException:
    """A :class:`StoreUnavailable` for a disk fault; other errors are returned unchanged."""
    kind = disk_fault(exc)
    if kind is None:
        if isinstance(exc, sqlite3.Error):
            return StoreUnavailable(f"store write failed at {path}: {exc}", message=f"知识库写入失败：{path}")
        return exc
    return StoreUnavailable(
        f"{kind} while writing the store at {path}: {exc}",
        message=_MESSAGES[kind].format(path=path),
        data={"reason": f"disk_{kind}"},
    )
