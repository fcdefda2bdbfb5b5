"""Every main command's output read in an 80-column terminal: nothing cut with "…", sources by
file and page, keys in Chinese (the new user's 「OCR… 新 … 已恢…」 and 「advisor_policy、adv…」)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from zhiwen.clikit import console as cli_console
from zhiwen.documents import Document
from zhiwen.kb import open_kb

Invoke = Callable[..., Result]

_FRAME = re.compile(r"[\s\u2500-\u257f]+")  # whitespace and box drawing


def squash(text: str) -> str:
    """The text without line breaks, spaces and table borders: a value folded over several
    lines of one column reads whole again."""
    return _FRAME.sub("", text)


def columns(output: str) -> dict[str, str]:
    """The first headed table of ``output``, column by column (each column's lines joined and
    squashed): a cell folded over several lines reads whole again."""
    lines = output.splitlines()
    head = next(line for line in lines if line.lstrip().startswith("┃"))
    names = [name.strip() for name in head.strip().strip("┃").split("┃")]
    texts = dict.fromkeys(names, "")
    for line in lines[lines.index(head) + 1 :]:
        parts = line.strip().strip("│").split("│")
        if line.lstrip().startswith("└"):
            break
        if line.lstrip().startswith("│") and len(parts) == len(names):
            for name, part in zip(names, parts, strict=True):
                texts[name] += squash(part)
    return texts


def at(zw: Invoke, monkeypatch: pytest.MonkeyPatch, columns: int, *args: str) -> Result:
    """``zhiwen ARGS`` in a terminal ``columns`` wide (the shared consoles took their width
    when first imported, as a real run does at its start)."""
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.setattr(cli_console.console, "width", columns)
    monkeypatch.setattr(cli_console.err_console, "width", columns)
    return zw(*args)


def narrow_and_wide(zw: Invoke, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[str, str]:
    """The command's output at 80 and at 300 columns; both must succeed."""
    narrow = at(zw, monkeypatch, 80, *args)
    assert narrow.exit_code == 0, narrow.output
    wide = at(zw, monkeypatch, 300, *args)
    assert wide.exit_code == 0, wide.output
    return narrow.output, wide.output


def assert_readable(narrow: str, wide: str) -> None:
    """No line is wider than 80 columns, and the narrow terminal cut nothing: every "…" it
    shows is one the wide terminal shows too (an excerpt's own), none is a cut cell."""
    assert max(len(line) for line in narrow.splitlines()) <= 80, narrow
    assert narrow.count("…") == wide.count("…"), narrow


@pytest.fixture
def manual(cli_home: Path) -> str:
    """A KB of documents whose metadata carries a file, pages, a section and bookkeeping."""
    kb = open_kb("manual", create=True, embedder="hash")
    docs = [
        Document(
            id="import",
            title="建立知识库与导入格式的完整说明",
            text="# 导入文档\n\n用 zhiwen index 命令把一个目录或文件导入知识库，知识库不存在时会自动创建。",
            metadata={
                "source": "知问用户手册（第三版）/第二章_建立知识库与导入格式.pdf",
                "page": 3,
                "page_end": 4,
                "section": "第二章 建立知识库 > 导入文档",
                "bytes": 123456,
                "file_sha256": "3435e244628490ae41" * 3,
            },
        ),
        Document(
            id="serve",
            title="启动服务",
            text="# 启动服务\n\n运行 zhiwen serve 启动服务，默认端口 8000，导入文档后即可提问。",
            metadata={"source": "第五章_启动服务.pdf", "page": 12},
        ),
    ]
    kb.index_documents(docs, progress=False)
    return "manual"


def test_ask_sources_show_file_and_page(zw: Invoke, manual: str, monkeypatch: pytest.MonkeyPatch) -> None:
    narrow, wide = narrow_and_wide(zw, monkeypatch, "ask", "--kb", manual, "怎么导入文档？")
    assert_readable(narrow, wide)
    where = columns(narrow)["出处"]
    assert "知问用户手册（第三版）/第二章_建立知识库与导入格式.pdf·第3–4页" in where
    assert "第五章_启动服务.pdf·第12页" in where
    assert columns(narrow)["标题"].startswith("建立知识库与导入格式的完整说明")
    assert "file_sha256" not in narrow and "bytes" not in narrow and "3435e2" not in narrow
    assert "回答方式：摘录（未配置大模型）" in narrow and "no_llm" not in narrow


def test_search_at_80_columns(zw: Invoke, manual: str, monkeypatch: pytest.MonkeyPatch) -> None:
    narrow, wide = narrow_and_wide(zw, monkeypatch, "search", "--kb", manual, "导入文档")
    assert_readable(narrow, wide)
    flat = squash(narrow)
    assert "知问用户手册（第三版）/第二章_建立知识库与导入格式.pdf" in flat and "file_sha256" not in flat
    narrow, wide = narrow_and_wide(zw, monkeypatch, "search", "--kb", manual, "--parents", "导入文档")
    assert_readable(narrow, wide)
    table = columns(narrow)
    assert "建立知识库与导入格式的完整说明" in table["标题"]
    assert "source=知问用户手册（第三版）/第二章_建立知识库与导入格式.pdf" in table["元数据"]


