"""Parsing has a memory budget (#29): XML parsed whole is capped before parsing, text per file is
capped for every loader, and memory goes back to the system after a heavy file."""

from __future__ import annotations

import random
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from doc_fixtures import md_to_docx, md_to_pptx, write_xlsx

from zhiwen.ingest import files as files_module
from zhiwen.ingest.files import parse_one
from zhiwen.ingest.limits import IngestLimits, parsed_whole
from zhiwen.ingest.memory import release_memory
from zhiwen.ingest.model import ParsedFile

LIMITS = IngestLimits()


def parse(path: Path, limits: IngestLimits = LIMITS) -> Any:
    return parse_one(path, path.name, kind=None, limits=limits, ocr="never", engine=None)


def swollen_docx(out: Path, paragraphs: int) -> None:
    """A small .docx whose document.xml is many times larger unpacked (varied text, so it is not
    refused as a zip bomb by its compression ratio)."""
    base = out.with_name("base.docx")
    md_to_docx("# 标题\n\n正文", base)
    rng = random.Random(7)
    pool = ["".join(chr(0x4E00 + rng.randrange(3000)) for _ in range(30)) for _ in range(60)]
    body = "".join(f"<w:p><w:r><w:t>{rng.choice(pool)}</w:t></w:r></w:p>" for _ in range(paragraphs))
    with zipfile.ZipFile(base) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "word/document.xml":
                xml = data.decode()
                cut = xml.rindex("<w:sectPr")
                data = (xml[:cut] + body + xml[cut:]).encode()
            zout.writestr(item, data, compress_type=zipfile.ZIP_DEFLATED)


def test_swollen_docx_is_refused_unparsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "大文档.docx"
    swollen_docx(path, 40_000)  # ~4 MB of XML in a file a fraction of that
    with zipfile.ZipFile(path) as zf:
        xml = zf.getinfo("word/document.xml")
        assert xml.file_size > 3 * 1024 * 1024 and path.stat().st_size < xml.file_size / 5
    limits = replace(LIMITS, max_xml_bytes=1024 * 1024)

    import docx

    def never(*_: Any, **__: Any) -> Any:
        raise AssertionError("python-docx must not open a file over the XML budget")

    monkeypatch.setattr(docx, "Document", never)
    result = parse(path, limits)
    assert result.status == "failed"
    assert "大文档.docx" in result.error and "XML" in result.error and "1.0 MB" in result.error
    monkeypatch.undo()
    assert parse(path).status == "ok"  # the default budget (40 MB) lets it through


def test_xml_budget_counts_what_each_library_parses_whole() -> None:
    assert parsed_whole("word/document.xml", "docx")
    assert parsed_whole("ppt/slides/slide1.xml", "pptx")
    assert parsed_whole("xl/sharedStrings.xml", "xlsx")
    assert not parsed_whole("xl/worksheets/sheet1.xml", "xlsx")  # read-only openpyxl streams it
    assert not parsed_whole("word/media/image1.png", "docx")


def test_text_is_capped_for_text_files(tmp_path: Path) -> None:
    path = tmp_path / "长文.txt"
    path.write_text("第一条 规定内容。\n" * 2000, encoding="utf-8")
    limits = replace(LIMITS, max_text_chars=1000)
    result = parse(path, limits)
    assert result.status == "ok"
    assert 900 < sum(len(t) for _, t in result.parsed.blocks) <= 1000
    assert result.parsed.truncated
    assert any("1000 字符" in w and "长文.txt" in w for w in result.warnings)


def test_text_is_capped_for_office_files(tmp_path: Path) -> None:
    limits = replace(LIMITS, max_text_chars=1000)
    docx_file = tmp_path / "制度.docx"
    md_to_docx("# 制度\n\n" + "\n\n".join(f"第{i}条 员工应当遵守考勤规定。" for i in range(400)), docx_file)
    pptx_file = tmp_path / "汇报.pptx"
    md_to_pptx("\n\n".join(f"## 第{i}页\n\n内容要点说明文字" * 3 for i in range(200)), pptx_file, "汇报")
    xlsx_file = tmp_path / "名单.xlsx"
    rows: list[list[object]] = [["姓名", "部门"]]
    rows += [[f"员工{i}", "研发部门"] for i in range(2000)]
    write_xlsx({"表一": rows}, xlsx_file)
    for path in (docx_file, pptx_file, xlsx_file):
        result = parse(path, limits)
        assert result.status == "ok", result.error
        assert sum(len(t) for _, t in result.parsed.blocks) <= 1000
        assert result.parsed.truncated and result.warnings
        assert parse(path).parsed.truncated is False  # within the default cap nothing is cut


def test_parsed_file_budget_drops_and_warns_once() -> None:
    parsed = ParsedFile(source="a.txt", format="text", text_budget=10)
    parsed.add("一二三四五六")
    parsed.add("七八九十十一十二")
    parsed.add("更多")
    assert [t for _, t in parsed.blocks] == ["一二三四五六", "七八九十"]
    assert parsed.full and len(parsed.warnings) == 1


def test_html_over_the_budget_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "页面.html"
    path.write_text("<html><body>" + "<p>段落内容</p>" * 20_000 + "</body></html>", encoding="utf-8")
    result = parse(path, replace(LIMITS, max_xml_bytes=64 * 1024))
    assert result.status == "failed" and "网页过大" in result.error


def test_memory_is_released_after_a_heavy_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(files_module, "release_memory", lambda: calls.append(1))
    path = tmp_path / "小.txt"
    path.write_text("内容", encoding="utf-8")
    parse(path)
    assert calls == []  # a small file costs no collection
    monkeypatch.setattr(files_module, "HEAVY_BYTES", 1)
    parse(path)
    assert calls == [1]
    release_memory()  # the real one runs anywhere (malloc_trim where glibc has it)
