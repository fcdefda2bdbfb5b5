"""Embedded store on a full or read-only disk: a clear error, the data intact, no orphan files.

Runs on a tiny tmpfs mounted for the test (needs root and ``mount``; skipped, with the reason,
elsewhere).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from zhiwen.documents import Chunk
from zhiwen.errors import StoreUnavailable
from zhiwen.store._disk import store_write_error
from zhiwen.store.embedded import EmbeddedStore

DIM = 8


def _mount(mnt: Path, size: str) -> str | None:
    """None when a tmpfs of ``size`` is mounted at ``mnt``, else why not."""
    if os.geteuid() != 0:
        return "mounting a tmpfs needs root"
    try:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"cannot run mount: {exc}"
    return None if done.returncode == 0 else f"cannot mount a tmpfs: {done.stderr.strip()}"


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    reason = _mount(mnt, "3m")
    if reason:
        pytest.skip(reason)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True, timeout=30)


def batch(prefix: str, n: int, text_len: int = 40) -> tuple[list[Chunk], list[list[str]], np.ndarray]:
    rng = np.random.default_rng(len(prefix) + n)
    chunks = [
        Chunk(id=f"{prefix}{i}", doc_id=f"{prefix}{i}", text=f"{prefix} 第{i}段 " + "文" * text_len)
        for i in range(n)
    ]
    tokens = [[prefix, f"t{i % 17}", f"u{i}"] for i in range(n)]
    return chunks, tokens, rng.standard_normal((n, DIM)).astype(np.float32)


def fill_disk(where: Path) -> Path:
    """Write a file until the filesystem is full; returns it (delete it to free the space)."""
    filler = where / "filler.bin"
    block = b"\0" * 65536
    with open(filler, "wb") as fh, contextlib.suppress(OSError):
        while True:
            fh.write(block)
            fh.flush()
    return filler


def leftovers(root: Path) -> list[str]:
    """Files that are not part of a store: temporaries of failed writes."""
    allowed = ("store.sqlite", "store.sqlite-wal", "store.sqlite-shm", "cache.npz", "filler.bin")
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and not (p.name in allowed or (p.name.startswith("hnsw-") and p.suffix == ".faiss"))
    )


def test_full_disk_gives_a_clear_error_and_keeps_the_data(tiny_fs: Path) -> None:
    store = EmbeddedStore(tiny_fs / "kb", dim=DIM)
    chunks, tokens, vecs = batch("旧", 50)
    store.upsert(chunks, tokens=tokens, vectors=vecs)
    before = store.search_text(["旧", "t3"], k=10)
    assert len(before) == 10
    filler = fill_disk(tiny_fs)
    big, big_tokens, big_vecs = batch("新", 600, text_len=400)
    with pytest.raises(StoreUnavailable) as err:
        store.upsert(big, tokens=big_tokens, vectors=big_vecs)
    assert "磁盘空间不足" in err.value.message and "cannot rollback" not in str(err.value)
    assert err.value.data == {"reason": "disk_full"}
    # nothing of the failed batch landed; the old data answers as before
    assert store.count() == 50
    assert store.search_text(["新"], k=5) == []
    assert store.search_text(["旧", "t3"], k=10) == before
    # the index cache cannot be saved either: a warning, and no temporary file stays behind
    store.close()
    assert leftovers(tiny_fs) == []
    filler.unlink()
    again = EmbeddedStore(tiny_fs / "kb", dim=DIM)
    assert again.count() == 50 and again.search_text(["旧", "t3"], k=10) == before
    again.upsert(big[:20], tokens=big_tokens[:20], vectors=big_vecs[:20])  # space again: writes work
    assert again.count() == 70
    again.close()
    assert leftovers(tiny_fs) == []


def test_read_only_disk_gives_a_clear_error_and_keeps_the_data(tiny_fs: Path) -> None:
    store = EmbeddedStore(tiny_fs / "kb", dim=DIM)
    chunks, tokens, vecs = batch("旧", 30)
    store.upsert(chunks, tokens=tokens, vectors=None)
    store.set_vectors([c.id for c in chunks[:10]], vecs[:10])
    before = store.search_text(["旧"], k=5)
    store.close()
    # a filesystem with files open for writing cannot be remounted read-only: close, then remount
    subprocess.run(["mount", "-o", "remount,ro", str(tiny_fs)], check=True, timeout=30)
    try:
        with pytest.raises(StoreUnavailable) as err:
            EmbeddedStore(tiny_fs / "kb", dim=DIM)
        assert "只读" in err.value.message
        with pytest.raises(StoreUnavailable, match="只读"):
            EmbeddedStore(tiny_fs / "new_kb", dim=DIM)
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(tiny_fs)], check=True, timeout=30)
    assert leftovers(tiny_fs) == []
    again = EmbeddedStore(tiny_fs / "kb", dim=DIM)
    assert again.count() == 30 and again.missing_vector_ids() == [c.id for c in chunks[10:]]
    assert again.search_text(["旧"], k=5) == before
    again.close()


@pytest.mark.parametrize(
    ("error", "reason", "words"),
    [
        (sqlite3.OperationalError("database or disk is full"), "disk_full", "磁盘空间不足"),
        (sqlite3.OperationalError("attempt to write a readonly database"), "disk_readonly", "只读"),
        (sqlite3.OperationalError("disk I/O error"), "disk_io", "磁盘读写错误"),
        (OSError(errno.ENOSPC, "No space left on device"), "disk_full", "磁盘空间不足"),
        (OSError(errno.EROFS, "Read-only file system"), "disk_readonly", "只读"),
    ],
)
def test_write_errors_are_named(error: BaseException, reason: str, words: str) -> None:
    """What a write in progress meets when the disk fills or turns read-only under it."""
    mapped = store_write_error(error, Path("/data/kb"))
    assert isinstance(mapped, StoreUnavailable) and words in mapped.message
    assert mapped.data == {"reason": reason} and mapped.http_status == 503
    other = store_write_error(sqlite3.IntegrityError("UNIQUE constraint failed"), Path("/data/kb"))
    assert isinstance(other, StoreUnavailable) and other.message == "知识库写入失败：/data/kb"
    assert store_write_error(ValueError("x"), Path("/data/kb")).__class__ is ValueError
