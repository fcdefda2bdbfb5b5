"""open_store (zhiwen.store.factory) picks the backend; the contract module imports none of them."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from zhiwen.errors import InvalidParameter
from zhiwen.store import Store, open_store


def test_embedded_url_opens_an_embedded_store(tmp_path: Path) -> None:
    from zhiwen.store.embedded import EmbeddedStore

    store = open_store("embedded", path=tmp_path / "kb", name="kb", dim=4)
    try:
        assert isinstance(store, EmbeddedStore) and isinstance(store, Store) and store.dim == 4
    finally:
        store.close()


@pytest.mark.parametrize("url", ["sqlite:///x.db", "", "EMBEDDED", "mysql://h/db"])
def test_unknown_url_is_invalid_parameter(tmp_path: Path, url: str) -> None:
    with pytest.raises(InvalidParameter) as info:
        open_store(url, path=tmp_path, name="kb", dim=4)
    assert "未知的存储后端" in info.value.message


def test_contract_and_factory_import_no_backend() -> None:
    """base.py is only the contract: importing it (or the factory) loads neither backend."""
    code = (
        "import sys, zhiwen.store.base, zhiwen.store.factory, zhiwen.store.filters\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('zhiwen.store.embedded', "
        "'zhiwen.store.postgres', 'zhiwen.store._pg', 'zhiwen.store._embedded', 'psycopg', "
        "'zhiwen.store.qdrant', 'zhiwen.store._qdrant', 'qdrant')))\n"
        "assert not loaded, loaded\n"
        "assert not hasattr(zhiwen.store.base, 'open_store')\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("module", ["zhiwen.store.embedded", "zhiwen.store.postgres", "zhiwen.store.qdrant"])
def test_each_backend_imports_on_its_own(module: str) -> None:
    """A backend imported first, in a fresh interpreter, imports cleanly (no partial-import cycle)."""
    cmd = [sys.executable, "-c", f"import {module}"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr


def test_qdrant_local_url_opens_a_qdrant_store(tmp_path: Path) -> None:
    pytest.importorskip("qdrant_edge", reason="the [qdrant] extra is not installed")
    from zhiwen.store.qdrant import QdrantStore

    store = open_store(f"qdrant+local://{tmp_path}/q", path=tmp_path / "kb", name="kb", dim=4)
    try:
        assert isinstance(store, QdrantStore) and isinstance(store, Store) and store.dim == 4
    finally:
        store.close()


def test_drop_store(tmp_path: Path) -> None:
    from zhiwen.store.factory import drop_store

    assert drop_store("embedded", "kb") is False  # its directory is the caller's to remove
    if importlib.util.find_spec("qdrant_edge"):
        assert drop_store(f"qdrant+local://{tmp_path}", "never-created") is False
    with pytest.raises(InvalidParameter):
        drop_store("mysql://h/db", "kb")