def test_kb_info_and_list(zw: Invoke, manual: str, monkeypatch: pytest.MonkeyPatch) -> None:
    narrow, wide = narrow_and_wide(zw, monkeypatch, "kb", "info", manual)
    assert_readable(narrow, wide)
    flat = squash(narrow)
    path = str(open_kb(manual).path)
    assert f"路径{squash(path)}" in flat  # a long path folds; it is never cut
    for key in ("向量模型", "文档数", "段落数", "版本", "向量覆盖率", "分词方式", "存储后端", "占用空间"):
        assert key in flat, key
    for english in ("path", "embedder", "documents", "dense_coverage", "tokenizer_mode", "store."):
        assert english not in narrow, english
    as_json = json.loads(at(zw, monkeypatch, 80, "kb", "info", manual, "--json").stdout)
    assert {"path", "embedder", "documents", "dense_coverage"} <= set(as_json)  # scripts keep keys
    narrow, wide = narrow_and_wide(zw, monkeypatch, "kb", "list")
    assert_readable(narrow, wide)
    assert "manual" in narrow and "hash" in narrow


def test_apps_at_80_columns(zw: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    narrow, wide = narrow_and_wide(zw, monkeypatch, "apps")
    assert_readable(narrow, wide)
    assert "…" not in narrow
    for kb in ("advisor_policy", "advisor_faq", "policy_visa", "policy_airline", "policy_general", "recipes"):
        assert kb in narrow, kb
    assert "seed" not in narrow
    listed = json.loads(at(zw, monkeypatch, 80, "apps", "--json").stdout)
    assert all("seed" not in a["description"] for a in listed)


def test_index_summary_at_80_columns(zw: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("知问是一个中文离线知识库问答系统。" * 3, "utf-8")
    (folder / "b.md").write_text("# 导入\n\n用 zhiwen index 导入文档。", "utf-8")
    narrow = at(zw, monkeypatch, 80, "index", "--kb", "docs80", str(folder))
    assert narrow.exit_code == 0, narrow.output
    wide = at(zw, monkeypatch, 300, "index", "--kb", "docs80", str(folder))
    assert wide.exit_code == 0, wide.output
    assert_readable(narrow.output, wide.output)
    assert "…" not in narrow.output
    for label in (
        "文件",
        "失败",
        "OCR页",
        "文档",
        "段落",
        "新向量化",
        "已恢复",
        "删除文档",
        "可检索(秒)",
        "用时(秒)",
    ):
        assert label in narrow.output, label


def test_index_failures_at_80_columns(zw: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "好文件.txt").write_text("可以读取的文本内容。", "utf-8")
    bad = "一个名字很长很长的损坏的文档_第二版_最终版_请勿修改.pdf"
    (folder / bad).write_bytes(b"%PDF-1.7\n this is not a pdf at all")
    r = at(zw, monkeypatch, 80, "index", "--kb", "mixed80", str(folder))
    assert r.exit_code == 3, r.output
    assert max(len(line) for line in r.output.splitlines()) <= 80
    failures = r.output[r.output.index("个文件导入失败") :]
    assert bad in columns(failures)["文件"] and "失败" in columns(failures)["状态"]


def _beir(root: Path) -> Path:
    root.mkdir()
    passages = {
        "p1": ("宫保鸡丁", "宫保鸡丁是一道川菜，主料是鸡丁、花生米和干辣椒。"),
        "p2": ("契税法", "契税税率为百分之三至百分之五。"),
        "p3": ("住房公积金", "职工购买自住住房时可以提取住房公积金。"),
    }
    queries = {"q1": "宫保鸡丁用什么主料", "q2": "契税税率是多少", "q3": "公积金什么时候可以提取"}
    with (root / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for pid, (title, text) in passages.items():
            f.write(json.dumps({"_id": pid, "title": title, "text": text}, ensure_ascii=False) + "\n")
    with (root / "queries.jsonl").open("w", encoding="utf-8") as f:
        for qid, text in queries.items():
            f.write(json.dumps({"_id": qid, "text": text}, ensure_ascii=False) + "\n")
    (root / "qrels").mkdir()
    rows = ["query-id\tcorpus-id\tscore", "q1\tp1\t1", "q2\tp2\t1", "q3\tp3\t1"]
    (root / "qrels" / "test.tsv").write_text("\n".join(rows) + "\n", "utf-8")
    return root


def test_eval_at_80_columns(zw: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _beir(tmp_path / "mini_beir")
    narrow, wide = narrow_and_wide(zw, monkeypatch, "eval", str(data), "--embedder", "hash", "--mode", "all")
    assert_readable(narrow, wide)
    assert "…" not in narrow
    for metric in ("nDCG@10", "Recall@10", "MRR@10", "检索p50ms", "bm25", "dense", "hybrid"):
        assert metric in squash(narrow), metric


def test_recipes_ask_at_80_columns(zw: Invoke, md_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The new user's 「清炒花菜的…」: a dish's title and file stay whole in the sources."""
    long = md_dir / "vegetable_dish" / "清炒花菜配蒜蓉和小米辣的家常快手做法.md"
    long.write_text(
        "# 清炒花菜配蒜蓉和小米辣的家常快手做法\n预估烹饪难度：★\n## 必备原料和工具\n- 花菜\n- 蒜\n"
        "## 操作\n- 花菜焯水后大火快炒\n",
        "utf-8",
    )
    r = zw("index", "--kb", "recipes", str(md_dir))
    assert r.exit_code == 0, r.output
    narrow, wide = narrow_and_wide(zw, monkeypatch, "ask", "--kb", "recipes", "清炒花菜怎么做")
    assert_readable(narrow, wide)
    sources = columns(narrow)
    assert "清炒花菜配蒜蓉和小米辣的家常快手做法" in sources["标题"]
    assert "vegetable_dish/清炒花菜配蒜蓉和小米辣的家常快手做法.md" in sources["出处"]
