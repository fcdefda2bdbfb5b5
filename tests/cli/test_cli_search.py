"""``zhiwen search``: table and JSON output, modes, filters, parents, and one-line errors."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

Invoke = Callable[..., Result]


@pytest.fixture
def indexed(zw: Invoke, md_dir: Path) -> Invoke:
    result = zw("index", "--kb", "recipes", "--quiet", str(md_dir))
    assert result.exit_code == 0, result.output
    return zw


def search_json(zw: Invoke, *args: str) -> dict:
    result = zw("search", "--kb", "recipes", "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_table_output(indexed: Invoke) -> None:
    result = indexed("search", "--kb", "recipes", "宫保鸡丁怎么做")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "宫保鸡丁" in out and "BM25" in out and "向量" in out and "category=meat_dish" in out


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_json_modes(indexed: Invoke, mode: str) -> None:
    data = search_json(indexed, "--mode", mode, "--top-k", "2", "宫保鸡丁怎么做")
    assert data["mode"] == mode and len(data["hits"]) <= 2
    top = data["hits"][0]
    assert top["rank"] == 1 and top["chunk"]["doc_id"] == "meat_dish/宫保鸡丁"
    assert top["chunk"]["metadata"]["category"] == "meat_dish"
    if mode == "hybrid":
        assert top["fused_score"] is not None and top["bm25_score"] is not None
        assert set(data["timings_ms"]) >= {"bm25", "dense", "fuse", "total"}


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_filters(indexed: Invoke, mode: str) -> None:
    data = search_json(indexed, "--mode", mode, "--filter", "category=soup", "鸡蛋 豆腐 花生")
    assert data["hits"] and {h["chunk"]["metadata"]["category"] for h in data["hits"]} == {"soup"}
    data = search_json(
        indexed, "--mode", mode, "--filter", "difficulty>=2", "--filter", "difficulty<3", "豆腐 鸡丁"
    )
    assert {h["chunk"]["doc_id"] for h in data["hits"]} == {"vegetable_dish/麻婆豆腐"}
    data = search_json(indexed, "--mode", mode, "--filter", "category=soup|meat_dish", "豆腐 鸡蛋 花生")
    assert {h["chunk"]["metadata"]["category"] for h in data["hits"]} <= {"soup", "meat_dish"}
    assert data["filters"] == {"category": {"in": ["soup", "meat_dish"]}}


def test_parents(indexed: Invoke) -> None:
    data = search_json(indexed, "--parents", "--top-k", "2", "宫保鸡丁怎么做")
    assert data["parents"][0]["id"] == "meat_dish/宫保鸡丁"
    assert data["parents"][0]["document"]["text"].startswith("# 宫保鸡丁的做法")
    result = indexed("search", "--kb", "recipes", "--parents", "宫保鸡丁")
    assert result.exit_code == 0 and "命中段落" in result.stdout


def test_no_results_message(indexed: Invoke) -> None:
    result = indexed("search", "--kb", "recipes", "--mode", "bm25", "量子力学")
    assert result.exit_code == 0 and "没有找到" in result.stdout


def test_fusion_options(indexed: Invoke) -> None:
    assert search_json(indexed, "--fusion", "rrf", "豆腐")["fusion"] == "rrf"
    assert search_json(indexed, "--alpha", "0.9", "豆腐")["hits"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--kb", "nope", "q"], "知识库不存在"),
        (["--kb", "recipes", "--filter", "difficulty<", "q"], "无法解析过滤条件"),
        (["--kb", "recipes", "--filter", "bad field=1", "q"], "过滤"),
        (["--kb", "recipes", "--mode", "sparse", "q"], "未知的检索模式"),
        (["--kb", "recipes", "--top-k", "0", "q"], "top_k"),
        (["--kb", "recipes", "--fusion", "borda", "q"], "融合"),
        (["--kb", "recipes", "   "], "查询"),
    ],
)
def test_errors_one_line(indexed: Invoke, args: list[str], expected: str) -> None:
    result = indexed("search", *args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and expected in lines[0], result.stderr
