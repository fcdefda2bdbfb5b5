"""Bad bundles and bad moments: refused with a reason, and nothing half-written left behind."""

from __future__ import annotations

import errno
import io
import json
import tarfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from zhiwen.config import get_settings
from zhiwen.errors import KnowledgeBaseBusy
from zhiwen.kb import KnowledgeBase, list_kbs
from zhiwen.kb.diskfaults import DiskWriteError
from zhiwen.portable import BundleError, export_kb, import_bundle, importer
from zhiwen.portable.importer import STAGING_DIR, import_lock


def _rewrite(bundle: Path, edit: Callable[[str, bytes], bytes]) -> None:
    """The bundle with each member passed through ``edit(name, data)``."""
    with tarfile.open(bundle) as tar:
        members = [(m, tar.extractfile(m).read()) for m in tar.getmembers()]  # type: ignore[union-attr]
    with tarfile.open(bundle, "w") as tar:
        for info, data in members:
            data = edit(info.name, data)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


@pytest.fixture
def bundle(curated_kb: KnowledgeBase, tmp_path: Path) -> Path:
    path = tmp_path / "manual.zwkb"
    export_kb(curated_kb, path)
    return path


def _nothing_left(name: str) -> None:
    kb_root = get_settings().kb_root
    assert name not in list_kbs()
    assert not (kb_root / name).exists()
    assert not any((kb_root / STAGING_DIR).iterdir()) if (kb_root / STAGING_DIR).exists() else True


def test_a_changed_byte_is_refused_by_its_checksum(bundle: Path) -> None:
    def flip(name: str, data: bytes) -> bytes:
        return data[:-1] + bytes([data[-1] ^ 1]) if name == "chunks.jsonl.gz" else data

    _rewrite(bundle, flip)
    with pytest.raises(BundleError) as err:
        import_bundle(bundle, name="copy")
    assert err.value.data["reason"] == "checksum" and "chunks.jsonl.gz" in err.value.message
    _nothing_left("copy")


@pytest.mark.parametrize("keep", [0.5, 0.95])
def test_a_truncated_bundle_is_refused(bundle: Path, keep: float) -> None:
    data = bundle.read_bytes()
    bundle.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(BundleError) as err:
        import_bundle(bundle, name="copy")
    assert err.value.data["reason"] in ("truncated", "checksum")
    _nothing_left("copy")


def test_a_newer_format_version_is_refused_naming_the_upgrade(bundle: Path) -> None:
    def newer(name: str, data: bytes) -> bytes:
        if name != "manifest.json":
            return data
        manifest = json.loads(data)
        manifest["format_version"] = 99
        return json.dumps(manifest).encode()

    _rewrite(bundle, newer)
    with pytest.raises(BundleError) as err:
        import_bundle(bundle, name="copy")
    assert err.value.data["reason"] == "newer_format" and "升级" in err.value.message


def test_a_file_that_is_no_bundle_is_refused(tmp_path: Path, home: Path) -> None:
    path = tmp_path / "notes.zwkb"
    path.write_text("不是导出文件", "utf-8")
    with pytest.raises(BundleError):
        import_bundle(path)


def test_a_second_import_of_the_same_name_at_once_is_refused(bundle: Path) -> None:
    lock = import_lock(get_settings(), "copy")
    held = threading.Event()
    release = threading.Event()

    def first_import() -> None:  # another import, holding the lock meanwhile
        with lock:
            held.set()
            release.wait(10)

    worker = threading.Thread(target=first_import)
    worker.start()
    try:
        held.wait(10)
        with pytest.raises(KnowledgeBaseBusy):
            import_bundle(bundle, name="copy")
    finally:
        release.set()
        worker.join()
    import_bundle(bundle, name="copy")
    assert "copy" in list_kbs()


@pytest.mark.parametrize("backend", ["embedded", "postgres", "qdrant"])
def test_a_disk_filling_up_mid_import_leaves_nothing(
    bundle: Path, backend_url: Callable[[str], str], backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = backend_url(backend)
    calls = {"n": 0}
    put_rows = importer._put_rows

    def full_on_second_batch(*args: object, **kwargs: object) -> int:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return put_rows(*args, **kwargs)  # type: ignore[arg-type]

    stages: list[str] = []
    target = importer._target

    def recorded(*args: Any, **kwargs: Any) -> importer.Target:
        staged = target(*args, **kwargs)
        stages.append(staged.config.name)
        return staged

    monkeypatch.setattr(importer, "BATCH", 4)
    monkeypatch.setattr(importer, "_put_rows", full_on_second_batch)
    monkeypatch.setattr(importer, "_target", recorded)
    with pytest.raises(DiskWriteError) as err:
        import_bundle(bundle, name="copy", backend=url)
    assert "磁盘空间不足" in err.value.message
    _nothing_left("copy")
    if backend == "postgres":
        from zhiwen.store._pg_schema import list_kbs as pg_kbs

        assert stages[-1] not in pg_kbs(url)  # the staging schema went too
    if backend == "qdrant":
        root = Path(url.removeprefix("qdrant+local://"))
        assert not root.exists() or not any(root.iterdir())


@pytest.mark.parametrize("backend", ["embedded", "postgres"])
def test_the_staging_kb_of_an_import_killed_midway_is_swept_by_the_next(
    bundle: Path, backend_url: Callable[[str], str], backend: str
) -> None:
    from zhiwen.kb import KnowledgeBase
    from zhiwen.kb.config import KBConfig
    from zhiwen.store.factory import renames

    url = backend_url(backend)
    assert renames(url)
    settings = get_settings()
    stage_dir = settings.kb_root / STAGING_DIR / "imp_dead0001"
    stage_dir.mkdir(parents=True)
    dead = KnowledgeBase(
        KBConfig(name="imp_dead0001", embedder="hash", dim=256, store=url), path=stage_dir, settings=settings
    )
    dead.save_config()
    from curation.manual import manual_docs

    dead.index_documents(manual_docs(), progress=False)  # what a killed import left behind
    dead.close()
    assert importer.sweep_abandoned(settings) == ["imp_dead0001"]
    assert not stage_dir.exists()
    if backend == "postgres":
        from zhiwen.store._pg_schema import list_kbs as pg_kbs

        assert "imp_dead0001" not in pg_kbs(url)
    import_bundle(bundle, name="copy", backend=url)  # and the next import runs as usual
    assert "copy" in list_kbs()
