"""zhiwen.fsutil: atomic writes leave the old file or the new one, and never a temporary file.

(Here because the embedded store's index cache is its first user; the module is project-wide.)
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen import fsutil
from zhiwen.fsutil import atomic_path, atomic_write_bytes, atomic_write_json, atomic_write_text


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


def test_writes_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "config.json"
    atomic_write_json(target, {"名称": "菜谱", "n": 1})
    assert target.read_text(encoding="utf-8") == '{\n  "名称": "菜谱",\n  "n": 1\n}\n'
    atomic_write_json(target, {"b": 1, "a": 2}, indent=None, sort_keys=True)
    assert target.read_text(encoding="utf-8") == '{"a": 2, "b": 1}\n'
    atomic_write_text(tmp_path / "t.txt", "第一行\r\n")
    assert (tmp_path / "t.txt").read_bytes() == "第一行\r\n".encode()
    assert leftovers(tmp_path) == []


@settings(max_examples=30, deadline=None)
@given(data=st.binary(max_size=4096))
def test_bytes_round_trip(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    target = tmp_path_factory.mktemp("rt") / "blob.bin"
    target.write_bytes(b"old")
    atomic_write_bytes(target, data)
    assert target.read_bytes() == data
    assert leftovers(target.parent) == []


def test_every_write_is_a_new_inode(tmp_path: Path) -> None:
    target = tmp_path / "f"
    atomic_write_bytes(target, b"1")
    first = target.stat().st_ino
    atomic_write_bytes(target, b"2")
    assert target.stat().st_ino != first


def test_writer_error_keeps_old_file_and_removes_temp(tmp_path: Path) -> None:
    target = tmp_path / "cache.npz"
    target.write_bytes(b"old")
    with pytest.raises(OSError, match="No space"), atomic_path(target) as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".") and tmp.suffix == ".npz"
        tmp.write_bytes(b"half")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert target.read_bytes() == b"old"
    assert leftovers(tmp_path) == []


def test_keeps_suffix_for_writers_that_append_one(tmp_path: Path) -> None:
    target = tmp_path / "cache.npz"
    with atomic_path(target) as tmp:
        np.savez(tmp, a=np.arange(3))  # would write "<tmp>.npz" if the suffix were not .npz
    with np.load(target) as z:
        assert z["a"].tolist() == [0, 1, 2]
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("failing", ["fsync", "replace"])
def test_failed_fsync_or_rename_removes_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    target = tmp_path / "f.json"
    target.write_text("old")

    def boom(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(fsutil.os, failing, boom)
    with pytest.raises(OSError, match="Read-only"):
        atomic_write_json(target, {"a": 1})
    monkeypatch.undo()
    assert target.read_text() == "old"
    assert leftovers(tmp_path) == []


def test_unwritable_directory_raises_without_leftovers(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "dir" / "f.txt"
    with pytest.raises(FileNotFoundError):
        atomic_write_text(missing, "x")
    assert list(tmp_path.iterdir()) == []


def test_unserialisable_json_touches_nothing(tmp_path: Path) -> None:
    target = tmp_path / "f.json"
    target.write_text("old")
    with pytest.raises(TypeError):
        atomic_write_json(target, {"x": object()})
    with pytest.raises(ValueError):
        atomic_write_json(target, {"x": float("nan")})
    assert target.read_text() == "old" and leftovers(tmp_path) == []


def test_modes_umask_for_new_files_and_kept_for_replaced_ones(tmp_path: Path) -> None:
    old_umask = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "new.txt", "x")
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o644
    secret = tmp_path / "secret.json"
    secret.write_text("{}")
    secret.chmod(0o600)
    atomic_write_json(secret, {"token": "x"})
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert json.loads(secret.read_text()) == {"token": "x"}
