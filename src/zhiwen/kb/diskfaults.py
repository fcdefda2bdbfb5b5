"""A full or read-only disk while indexing: one clear Chinese error, the KB as it was, no litter.

Every write of an index run is atomic (the store's transactions, ``kb.json`` through
:mod:`zhiwen.fsutil`), so a refused write leaves the previous state on disk; this module only
turns the low-level error (``OSError`` ENOSPC/EROFS/EDQUOT, SQLite's "database or disk is
full" / "readonly database") into :class:`DiskWriteError`, which the CLI prints as one line
and the API returns as a 503 envelope.

Example::

    with disk_errors("manual"):
        store.upsert(chunks, tokens=tokens)
    write_config(kb_dir, text)            # kb.json, atomically, the same translation
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from zhiwen.errors import StoreUnavailable, ZhiwenError
from zhiwen.fsutil import atomic_write_text
from zhiwen.store._disk import REFUSALS, disk_fault


class DiskWriteError(StoreUnavailable):
    """The disk refused a write (full, read-only, no permission); nothing was changed."""

    user_message = "磁盘无法写入，知识库保持不变"


def classify(exc: BaseException) -> str | None:
    """``"full"``, ``"readonly"``, or None when ``exc`` is not a disk refusal.

    The store's classifier names the fault (:func:`zhiwen.store._disk.disk_fault`); an I/O
    error is no refusal here, so it is raised as it is.
    """
    kind = disk_fault(exc)
    return kind if kind in REFUSALS else None


def disk_error(name: str, exc: BaseException, kind: str) -> DiskWriteError:
    what = "磁盘空间不足" if kind == "full" else "目录只读或没有写权限"
    return DiskWriteError(
        f"{type(exc).__name__}: {exc}".splitlines()[0],
        message=f"无法写入知识库「{name}」：{what}；已有内容保持不变，请释放空间或检查权限后重新运行",
        data={"kb": name, "reason": kind},
    )


@contextlib.contextmanager
def disk_errors(name: str) -> Iterator[None]:
    """Translate a disk refusal inside the block into :class:`DiskWriteError`."""
    try:
        yield
    except ZhiwenError as exc:
        cause = exc.__cause__
        kind = classify(cause) if cause is not None else None
        if kind is None or isinstance(exc, DiskWriteError):
            raise
        raise disk_error(name, cause, kind) from exc  # type: ignore[arg-type]
    except (OSError, sqlite3.Error) as exc:
        kind = classify(exc)
        if kind is None:
            raise
        raise disk_error(name, exc, kind) from exc


def write_config(kb_dir: Path, text: str) -> None:
    """``kb.json`` atomically (a refused write leaves the old file and no temporary file)."""
    with disk_errors(kb_dir.name):
        kb_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(kb_dir / "kb.json", text)
