"""The versions registry and its two checkers: fresh files stamped, older ones migrated after a
backup copy, newer ones refused untouched, big steps refused on open."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zhiwen.config import get_settings
from zhiwen.config.runtime import DynamicSettingsService
from zhiwen.conversation.store import ConversationMemory
from zhiwen.curation.db import CurationDB
from zhiwen.kb.config import load_config
from zhiwen.store._embedded_db import ChunkDB
from zhiwen.versions import (
    FORMATS,
    Format,
    FormatTooNew,
    MigrationNeeded,
    Step,
    check_sqlite,
    registry,
    sqlite_version,
)


def test_every_format_declares_steps_up_to_its_current_version() -> None:
    for fmt in FORMATS.values():
        assert [s.to for s in fmt.steps] == list(range(fmt.current - len(fmt.steps) + 1, fmt.current + 1))
        for step in fmt.steps:
            assert step.what
            if step.run is not None:
                assert callable(step.function())


def test_a_fresh_sqlite_file_is_stamped(tmp_path: Path) -> None:
    ChunkDB(tmp_path / "store", dim=4).close()
    with sqlite3.connect(tmp_path / "store" / "store.sqlite") as conn:
        assert sqlite_version(conn) == FORMATS["embedded-store"].current
    assert not list((tmp_path / "store").glob("*.bak"))


def test_an_unversioned_store_is_migrated_after_a_backup(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    folder.mkdir()
    with sqlite3.connect(folder / "store.sqlite") as conn:  # the layout before vector fills
        conn.execute(
            "CREATE TABLE chunks (rowid INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,"
            " doc_id TEXT NOT NULL, text TEXT NOT NULL, title TEXT NOT NULL, parent_id TEXT,"
            " metadata TEXT NOT NULL, terms BLOB NOT NULL, tfs BLOB NOT NULL, length INTEGER NOT NULL,"
            " vector BLOB, hash TEXT NOT NULL)"
        )
        row = "1, 'a', 'd', '文本', '', NULL, '{}', x'', x'', 0, NULL, 'h'"
        conn.execute(f"INSERT INTO chunks VALUES ({row})")
    conn.close()
    db = ChunkDB(folder, dim=4)
    assert db.count() == 1
    db.close()
    with sqlite3.connect(folder / "store.sqlite") as conn:
        assert sqlite_version(conn) == 1
        assert "vseq" in {r[1] for r in conn.execute("PRAGMA table_info(chunks)")}
    conn.close()
    with sqlite3.connect(folder / "store.sqlite.v0.bak") as backup:
        assert sqlite_version(backup) == 0
        assert "vseq" not in {r[1] for r in backup.execute("PRAGMA table_info(chunks)")}
    backup.close()


def test_a_newer_file_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "sessions.sqlite"
    ConversationMemory(path)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    conn.close()
    before = path.read_bytes()
    with pytest.raises(FormatTooNew) as err:
        ConversationMemory(path)
    assert "请升级 zhiwen" in err.value.message and "99" in err.value.message
    assert path.read_bytes() == before


def test_curation_from_before_versions_is_stamped(tmp_path: Path) -> None:
    path = tmp_path / "curation.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    conn.close()
    db = CurationDB(tmp_path)
    assert db.exists()
    with db.transaction():
        pass
    db.close()
    with sqlite3.connect(path) as conn:
        assert sqlite_version(conn) == 1
    conn.close()


@pytest.fixture
def big_format(monkeypatch: pytest.MonkeyPatch) -> Format:
    fmt = Format(
        "test-big",
        "测试格式",
        "sqlite",
        2,
        (Step(1, "版本号"), Step(2, "重写整个表", f"{__name__}:_rewrite", on_open=False)),
    )
    monkeypatch.setitem(registry.FORMATS, fmt.name, fmt)
    return fmt


def _rewrite(conn: sqlite3.Connection) -> None:
    conn.execute("UPDATE t SET v = v * 2")


def test_a_big_step_is_refused_on_open_and_run_by_migrate(tmp_path: Path, big_format: Format) -> None:
    path = tmp_path / "big.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE t (v INTEGER)")
    conn.execute("INSERT INTO t VALUES (21)")
    with pytest.raises(MigrationNeeded) as err:
        check_sqlite(conn, big_format.name, path)
    assert "zhiwen migrate" in err.value.message
    assert sqlite_version(conn) == 0
    steps = check_sqlite(conn, big_format.name, path, on_open=False)
    assert [s.to for s in steps] == [1, 2]
    assert conn.execute("SELECT v FROM t").fetchone()[0] == 42
    assert check_sqlite(conn, big_format.name, path, on_open=False) == []  # done: nothing again
    conn.close()


def test_a_failed_step_rolls_back_and_resumes(tmp_path: Path, big_format: Format) -> None:
    path = tmp_path / "big.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE other (v INTEGER)")  # no table t: step 2 fails
    with pytest.raises(sqlite3.OperationalError):
        check_sqlite(conn, big_format.name, path, on_open=False)
    assert sqlite_version(conn) == 1  # step 1 committed, step 2 rolled back
    conn.execute("CREATE TABLE t (v INTEGER)")
    assert [s.to for s in check_sqlite(conn, big_format.name, path, on_open=False)] == [2]
    conn.close()


def test_kb_json_without_a_version_is_migrated_and_a_newer_one_refused(tmp_path: Path) -> None:
    (tmp_path / "kb.json").write_text(json.dumps({"name": "手册", "embedder": "hash", "dim": 256}), "utf-8")
    cfg = load_config(tmp_path, "手册")
    assert cfg.format_version == 1 and cfg.sources == []
    assert json.loads((tmp_path / "kb.json").read_text("utf-8"))["format_version"] == 1
    assert "format_version" not in json.loads((tmp_path / "kb.json.v0.bak").read_text("utf-8"))
    newer = {"name": "手册", "embedder": "hash", "dim": 256, "format_version": 7}
    (tmp_path / "kb.json").write_text(json.dumps(newer), "utf-8")
    with pytest.raises(FormatTooNew):
        load_config(tmp_path, "手册")
    assert json.loads((tmp_path / "kb.json").read_text("utf-8")) == newer


def test_home_settings_carry_a_version(zhiwen_home: Path) -> None:
    settings = get_settings()
    path = zhiwen_home / "dynamic_settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"retrieval": {"top_k": 7}}), "utf-8")
    service = DynamicSettingsService(settings, path)
    assert service.overrides() == {"retrieval": {"top_k": 7}}
    assert json.loads(path.read_text("utf-8"))["format_version"] == 1
    service.update({"retrieval": {"top_k": 8}})
    assert json.loads(path.read_text("utf-8")) == {"format_version": 1, "retrieval": {"top_k": 8}}


def test_a_big_older_store_is_refused_on_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "store"
    folder.mkdir()
    with sqlite3.connect(folder / "store.sqlite") as conn:
        conn.execute("CREATE TABLE chunks (rowid INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT)")
    conn.close()
    monkeypatch.setattr("zhiwen.versions.sqlite.ON_OPEN_MAX_BYTES", 0)
    with pytest.raises(MigrationNeeded) as err:
        ChunkDB(folder, dim=4)
    assert "zhiwen migrate" in err.value.message
    assert not list(folder.glob("*.bak"))


def test_a_qdrant_kb_carries_its_payload_version(tmp_path: Path) -> None:
    from zhiwen.store.factory import open_store

    url = f"qdrant+local://{tmp_path / 'qdrant'}"
    store = open_store(url, path=tmp_path / "kb", name="手册", dim=4)
    assert store._meta["payload_version"] == 1  # type: ignore[attr-defined]
    store._meta["payload_version"] = 99  # type: ignore[attr-defined]
    store._save_meta()  # type: ignore[attr-defined]
    store.close()
    with pytest.raises(FormatTooNew):
        open_store(url, path=tmp_path / "kb", name="手册", dim=4)


@given(st.sampled_from(sorted(FORMATS)), st.integers(min_value=0, max_value=12), st.booleans())
def test_pending_is_the_steps_between_or_a_refusal(name: str, found: int, on_open: bool) -> None:
    fmt = FORMATS[name]
    if found > fmt.current:
        with pytest.raises(FormatTooNew):
            fmt.pending(found, "x", on_open=on_open)
        return
    steps = fmt.pending(found, "x", on_open=on_open)
    # every declared step above ``found``, in order (PostgreSQL's start at 2: 1 was its first layout)
    assert [s.to for s in steps] == sorted(s.to for s in fmt.steps if s.to > found)
    assert all(found < s.to <= fmt.current for s in steps)
