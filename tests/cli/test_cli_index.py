"""``zhiwen index`` and ``zhiwen kb …``: success paths, and bad input → one line, non-zero, index intact."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

Invoke = Callable[..., Result]


def one_error_line(result: Result) -> str:
    """The run failed with exactly one non-empty line on stderr (no traceback)."""
    assert result.exit_code != 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output
    return lines[0]


def index_json(zw: Invoke, *args: str) -> dict:
    result = zw("index", "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def snapshot(zw: Invoke, kb: str) -> tuple[int, list[str]]:
    info = json.loads(zw("kb", "info", kb, "--json").stdout)
    hits = json.loads(zw("search", "--kb", kb, "--json", "鸡蛋 豆腐 花生").stdout)["hits"]
    return info["revision"], [h["id"] for h in hits]


# -- success -------------------------------------------------------------------------------------
def test_index_markdown_summary(zw: Invoke, md_dir: Path) -> None:
    result = zw("index", "--kb", "recipes", str(md_dir))
    assert result.exit_code == 0, result.output
    assert "已创建并导入" in result.stdout and "段落" in result.stdout
    summary = index_json(zw, "--kb", "recipes", str(md_dir))
    assert summary["documents"] == 3 and summary["embedded"] == 0 and summary["changed"] is False
    assert summary["created"] is False and summary["revision"] == 1


def test_index_beir_csv_json_formats(zw: Invoke, tmp_path: Path) -> None:
    beir = tmp_path / "beir"
    beir.mkdir()
    lines = [
        {"_id": "p1", "title": "上海", "text": "上海是直辖市"},
        {"_id": "p2", "title": "", "text": "北京是首都"},
    ]
    (beir / "corpus.jsonl").write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines), "utf-8")
    assert index_json(zw, "--kb", "b", "--format", "beir", str(beir))["chunks"] == 2

    csv = tmp_path / "faq.csv"
    csv.write_text("q,a,topic\n怎么退货,七天内无理由退货,售后\n运费多少,满99包邮,物流\n", "utf-8")
    summary = index_json(
        zw,
        "--kb",
        "faq",
        "--format",
        "csv",
        "--option",
        "text_fields=a",
        "--option",
        "title_field=q",
        str(csv),
    )
    assert summary["documents"] == 2
    hits = json.loads(zw("search", "--kb", "faq", "--json", "--filter", "topic=物流", "包邮").stdout)["hits"]
    assert [h["chunk"]["title"] for h in hits] == ["运费多少"]

    js = tmp_path / "items.jsonl"
    js.write_text('{"id": "a", "text": "苹果"}\n{"id": "b", "text": "香蕉"}\n', "utf-8")
    assert index_json(zw, "--kb", "j", "--format", "jsonl", "-o", "id_field=id", str(js))["chunks"] == 2


def test_dense_skip_then_rerun_resumes_and_info_shows_coverage(zw: Invoke, md_dir: Path) -> None:
    summary = index_json(zw, "--kb", "r", "--dense", "skip", str(md_dir))
    assert summary["vectors_missing"] == summary["chunks"] and summary["dense_coverage"] == 0.0
    assert json.loads(zw("search", "--kb", "r", "--mode", "bm25", "--json", "豆腐").stdout)["hits"]
    info = zw("kb", "info", "r")
    assert "向量覆盖率" in info.stdout and "0.0%" in info.stdout and "补全" in info.stdout
    again = zw("index", "--kb", "r", str(md_dir))  # the same command: only the vectors are missing
    assert again.exit_code == 0 and "内容与已有索引一致" in again.stdout
    info = json.loads(zw("kb", "info", "r", "--json").stdout)
    assert info["dense_coverage"] == 1.0 and info["vectors"] == info["chunks"] and info["revision"] == 1
    assert zw("index", "--kb", "r", "--dense", "later", str(md_dir)).exit_code == 2


def test_prune_and_no_prune(zw: Invoke, md_dir: Path) -> None:
    index_json(zw, "--kb", "r", str(md_dir))
    (md_dir / "soup" / "西红柿鸡蛋汤.md").unlink()
    assert index_json(zw, "--kb", "r", "--no-prune", str(md_dir))["deleted_documents"] == 0
    assert index_json(zw, "--kb", "r", str(md_dir))["deleted_documents"] == 1


def test_kb_list_info_delete(zw: Invoke, md_dir: Path) -> None:
    assert "还没有知识库" in zw("kb", "list").stdout
    index_json(zw, "--kb", "r1", str(md_dir))
    listing = json.loads(zw("kb", "list", "--json").stdout)
    assert [k["name"] for k in listing["kbs"]] == ["r1"] and listing["kbs"][0]["embedder"] == "hash"
    assert "r1" in zw("kb", "list").stdout
    info = zw("kb", "info", "r1")
    assert info.exit_code == 0 and "文档数" in info.stdout and "documents" not in info.stdout
    assert json.loads(zw("kb", "info", "r1", "--json").stdout)["documents"] == 3
    cancelled = zw("kb", "delete", "r1", input="n\n")
    assert cancelled.exit_code != 0 and "已取消" in cancelled.stdout
    assert zw("kb", "delete", "r1", "--yes").exit_code == 0
    assert json.loads(zw("kb", "list", "--json").stdout)["kbs"] == []
    assert "知识库不存在" in one_error_line(zw("kb", "delete", "r1", "--yes"))
    assert "知识库不存在" in one_error_line(zw("kb", "info", "r1"))


# -- bad input -----------------------------------------------------------------------------------
def _bad_inputs(tmp: Path) -> dict[str, tuple[list[str], str]]:
    empty = tmp / "empty"
    empty.mkdir()
    gbk = tmp / "gbk"
    gbk.mkdir()
    (gbk / "ok.md").write_text("# 好\n内容", "utf-8")
    (gbk / "bad.md").write_bytes("# 红烧肉\n五花肉".encode("gbk"))
    bad_only = tmp / "bad_only"
    bad_only.mkdir()
    (bad_only / "空.txt").write_bytes(b"")
    beir = tmp / "beir"
    beir.mkdir()
    (beir / "corpus.jsonl").write_text('{"_id": "1", "text": "好"}\n{"_id": "2", "text": \n', "utf-8")
    jsonl = tmp / "x.jsonl"
    jsonl.write_text('{"text": "一"}\nnot json\n', "utf-8")
    return {
        "missing-path": (["--format", "markdown", str(tmp / "nope")], "路径不存在"),
        "unknown-format": (["--format", "rtf", str(empty)], "未知的格式"),
        "empty-corpus": ([str(empty)], "导入失败"),
        "only-bad-file": ([str(bad_only)], "空文件"),
        "bad-ocr": (["--ocr", "sometimes", str(gbk)], "--ocr"),
        "malformed-beir-jsonl": (["--format", "beir", str(beir)], "第 2 行"),
        "malformed-jsonl": (["--format", "jsonl", str(jsonl)], "第 2 行"),
        "bad-option": (["--option", "novalue", str(empty)], "key=value"),
        "unsupported-option": (["--option", "id_field=x", str(gbk.parent / "empty")], "导入失败"),
    }


BAD_CASES = [
    "missing-path",
    "unknown-format",
    "empty-corpus",
    "only-bad-file",
    "bad-ocr",
    "malformed-beir-jsonl",
    "malformed-jsonl",
    "bad-option",
    "unsupported-option",
]


@pytest.mark.parametrize("case", BAD_CASES)
def test_bad_input_one_line_and_no_kb_created(zw: Invoke, tmp_path: Path, case: str) -> None:
    args, expected = _bad_inputs(tmp_path)[case]
    line = one_error_line(zw("index", "--kb", "fresh", *args))
    assert expected in line, line
    assert json.loads(zw("kb", "list", "--json").stdout)["kbs"] == []


@pytest.mark.parametrize("case", BAD_CASES)
def test_failed_reindex_leaves_index_intact(zw: Invoke, md_dir: Path, tmp_path: Path, case: str) -> None:
    index_json(zw, "--kb", "r", str(md_dir))
    before = snapshot(zw, "r")
    args, _ = _bad_inputs(tmp_path)[case]
    one_error_line(zw("index", "--kb", "r", *args))
    assert snapshot(zw, "r") == before


def test_exit_codes(zw: Invoke, tmp_path: Path) -> None:
    assert zw("index", "--kb", "x", str(tmp_path / "nope")).exit_code == 2  # input error (3007)
    assert zw("index", "--kb", "../evil", str(tmp_path)).exit_code == 2


def test_conflicting_embedder_rejected(zw: Invoke, md_dir: Path) -> None:
    index_json(zw, "--kb", "r", str(md_dir))
    line = one_error_line(zw("index", "--kb", "r", "--embedder", "usem3", str(md_dir)))
    assert "hash" in line


def test_unknown_embedder(zw: Invoke, md_dir: Path) -> None:
    assert "未知的向量化模型" in one_error_line(zw("index", "--kb", "r", "--embedder", "bert", str(md_dir)))
    assert json.loads(zw("kb", "list", "--json").stdout)["kbs"] == []


def test_app_format_via_registry(zw: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An app's format from the registry: by name or sniffed by content; kb_defaults apply."""
    from zhiwen.appkit import BaseApp, registry
    from zhiwen.documents import Chunk, Document
    from zhiwen.ingest.base import Corpus

    seen: dict = {}

    def load_toy(path: Path, **options: object) -> Corpus:
        seen.update(options, path=path)
        docs = [Document(id="h1", text="浦东 两室一厅 电梯房", metadata={"district": "浦东新区"})]
        chunks = [Chunk(id="h1", doc_id="h1", text=docs[0].text, parent_id="h1", metadata=docs[0].metadata)]
        return Corpus(documents=docs, chunks=chunks, kb_defaults={"app": "toy"})

    class ToyApp(BaseApp):
        name = "toy"

        def formats(self):  # type: ignore[no-untyped-def]
            return {"toy": load_toy}

        def sniff(self, path: Path) -> str | None:
            return "toy" if (path / "toy.marker").exists() else None

    monkeypatch.setattr(registry, "load_apps", lambda: registry.AppRegistry([ToyApp()]))
    summary = index_json(
        zw, "--kb", "homes", "--format", "toy", "-o", "city=上海", "-o", "limit=5", str(tmp_path)
    )
    assert summary["chunks"] == 1 and summary["format"] == "toy"
    assert seen["city"] == "上海" and seen["limit"] == 5
    assert json.loads(zw("kb", "info", "homes", "--json").stdout)["app"] == "toy"
    (tmp_path / "toy.marker").write_text("x")
    summary = index_json(zw, "--kb", "homes2", str(tmp_path))  # --format auto: sniffed by content
    assert summary["format"] == "toy"


