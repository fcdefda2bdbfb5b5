"""Syncs behind a server: the schedule (an injected clock, no sleeps), one sync per KB at a
time, and ``GET``/``POST /api/v1/kbs/{kb}/sync``."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from zhiwen.api.app import create_app
from zhiwen.config import Settings, get_settings, reset_settings_cache
from zhiwen.kb import KnowledgeBase
from zhiwen.kb.registry import close_all, open_kb
from zhiwen.sync.service import SyncService, sync_service
from zhiwen.sync.sources import configure
from zhiwen.sync.state import SyncResult


@pytest.fixture
def kb(zhiwen_home: Path, tmp_path: Path) -> Iterator[KnowledgeBase]:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("退货", "发票", "保修"):
        (folder / f"{name}.md").write_text(f"# {name}\n\n关于{name}的说明。\n", "utf-8")
    knowledge = open_kb("定时", create=True, embedder="hash")
    configure(knowledge, add=[folder], interval=600)
    yield knowledge
    close_all()


def test_the_schedule_starts_what_is_due_once(kb: KnowledgeBase) -> None:
    now = [1_000_000.0]
    service = SyncService(get_settings(), clock=lambda: now[0])
    assert service.tick() == ["定时"]  # never synced: due at once
    assert not service.start("定时") or service.wait_idle(60)  # at most one at a time
    assert service.wait_idle(60)
    last = json.loads((kb.path / "sync.json").read_text("utf-8"))["last"]
    now[0] = last["started_at"] + 599
    assert service.due() == []
    now[0] = last["started_at"] + 600
    assert service.due() == ["定时"]
    configure(kb, interval=None)
    assert service.due() == []


def test_one_sync_per_kb_in_the_service(kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    entered = threading.Event()

    def held(knowledge: KnowledgeBase, **_: object) -> SyncResult:
        entered.set()
        release.wait(60)
        return SyncResult()

    monkeypatch.setattr("zhiwen.sync.run.sync_kb", held)
    service = SyncService(get_settings())
    assert service.start("定时")
    assert entered.wait(60)
    assert service.start("定时") is False and service.running("定时")
    release.set()
    assert service.wait_idle(60) and not service.running("定时")


def test_the_api_starts_a_sync_and_reports_its_result(kb: KnowledgeBase, zhiwen_home: Path) -> None:
    with TestClient(create_app(Settings(home=zhiwen_home), app_routers=False)) as http:
        before = http.get("/api/v1/kbs/定时/sync").json()["data"]
        assert before["sources"] and before["sync_interval"] == 600 and before["last"] is None
        started = http.post("/api/v1/kbs/定时/sync").json()["data"]
        assert started["started"] is True
        assert sync_service(get_settings()).wait_idle(60)
        after = http.get("/api/v1/kbs/定时/sync").json()["data"]
        assert after["running"] is False
        assert (after["last"]["added"], after["last"]["errors"]) == (3, [])
        missing = http.get("/api/v1/kbs/没有/sync")
        assert missing.status_code == 404 and missing.json()["code"] == 3004


def test_writing_needs_write_access(
    kb: KnowledgeBase, zhiwen_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ZHIWEN_API__KEYS", '[{"key":"sk-r","kbs":["定时"],"write":false}]')

    reset_settings_cache()
    with TestClient(create_app(get_settings(), app_routers=False)) as http:
        headers = {"Authorization": "Bearer sk-r"}
        assert http.get("/api/v1/kbs/定时/sync", headers=headers).status_code == 200
        refused = http.post("/api/v1/kbs/定时/sync", headers=headers)
        assert refused.status_code == 403 and refused.json()["code"] == 3012
