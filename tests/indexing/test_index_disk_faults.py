"""A full or read-only disk while indexing: one clear Chinese error, the KB as it was, no litter.

The home lives on a tiny tmpfs of its own (mounting needs root; skipped otherwise).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zhiwen.config import reset_settings_cache
from zhiwen.documents import Document
from zhiwen.errors import StoreUnavailable
from zhiwen.kb import close_all, list_kbs, open_kb
from zhiwen.kb.diskfaults import DiskWriteError


def _mount(disk: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["mount", *options, str(disk)], capture_output=True, text=True, check=False)


@pytest.fixture
def tiny_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a tiny tmpfs needs root")
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = _mount(disk, "-t", "tmpfs", "-o", "size=1536k", "tmpfs")
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    monkeypatch.setenv("ZHIWEN_HOME", str(disk / "home"))
    monkeypatch.setenv("ZHIWEN_EMBEDDING__PROVIDER", "hash")
    monkeypatch.delenv("ZHIWEN_STORE", raising=False)
    reset_settings_cache()
    try:
        yield disk
    finally:
        close_all()
        reset_settings_cache()
        subprocess.run(["umount", "-l", str(disk)], check=False)


def _small() -> list[Document]:
    return [Document(id=f"d{i}", text=f"第{i}篇：知识库讲检索。", title=f"t{i}") for i in range(10)]


def _state(disk: Path) -> tuple[int, int, list[str]]:
    kb = open_kb("k")
    return kb.revision, kb.info()["chunks"], [h.id for h in kb.search("知识库", mode="bm25", top_k=5)]


def _litter(disk: Path) -> list[str]:
    return [str(p) for p in disk.rglob("*") if ".tmp" in p.name]


def test_full_disk_keeps_the_kb_and_leaves_no_temporary_files(tiny_home: Path) -> None:
    kb = open_kb("k", create=True)
    kb.index_documents(_small(), progress=False)
    before = _state(tiny_home)
    big = [
        Document(id=f"b{i}", text=f"第{i}篇长文：" + "知识库检索向量嵌入" * 120, title=f"b{i}")
        for i in range(600)
    ]
    with pytest.raises(DiskWriteError) as info:
        kb.index_documents(big, progress=False)
    assert "磁盘空间不足" in info.value.message and "已有内容保持不变" in info.value.message
    assert _state(tiny_home) == before and not _litter(tiny_home)


def test_read_only_disk_refuses_clearly(tiny_home: Path) -> None:
    open_kb("k", create=True).index_documents(_small(), progress=False)
    before = _state(tiny_home)
    close_all()  # no file open for writing, so the tmpfs can turn read-only
    remounted = _mount(tiny_home, "-o", "remount,ro")
    assert remounted.returncode == 0, remounted.stderr

    # the store may refuse to open read-only (its own clear error) or the write lock refuses
    with pytest.raises(StoreUnavailable, match="只读"):
        open_kb("k").index_documents(_small()[:5], prune=True, progress=False)
    with pytest.raises(DiskWriteError, match="只读"):
        open_kb("x", create=True)

    from zhiwen.cli.main import app

    beir = tiny_home.parent / "corpus"
    beir.mkdir()
    (beir / "corpus.jsonl").write_text('{"_id": "a", "text": "新段落"}\n', "utf-8")
    result = CliRunner().invoke(app, ["index", "--kb", "y", "--format", "beir", str(beir)])
    assert result.exit_code == 1 and "只读" in result.stderr and "Traceback" not in result.output
    assert list_kbs() == ["k"] and not _litter(tiny_home)
    close_all()
    assert _mount(tiny_home, "-o", "remount,rw").returncode == 0
    assert _state(tiny_home) == before
