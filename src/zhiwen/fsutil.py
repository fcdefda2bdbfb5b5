"""Atomic file writes: readers see the old file or the new one, never a half-written one.

Every writer goes through :func:`atomic_path`: the new content is written to a temporary file
in the target's directory (same filesystem, so the final :func:`os.replace` is atomic), flushed
to disk with ``fsync``, then renamed over the target. On any failure — the caller's exception,
a full disk, a read-only directory, a failed rename — the temporary file is removed and the
target is left as it was (tested on a full tmpfs and a read-only mount); :func:`disk_problem`
words the ``OSError`` for the user. Each write makes a new inode, so a reader that compares
``(st_ino, st_mtime_ns)`` sees every change even within one mtime tick.

The temporary file keeps the target's suffix (``.cache.1f2e3d4c5b6a.tmp.npz``), so writers
that append an extension to names without one (``numpy.savez``) write where they are told, and
it starts with a dot, so globs such as ``hnsw-*.faiss`` do not see it. New files get the
permissions ``open()`` would give them (umask); a replaced file keeps its mode.

Example::

    atomic_write_json(kb_dir / "config.json", {"name": "manual", "dim": 384})
    atomic_write_text(path, "内容\\n")
    with atomic_path(index_dir / "cache.npz") as tmp:
        np.savez(tmp, rows=rows)        # any writer that takes a path
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["atomic_path", "atomic_write_bytes", "atomic_write_json", "atomic_write_text", "disk_problem"]

# why a write failed, in the words a user can act on
_DISK_PROBLEMS = {
    errno.ENOSPC: "磁盘空间不足",
    errno.EDQUOT: "磁盘配额已用完",
    errno.EROFS: "文件系统为只读",
    errno.EACCES: "没有写入权限",
    errno.EPERM: "没有写入权限",
}

StrPath = str | os.PathLike[str]


def _temp_name(target: Path) -> Path:
    return target.with_name(f".{target.stem}.{secrets.token_hex(6)}.tmp{target.suffix}")


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(directory: Path) -> None:
    """Make the rename itself durable; not every filesystem or OS can fsync a directory."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def atomic_path(path: StrPath) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success it replaces ``path``, else it is removed.

    The caller writes (and closes) the file at the yielded path inside the ``with`` block.
    """
    target = Path(path)
    tmp = _temp_name(target)
    # O_EXCL: never follow or reuse an existing name; mode 0o666 is narrowed by the umask
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, stat.S_IMODE(target.stat().st_mode))
        yield tmp
        _fsync_file(tmp)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)


def atomic_write_bytes(path: StrPath, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically (see module docstring)."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def atomic_write_text(path: StrPath, text: str, *, encoding: str = "utf-8") -> None:
    """Replace ``path`` with ``text`` atomically; no newline translation."""
    atomic_write_bytes(path, text.encode(encoding))


def atomic_write_json(path: StrPath, obj: Any, *, indent: int | None = 2, sort_keys: bool = False) -> None:
    """Replace ``path`` with ``obj`` as UTF-8 JSON (non-ASCII kept readable) and a final newline.

    ``obj`` is serialised before anything touches the disk, so a value that is not
    JSON-serialisable raises :class:`TypeError`/:class:`ValueError` and leaves no file behind.
    """
    text = json.dumps(obj, ensure_ascii=False, indent=indent, sort_keys=sort_keys, allow_nan=False)
    atomic_write_text(path, text + "\n")


def disk_problem(exc: OSError) -> str:
    """A short Chinese reason for a failed write: 磁盘空间不足, 文件系统为只读, 没有写入权限…"""
    return _DISK_PROBLEMS.get(exc.errno or 0, f"磁盘写入失败（{exc.strerror or type(exc).__name__}）")