# -- documents of every format --------------------------------------------------------------------
def _mixed_folder(tmp: Path) -> Path:
    import docx

    folder = tmp / "资料"
    folder.mkdir()
    document = docx.Document()
    document.add_heading("住房公积金缴存制度", 1)
    document.add_heading("第一章 缴存", 2)
    document.add_paragraph("单位应当于每月发放职工工资之日起五日内缴存住房公积金。")
    document.save(str(folder / "制度"))  # no suffix: recognised by content
    (folder / "通知.html").write_text(
        "<!doctype html><html><head><title>通知</title></head><body><nav>首页 | 联系我们</nav>"
        "<article><h1>关于契税的通知</h1><p>契税税率为百分之三至百分之五，由省级人民政府确定。</p>"
        "<p>纳税人应当在办理权属登记前申报缴纳契税。</p></article><footer>版权所有</footer></body></html>",
        "utf-8",
    )
    (folder / "旧.md").write_bytes("# 红烧肉\n五花肉切块焯水".encode("gbk"))
    (folder / "坏.pdf").write_bytes(b"%PDF-1.7\n1 0 obj broken")
    (folder / "空.txt").write_bytes(b"")
    return folder


def test_mixed_folder_partial_exit_3(zw: Invoke, tmp_path: Path) -> None:
    folder = _mixed_folder(tmp_path)
    result = zw("index", "--kb", "docs", "--json", str(folder))
    assert result.exit_code == 3, result.output
    summary = json.loads(result.stdout)
    assert summary["files"] == {"ok": 3, "failed": 2, "skipped": 0} and summary["documents"] == 3
    failed = {f["file"]: f["error"] for f in summary["failed"]}
    assert "已损坏" in failed["坏.pdf"] and "空文件" in failed["空.txt"]
    info = json.loads(zw("kb", "info", "docs", "--json").stdout)
    assert info["documents"] == 3
    hits = json.loads(zw("search", "--kb", "docs", "--json", "公积金 缴存").stdout)["hits"]
    top = hits[0]["chunk"]
    assert top["doc_id"] == "制度" and top["metadata"]["format"] == "docx"
    assert top["metadata"]["section"].startswith("住房公积金缴存制度") and top["metadata"]["source"] == "制度"
    # the human form: a table of the failed files on stderr, same exit code
    table = zw("index", "--kb", "docs", str(folder))
    assert table.exit_code == 3 and "坏.pdf" in table.stderr and "空文件" in table.stderr
    assert "知识库「docs」已更新" in table.stdout


def test_gbk_markdown_and_scanned_pdf_without_ocr(zw: Invoke, tmp_path: Path) -> None:
    import io

    import img2pdf
    from PIL import Image

    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "旧.md").write_bytes("# 红烧肉\n五花肉切块焯水".encode("gbk"))
    buf = io.BytesIO()
    Image.new("L", (600, 800), 255).save(buf, format="PNG")
    (folder / "扫描.pdf").write_bytes(img2pdf.convert(buf.getvalue()))
    result = zw("index", "--kb", "k", "--json", "--ocr", "never", str(folder))
    assert result.exit_code == 3
    summary = json.loads(result.stdout)
    assert summary["documents"] == 1 and "OCR 已关闭" in summary["failed"][0]["error"]
