"""Backups of a live home and their restore: consistent while a writer writes, refused when bad."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from portable.conftest import top10
from zhiwen.cli.main import app
from zhiwen.config import get_settings, reset_settings_cache
from zhiwen.documents import Document
from zhiwen.home_lock import HomeInUse, hold_home, release_home
from zhiwen.kb import KnowledgeBase, close_all, delete_kb, open_kb
from zhiwen.portable import BundleError
from zhiwen.portable.backup import MANIFEST, PARTIAL, backup_home, restore_home


def _use_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    close_all()
    monkeypatch.setenv("ZHIWEN_HOME", str(home))
    reset_settings_cache()


def test_a_backup_taken_while_a_writer_writes_restores_a_consistent_kb(
    curated_kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = curated_kb.store.count()
    stop, wrote = threading.Event(), []

    def writer() -> None:
        for i in range(200):
            if stop.is_set():
                return
            curated_kb.index_documents(
                [Document(id=f"w{i}", text=f"# 新增{i}\n第{i}篇补充说明。")], progress=False
            )
            wrote.append(i)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        while not wrote:  # the writer is under way
            thread.join(0.01)
        report = backup_home(tmp_path / "backup")
    finally:
        stop.set()
        thread.join()
    assert report.sqlite >= 2 and not (tmp_path / ("backup" + PARTIAL)).exists()
    _use_home(tmp_path / "restored", monkeypatch)
    restore_home(tmp_path / "backup")
    kb = open_kb("manual")
    store_db = get_settings().kb_root / "manual" / "store" / "store.sqlite"
    with sqlite3.connect(store_db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    docs = {d for d in kb.store.doc_ids() if d.startswith("w")}
    assert docs == {f"w{i}" for i in range(len(docs))}  # a prefix of the writes, none torn
    assert kb.store.count() == before + len(docs)
    # a snapshot between an index run's two phases: searchable, its vectors completed by a fill
    kb.fill_vectors()
    assert kb.store.vector_count() == kb.store.count()
    assert kb.curation.get_chunk("guide#0").edited
    assert kb.search("退货运费谁承担", top_k=1)[0].chunk.doc_id == "policy"


def test_a_postgres_kb_is_dumped_and_restored(
    home: Path, backend_url: Callable[[str], str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from curation.manual import manual_docs

    kb = open_kb("pgkb", create=True, embedder="hash", store=backend_url("postgres"))
    kb.index_documents(manual_docs(), progress=False)
    want = top10(kb)
    report = backup_home(tmp_path / "backup")
    assert report.postgres and (tmp_path / "backup" / "postgres" / "0.dump").is_file()
    delete_kb("pgkb")  # the schema is gone from the database
    restore_home(tmp_path / "backup")
    assert top10(open_kb("pgkb")) == want


def test_restore_refuses_a_changed_missing_or_unlisted_file_and_a_half_written_backup(
    curated_kb: KnowledgeBase, tmp_path: Path, home: Path
) -> None:
    backup = tmp_path / "backup"
    backup_home(backup)
    target = tmp_path / "restored"
    kb_json = backup / "kbs" / "manual" / "kb.json"
    original = kb_json.read_bytes()
    kb_json.write_bytes(original.replace(b'"hash"', b'"hasH"'))
    with pytest.raises(BundleError) as err:
        restore_home(backup, home=target)
    assert err.value.data["reason"] == "checksum" and "kbs/manual/kb.json" in err.value.message
    kb_json.write_bytes(original)
    (backup / "stray.txt").write_text("x")
    with pytest.raises(BundleError):
        restore_home(backup, home=target)
    (backup / "stray.txt").unlink()
    manifest = json.loads((backup / MANIFEST).read_text("utf-8"))
    (backup / MANIFEST).unlink()
    with pytest.raises(BundleError) as err:
        restore_home(backup, home=target)
    assert err.value.data["reason"] == "partial"
    assert not target.exists()
    (backup / MANIFEST).write_text(json.dumps(manifest), "utf-8")
    restore_home(backup, home=target)
    assert (target / "kbs" / "manual" / "kb.json").read_bytes() == original


def test_restore_refuses_a_home_a_server_runs_on(curated_kb: KnowledgeBase, tmp_path: Path) -> None:
    backup_home(tmp_path / "backup")
    settings = get_settings()
    hold_home(settings, "127.0.0.1", 8000)
    try:
        with pytest.raises(HomeInUse):
            restore_home(tmp_path / "backup")
    finally:
        release_home(settings)


def test_the_cli_exports_imports_backs_up_and_restores(curated_kb: KnowledgeBase, tmp_path: Path) -> None:
    runner = CliRunner()
    bundle = tmp_path / "m.zwkb"
    out = runner.invoke(app, ["kb", "export", "manual", str(bundle), "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["chunks"] == curated_kb.store.count()
    out = runner.invoke(app, ["kb", "import", str(bundle), "--json"])
    assert out.exit_code != 0 and "--replace" in out.output
    out = runner.invoke(app, ["kb", "import", str(bundle), "--as", "copy", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["kb"] == "copy"
    out = runner.invoke(app, ["backup", str(tmp_path / "b"), "--json"])
    assert out.exit_code == 0, out.output
    out = runner.invoke(app, ["restore", str(tmp_path / "b"), "--home", str(tmp_path / "h2"), "--json"])
    assert out.exit_code == 0, out.output
    assert (tmp_path / "h2" / "kbs" / "copy" / "kb.json").is_file()
