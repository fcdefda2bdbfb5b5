"""Shared CLI helpers: run_cli error handling, options, filters, JSON serialisation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from zhiwen.clikit.console import (
    error_line,
    format_metadata,
    hit_to_dict,
    parent_to_dict,
    parse_filter_args,
    parse_options,
    run_cli,
    snippet,
    to_json,
)
from zhiwen.documents import Chunk, Document, ParentHit, SearchHit
from zhiwen.errors import IngestError, InvalidParameter, LLMTimeout


def make_app(exc: BaseException | None) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    @run_cli
    def cmd(name: str = typer.Option("x", "--name")) -> None:
        """A command whose signature typer must still see through the decorator."""
        if exc is not None:
            raise exc
        print(f"hello {name}")

    return app


@pytest.mark.parametrize(
    ("exc", "code", "text"),
    [
        (
            IngestError("/x: bad byte", message="导入失败：文件不是 UTF-8 编码"),
            2,
            "错误 [3007]：导入失败：文件不是 UTF-8 编码",
        ),
        (LLMTimeout(), 1, "服务响应超时"),
        (RuntimeError("boom\nsecond line"), 1, "内部错误：RuntimeError: boom second line"),
    ],
)
def test_run_cli_one_line(exc: BaseException, code: int, text: str) -> None:
    result = CliRunner().invoke(make_app(exc), [])
    assert result.exit_code == code
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and text in lines[0]
    assert "bad byte" not in result.stderr  # the English detail goes to the log, not the line


def test_run_cli_detail_only_in_debug(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZHIWEN_DEBUG", "1")
    exc = IngestError("/x: bad byte", message="导入失败：文件不是 UTF-8 编码")
    result = CliRunner().invoke(make_app(exc), [])
    assert "导入失败：文件不是 UTF-8 编码（/x: bad byte）" in result.stderr


def test_run_cli_passes_through() -> None:
    result = CliRunner().invoke(make_app(None), ["--name", "知问"])
    assert result.exit_code == 0 and "hello 知问" in result.stdout


def test_run_cli_debug_reraises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZHIWEN_DEBUG", "1")
    result = CliRunner().invoke(make_app(RuntimeError("boom")), [])
    assert isinstance(result.exception, RuntimeError)


def test_error_line_without_detail() -> None:
    assert error_line(InvalidParameter(message="参数取值无效")) == "错误 [3003]：参数取值无效"


def test_parse_options() -> None:
    assert parse_options(["city=上海", "limit=3", "flag=true", "ratio=0.5", "text-fields=a"]) == {
        "city": "上海",
        "limit": 3,
        "flag": True,
        "ratio": 0.5,
        "text_fields": "a",
    }
    assert parse_options(None) == {}
    with pytest.raises(InvalidParameter):
        parse_options(["novalue"])
    with pytest.raises(InvalidParameter):
        parse_options(["=x"])


def test_parse_filter_args() -> None:
    f = parse_filter_args(["category=soup", "difficulty<=2", "district=浦东|徐汇"])
    assert f.to_dict() == {
        "category": {"eq": "soup"},
        "difficulty": {"lte": 2},
        "district": {"in": ("浦东", "徐汇")},
    }
    assert not parse_filter_args([])


def test_json_serialisation() -> None:
    chunk = Chunk(id="d#0", doc_id="d", text="正文", title="标题", parent_id="d", metadata={"n": 1})
    hit = SearchHit(chunk=chunk, score=np.float32(0.5), bm25_score=1.23456789, bm25_rank=1)  # type: ignore[arg-type]
    d = hit_to_dict(hit, rank=1)
    assert d["rank"] == 1 and d["score"] == 0.5 and d["bm25_score"] == 1.234568 and d["vector_score"] is None
    parent = ParentHit(document=Document(id="d", text="全文", title="标题"), score=0.5, matched_chunks=[hit])
    p = parent_to_dict(parent)
    assert p["matched"] == 1 and p["document"]["text"] == "全文"
    text = to_json({"a": np.int64(3), "p": Path("/x"), "v": np.ones(2), "s": {1}})
    assert json.loads(text) == {"a": 3, "p": "/x", "v": [1.0, 1.0], "s": [1]}
    assert "标题" in to_json(d)  # no \\u escapes


def test_display_helpers() -> None:
    assert snippet("a  b\n c", 10) == "a b c"
    assert snippet("一" * 20, 5) == "一一一一…"
    assert format_metadata({"a": 1, "b": None, "c": [1], "d": "x"}) == "a=1 d=x"
    assert format_metadata({str(i): i for i in range(6)}, limit=2) == "0=0 1=1 …"
