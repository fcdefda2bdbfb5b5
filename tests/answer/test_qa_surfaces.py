"""The offline answer on every surface: the Answer, POST /api/v1/qa (JSON and SSE), the rich CLI."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from zhiwen.api.app import create_app
from zhiwen.appkit import AskRequest
from zhiwen.appkit.context import build_context
from zhiwen.appkit.generic_qa import GENERIC_QA
from zhiwen.clikit.console import console, print_app_answer
from zhiwen.config import Settings
from zhiwen.documents import Document
from zhiwen.kb import open_kb

MANUAL = Document(
    id="import",
    title="建立知识库",
    text=(
        "# 建立知识库\n\n## 导入文档\n\n用 `zhiwen index` 命令把目录导入知识库：\n\n"
        "```bash\nzhiwen index --kb manual ./docs\n```\n\n## 支持的格式\n\n- Markdown\n- CSV\n"
    ),
)
SERVE = Document(id="serve", title="服务", text="# 服务\n\n用 zhiwen serve 启动服务，默认端口为 8000。")


@pytest.fixture
def settings(zhiwen_home: Path) -> Iterator[Settings]:
    s = Settings(home=zhiwen_home, embedding={"provider": "hash"})
    kb = open_kb("manual", settings=s, create=True, embedder="hash")
    kb.index_documents([MANUAL, SERVE], progress=False)
    kb.close()
    yield s


def test_app_answer_carries_answerable(settings: Settings) -> None:
    ctx = build_context(settings)
    good = GENERIC_QA.ask(AskRequest(question="怎么导入文档？", kb="manual"), ctx)
    assert (good.route, good.answerable, good.data) == ("general", True, {})
    assert good.answer.startswith("用 `zhiwen index` 命令把目录导入知识库：[1]\n\n```bash")
    junk = GENERIC_QA.ask(AskRequest(question="紫色的大象会在月球上打篮球吗", kb="manual"), ctx)
    assert junk.answerable is False and "可能相关" in junk.answer
    events = list(GENERIC_QA.stream(AskRequest(question="默认端口是多少？", kb="manual"), ctx))
    assert events[-1].type == "done" and events[-1].data["answerable"] is True
    assert events[-1].answer is not None and events[-1].answer.answerable is True
    assert "8000" in "".join(e.data["text"] for e in events if e.type == "delta")


def test_the_kb_floor_overrides_the_default(settings: Settings) -> None:
    open_kb("manual", settings=settings, extra={"relevance_floor": 1.0})  # saved in kb.json
    assert (
        json.loads((settings.kb_root / "manual" / "kb.json").read_text("utf-8"))["extra"]["relevance_floor"]
        == 1.0
    )
    answer = GENERIC_QA.ask(AskRequest(question="怎么导入文档？", kb="manual"), build_context(settings))
    assert answer.answerable is False


def test_api_returns_markdown_and_answerable(settings: Settings) -> None:
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        res = client.post("/api/v1/qa", json={"kb": "manual", "question": "怎么导入文档？"})
        assert res.status_code == 200, res.text
        data = res.json()["data"]
        assert data["answerable"] is True and "```bash" in data["answer"] and "**相关段落**" in data["answer"]
        res = client.post("/api/v1/qa", json={"kb": "manual", "question": "紫色的大象会在月球上打篮球吗"})
        assert res.json()["data"]["answerable"] is False
        with client.stream(
            "POST", "/api/v1/qa", json={"kb": "manual", "question": "怎么导入文档？", "stream": True}
        ) as stream:
            body = "".join(stream.iter_text())
        done = [line for line in body.splitlines() if line.startswith("data:") and "answerable" in line]
        assert done and json.loads(done[-1][5:])["answerable"] is True


def test_cli_renders_markdown(settings: Settings) -> None:
    answer = GENERIC_QA.ask(AskRequest(question="怎么导入文档？", kb="manual"), build_context(settings))
    with console.capture() as captured:
        print_app_answer(answer)
    out = captured.get()
    assert "zhiwen index --kb manual ./docs" in out and "```" not in out  # the fence is rendered
    assert "相关段落" in out and "**" not in out and "回答方式" in out
    junk = GENERIC_QA.ask(
        AskRequest(question="紫色的大象会在月球上打篮球吗", kb="manual"), build_context(settings)
    )
    with console.capture() as captured:
        print_app_answer(junk)
    assert "知识库中没有相关内容" in captured.get()
