"""A home filled by an earlier release of zhiwen opens with this one: same answers, every file
migrated (after a backup copy), nothing lost.

The earlier release is commit ``OLD_RELEASE`` of this repository (before file versions), taken
with ``git archive`` into a temporary folder and run in a subprocess with its ``src`` first on
``PYTHONPATH`` — the same interpreter and installed dependencies, so nothing is downloaded (a
scratch venv would add nothing here). The recipe is ``old_release_home.py`` beside this file;
no binary fixture is kept. Skipped, with the reason, where the history is not there (a shallow clone).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from io import BytesIO
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zhiwen.cli.main import app
from zhiwen.config import get_settings, reset_settings_cache
from zhiwen.config.runtime import DynamicSettingsService
from zhiwen.conversation.store import ConversationMemory
from zhiwen.kb.registry import close_all, open_kb
from zhiwen.versions import sqlite_version

OLD_RELEASE = "caf18ef"  # the last commit before this wave's format changes
REPO = Path(__file__).resolve().parents[2]
RECIPE = Path(__file__).with_name("old_release_home.py")  # run by the earlier release


def _archive(target: Path) -> None:
    try:
        tar = subprocess.run(
            ["git", "-C", str(REPO), "archive", "--format=tar", OLD_RELEASE, "src"],
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"release {OLD_RELEASE} not in the git history here (shallow clone?): {exc}")
    with tarfile.open(fileobj=BytesIO(tar)) as archive:
        archive.extractall(target, filter="data")


@pytest.fixture
def old_home(tmp_path: Path, zhiwen_home: Path) -> Iterator[tuple[Path, dict[str, list[str]]]]:
    """A home written by the earlier release, and the search results it gave."""
    _archive(tmp_path / "old")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "old" / "src"), "ZHIWEN_HOME": str(zhiwen_home)}
    run = subprocess.run(
        [sys.executable, str(RECIPE)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    reset_settings_cache()
    yield zhiwen_home, json.loads(run.stdout)["hits"]
    close_all()


def test_a_home_of_the_earlier_release_answers_the_same(old_home: tuple[Path, dict[str, list[str]]]) -> None:
    home, old_hits = old_home
    runner = CliRunner()
    dry = runner.invoke(app, ["migrate", "--dry-run", "--json"])
    assert dry.exit_code == 0, dry.output
    pending = {Path(f["path"]).name for f in json.loads(dry.output)["files"] if f["state"] == "待升级"}
    assert {"kb.json", "store.sqlite", "dynamic_settings.json", "sessions.sqlite"} <= pending
    assert not list(home.rglob("*.bak"))  # a dry run writes nothing

    kb = open_kb("旧版知识库")
    for question, ids in old_hits.items():
        assert [h.chunk.id for h in kb.search(question, top_k=5)] == ids, question
    assert kb.config.format_version == 1

    memory = ConversationMemory(home / "sessions.sqlite")
    session = memory.load("caller-1", "s-1")
    assert session is not None and session.user_texts() == ["怎么退货"]
    assert session.states["advisor"] == {"budget": 3000}  # the advisor's row merged into it
    assert DynamicSettingsService(get_settings()).overrides() == {"retrieval": {"top_k": 7}}

    done = runner.invoke(app, ["migrate", "--json"])
    assert done.exit_code == 0, done.output
    assert {f["state"] for f in json.loads(done.output)["files"]} <= {"最新", "已升级"}
    with sqlite3.connect(home / "kbs" / "旧版知识库" / "store" / "store.sqlite.v0.bak") as backup:
        assert sqlite_version(backup) == 0  # the untouched copy
    backup.close()
