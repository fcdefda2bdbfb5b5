"""``zhiwen ask``: dispatch by the KB's app, rich and JSON output, one-line errors."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

from zhiwen.documents import Document
from zhiwen.kb import open_kb

Invoke = Callable[..., Result]


def _index_recipes(zw: Invoke, md_dir: Path) -> None:
    r = zw("index", "--kb", "recipes", str(md_dir))  # --format auto: HowToCook recognised by content
    assert r.exit_code == 0, r.output
    assert open_kb("recipes").config.app == "recipes"  # HowToCook trees imply the recipe app


def test_ask_recipes_rich(zw: Invoke, md_dir: Path) -> None:
    _index_recipes(zw, md_dir)
    r = zw("ask", "--kb", "recipes", "宫保鸡丁怎么做")
    assert r.exit_code == 0, r.output
    assert "未配置大模型" in r.output and "【操作】" in r.output and "鸡丁下锅" in r.output
    assert "来源" in r.output and "宫保鸡丁的做法" in r.output and "路由：做法详情" in r.output
    assert "meat_dish/宫保鸡丁.md" in r.output  # the source's file, not its hash or size


def test_ask_recipes_json(zw: Invoke, md_dir: Path) -> None:
    _index_recipes(zw, md_dir)
    r = zw("ask", "--kb", "recipes", "--json", "--top-k", "2", "推荐几个简单的菜")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["route"] == "list" and data["llm_used"] is False
    assert 1 <= len(data["citations"]) <= 2
    assert all(s["metadata"]["difficulty"] <= 2 for s in data["citations"])


def test_ask_generic_kb(zw: Invoke, cli_home: Path) -> None:
    kb = open_kb("manual", create=True, embedder="hash")
    kb.index_documents([Document(id="serve", title="服务", text="# 服务\n\n默认端口 8000。")], progress=False)
    r = zw("ask", "--kb", "manual", "--json", "默认端口是多少")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert (
        data["route"] == "general"
        and data["citations"][0]["id"] == "serve"
        and "8000" in data["answer"]
    )


def test_ask_errors(zw: Invoke, cli_home: Path) -> None:
    r = zw("ask", "--kb", "nope", "宫保鸡丁怎么做")
    assert r.exit_code == 2 and "知识库不存在" in r.output and "Traceback" not in r.output
    open_kb("empty_q", create=True, embedder="hash")
    r = zw("ask", "--kb", "empty_q", "   ")
    assert r.exit_code == 2 and "问题不能为空" in r.output
