"""A rerank setting changed through the admin API changes every entry point: ``/api/v1/qa``,
``/ask`` and ``zhiwen ask`` (all answer through the one retrieval pipeline).

The reranker is a loopback ``/rerank`` server that reverses the fused order, so "reranked" is
visible in the results themselves, not only in the reported parameters.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from support.fake_rerank import FakeReranker
from zhiwen.api.app import create_app
from zhiwen.apps.listings.ingest import load_lianjia
from zhiwen.apps.listings.service import reset_services
from zhiwen.cli.main import app as cli
from zhiwen.config import APISettings, LLMSettings, Settings, reset_settings_cache
from zhiwen.documents import Document
from zhiwen.kb import close_all, open_kb

TOKEN = "s3cret"
TOPICS = ["安装", "导入", "检索", "过滤", "重排", "大模型", "离线", "部署", "评测", "备份", "权限", "日志"]
pytestmark = pytest.mark.shared_data


@pytest.fixture
def home(tmp_path: Path, shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    settings = Settings(
        home=tmp_path / "home",
        llm=LLMSettings(base_url=None),
        api=APISettings(admin_token=TOKEN),
        _env_file=None,  # type: ignore[call-arg]
    )
    manual = open_kb("manual", settings=settings, create=True, embedder="hash")
    docs = [
        Document(id=f"d{i}", title=f"{t}说明", text=f"# {t}说明\n\n知问的{t}功能：第{i}节，介绍如何配置{t}。")
        for i, t in enumerate(TOPICS)
    ]
    manual.index_documents(docs, progress=False)
    corpus = load_lianjia(shared_data / "lianjia_ershoufang" / "ErshoufangSpider_sh.csv", limit=400)
    open_kb("listings", settings=settings, create=True, embedder="hash", app="listings").index_corpus(
        corpus, progress=False
    )
    monkeypatch.setenv("ZHIWEN_HOME", str(settings.home))
    monkeypatch.delenv("ZHIWEN_LLM__BASE_URL", raising=False)
    reset_settings_cache()
    reset_services()
    yield settings
    close_all()
    reset_services()


def _answers(client: TestClient, runner: CliRunner) -> dict[str, Any]:
    qa = client.post("/api/v1/qa", json={"kb": "manual", "question": "怎么配置重排", "top_k": 3}).json()[
        "data"
    ]
    ask = client.post("/ask", json={"question": "浦东两房", "max_results": 3}).json()["data"]
    r = runner.invoke(cli, ["ask", "--kb", "manual", "--json", "--top-k", "3", "怎么配置重排"])
    assert r.exit_code == 0, r.output
    cli_answer = json.loads(r.stdout)
    return {
        "qa": [s["id"] for s in qa["sources"]],
        "qa_rerank": qa["params"]["rerank"]["enabled"],
        "ask": [p["id"] for p in ask["retrieved_properties"]],
        "ask_rerank": ask["params"]["diagnostics"]["rerank"],
        "cli": [c["id"] for c in cli_answer["citations"]],
        "cli_rerank": cli_answer["params"]["rerank"]["enabled"],
    }


def test_admin_rerank_change_reaches_every_entry_point(home: Settings) -> None:
    runner = CliRunner()
    auth = {"Authorization": f"Bearer {TOKEN}"}  # an admin token set: every route needs it (#29)
    with FakeReranker() as reranker, TestClient(create_app(home), headers=auth) as client:
        before = _answers(client, runner)
        assert before["qa_rerank"] is False and before["cli_rerank"] is False
        assert before["ask_rerank"] == "fused_order"
        assert before["qa"] == before["cli"]

        patch = {
            "rerank": {"enabled": True, "backend": "remote", "endpoint": reranker.url, "score_threshold": 0.0}
        }
        r = client.put("/admin/settings", json=patch)
        assert r.status_code == 200, r.text

        after = _answers(client, runner)
        assert after["qa_rerank"] is True and after["cli_rerank"] is True
        assert after["ask_rerank"] == "reranked"
        assert after["qa"] != before["qa"] and after["cli"] == after["qa"]
        assert after["ask"] != before["ask"]
        assert reranker.calls >= 3 and any("浦东" in q for q in reranker.queries)
