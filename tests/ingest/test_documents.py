"""Document loaders: detection by content, every format, provenance, normalization, bad files."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from doc_fixtures import (
    encrypt_pdf,
    huge_png,
    md_to_pptx,
    ocr_installed,
    pdf_page_texts,
    truncate,
    write_xlsx,
    zip_bomb_docx,
)
from hypothesis import given
from hypothesis import strategies as st

from zhiwen.appkit.app import Citation
from zhiwen.config import Settings
from zhiwen.documents import SearchHit
from zhiwen.ingest import load_corpus
from zhiwen.ingest.detect import detect_kind
from zhiwen.ingest.files import file_documents, load_files
from zhiwen.ingest.limits import FileRejected, IngestLimits
from zhiwen.ingest.normalize import RADICAL_SUPPLEMENT, join_lines, normalize_text
from zhiwen.ingest.pdf import load_pdf

needs_ocr = pytest.mark.skipif(
    not ocr_installed(),
    reason="rapidocr-onnxruntime not installed (zhiwen[ocr]; bash scripts/test.sh installs it)",
)


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def settings_for(tmp_path: Path, **ingest: object) -> Settings:
    return Settings(home=tmp_path / "home", embedding={"provider": "hash"}, ingest=ingest)


# -- normalization ---------------------------------------------------------------------------------
def test_radicals_become_ideographs() -> None:
    assert normalize_text("中华⼈⺠共和国⼊境") == "中华人民共和国入境"  # Kangxi ⼈⼊ and supplement ⺠
    assert normalize_text("⻔⻓⻅⾦") == "门长见金"
    assert normalize_text("第一条，（一）“甲”") == "第一条，（一）“甲”"  # full-width punctuation kept
    assert normalize_text("a\u00adb\u200bc\ufeff") == "abc"


@given(
    st.text(
        alphabet=st.sampled_from([*RADICAL_SUPPLEMENT, *map(chr, range(0x2F00, 0x2FD6)), "人", "，", "a"])
    )
)
def test_normalize_removes_every_radical(text: str) -> None:
    out = normalize_text(text)
    assert not any(0x2E80 <= ord(c) <= 0x2FDF for c in out if c != "\u2e9a")
    assert normalize_text(out) == out


def test_join_lines() -> None:
    assert join_lines(["维护中华", "人民共和国的主权。"]) == "维护中华人民共和国的主权。"
    assert join_lines(["the visa", "policy"]) == "the visa policy"
    assert join_lines(["inter-", "national"]) == "international"


# -- detection -------------------------------------------------------------------------------------
def test_detect_by_content_not_name(tmp_path: Path, law_formats: dict[str, Path]) -> None:
    cases = {"docx": law_formats["docx"], "html": law_formats["html"], "markdown": law_formats["markdown"]}
    for kind, src in cases.items():
        disguised = tmp_path / f"{kind}.bin"
        shutil.copy(src, disguised)
        assert detect_kind(disguised) == (kind if kind != "markdown" else "markdown")
    (tmp_path / "gbk.dat").write_bytes("第一条 纳税人应当缴纳契税。".encode("gbk"))
    assert detect_kind(tmp_path / "gbk.dat") == "text"
    (tmp_path / "empty.pdf").write_bytes(b"")
    assert detect_kind(tmp_path / "empty.pdf") == "empty"
    (tmp_path / "old.doc").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600)
    assert detect_kind(tmp_path / "old.doc") == "ole"
    huge_png(tmp_path / "x.txt")
    assert detect_kind(tmp_path / "x.txt") == "image"


def test_detect_pdf_named_txt(tmp_path: Path, law_pdf: Path) -> None:
    shutil.copy(law_pdf, tmp_path / "notes.txt")
    assert detect_kind(tmp_path / "notes.txt") == "pdf"
    [result] = load_files(tmp_path, settings=settings_for(tmp_path))
    assert result.status == "ok" and result.kind == "pdf" and result.pages == 3


# -- PDF -------------------------------------------------------------------------------------------
def test_pdf_text_headers_footers_headings_and_joined_lines(
    law_pdf: Path, law_formats: dict[str, Path]
) -> None:
    parsed = load_pdf(law_pdf, law_pdf.name, IngestLimits(), ocr="never")
    text = "\n\n".join(t for _, t in parsed.blocks)
    assert parsed.pages == 3 and parsed.title == "契税法"
    assert "file://" not in text and not re.search(r"\d+/3\b", text)  # Chromium's footer
    assert not re.search(r"\d{1,2}/\d{1,2}/\d{2},", text)  # Chromium's dated header
    assert "# 中华人民共和国契税法" in text  # the bookmark became a heading
    # every article paragraph of the original appears whole: lines broken mid-sentence joined
    original = law_formats["markdown"].read_text("utf-8")
    paragraphs = [p.strip() for p in original.split("\n\n") if p.strip().startswith("第") and len(p) > 60]
    assert paragraphs and all(p in text for p in paragraphs)


def test_pdf_chunks_carry_the_right_pages(law_pdf: Path) -> None:
    [result] = load_files(law_pdf, settings=Settings(embedding={"provider": "hash"}))
    docs, chunks = file_documents([result], max_chars=300, overlap=30)
    truth = pdf_page_texts(law_pdf)
    assert docs[0].metadata["pages"] == 3 and docs[0].metadata["format"] == "pdf"
    for chunk in chunks:
        page, end = chunk.metadata["page"], chunk.metadata["page_end"]
        assert 1 <= page <= end <= 3 and chunk.metadata["source"] == law_pdf.name
        # the chunk's first and last 12 characters lie on its first and last page
        body = squash(re.sub(r"^#+ .*$", "", chunk.text, flags=re.MULTILINE))
        if len(body) > 30:
            assert body[:12] in truth[page - 1], (chunk.id, page, body[:12])
            assert body[-12:] in truth[end - 1], (chunk.id, end, body[-12:])
    assert any(c.metadata["page"] == 3 for c in chunks)


def test_pdf_tables_and_font_size_headings(table_pdf: Path) -> None:
    parsed = load_pdf(table_pdf, table_pdf.name, IngestLimits(), ocr="never")
    text = parsed.blocks[0][1]
    assert "| 地区 | 税率 | 备注 |" in text and "| 北京市 | 百分之三 | 普通住宅 |" in text
    assert re.search(r"^#+ 契税税率表$", text, re.MULTILINE)  # no outline: headings by font size
    assert re.search(r"^#+ 一、适用范围$", text, re.MULTILINE)


def test_citation_label_from_pdf_chunk(law_pdf: Path) -> None:
    [result] = load_files(law_pdf, settings=Settings(embedding={"provider": "hash"}))
    _, chunks = file_documents([result], max_chars=300, overlap=30)
    last = chunks[-1]
    cite = Citation.from_hit(SearchHit(chunk=last, score=1.0), kb="laws")
    assert cite.source == law_pdf.name and cite.page == last.metadata["page"]
    assert cite.label.startswith("《契税法》第") and cite.label.endswith("页")


# -- Office, HTML, text ----------------------------------------------------------------------------
def test_docx_headings_lists_tables(tmp_path: Path, law_formats: dict[str, Path]) -> None:
    import docx

    document = docx.Document()
    document.add_heading("员工考勤制度", 1)
    document.add_heading("第一章 总则", 2)
    document.add_paragraph("为规范考勤管理，制定本制度。")
    document.add_paragraph("迟到三次扣除全勤奖", style="List Bullet")
    document.add_paragraph("旷工一天扣除三天工资", style="List Bullet")
    table = document.add_table(rows=2, cols=2)
    for (r, c), text in zip([(0, 0), (0, 1), (1, 0), (1, 1)], ["假别", "天数", "年假", "5"], strict=True):
        table.cell(r, c).text = text
    document.save(str(tmp_path / "制度.docx"))
    shutil.copy(law_formats["docx"], tmp_path / "契税法.docx")
    results = {r.source: r for r in load_files(tmp_path, settings=settings_for(tmp_path))}
    text = results["制度.docx"].parsed.blocks[0][1]  # type: ignore[union-attr]
    assert "# 员工考勤制度" in text and "## 第一章 总则" in text
    assert "- 迟到三次扣除全勤奖\n- 旷工一天扣除三天工资" in text
    assert "| 假别 | 天数 |" in text and "| 年假 | 5 |" in text
    _, chunks = file_documents(list(results.values()), max_chars=800, overlap=80)
    sections = {c.metadata["section"] for c in chunks if c.doc_id == "契税法.docx"}
    assert "中华人民共和国契税法" in sections
    assert all("page" not in c.metadata for c in chunks)


def test_pptx_one_section_per_slide(tmp_path: Path, law_dir: Path) -> None:
    from doc_fixtures import statute

    md = statute(law_dir, "出境入境管理法").read_text("utf-8")
    md_to_pptx(md, tmp_path / "出入境.pptx", "出境入境管理法")
    [result] = load_files(tmp_path, settings=settings_for(tmp_path))
    assert result.status == "ok" and result.pages and result.pages > 5
    _, chunks = file_documents([result], max_chars=800, overlap=80)
    by_slide = {c.metadata["page"]: c for c in chunks}
    assert len(by_slide) == result.pages
    visa = next(c for c in chunks if "第一节 签证" in c.metadata["section"])
    assert "第十五条" in visa.text
    cite = Citation.from_hit(SearchHit(chunk=visa, score=1.0))
    assert cite.label == f"《出境入境管理法》第{visa.metadata['page']}张幻灯片"


def test_xlsx_one_record_per_row(tmp_path: Path) -> None:
    write_xlsx(
        {
            "税率": [
                ["地区", "税率", "备注"],
                ["北京", 0.03, "普通住宅"],
                [None, None, None],
                ["上海", 0.03, None],
            ],
            "空表": [],
        },
        tmp_path / "税率.xlsx",
    )
    [result] = load_files(tmp_path, settings=settings_for(tmp_path))
    _, chunks = file_documents([result], max_chars=800, overlap=80)
    assert [c.text.split("\n\n")[-1] for c in chunks] == [
        "地区：北京；税率：0.03；备注：普通住宅",
        "地区：上海；税率：0.03",
    ]
    assert {c.metadata["section"] for c in chunks} == {"税率"} and chunks[0].metadata["page"] == 1


def test_html_main_content_only(law_formats: dict[str, Path]) -> None:
    [result] = load_files(law_formats["html"], settings=Settings(embedding={"provider": "hash"}))
    text = result.parsed.blocks[0][1]  # type: ignore[union-attr]
    assert "第一条" in text and "# 中华人民共和国契税法" in text
    assert "联系我们" not in text and "版权所有" not in text and "京ICP备" not in text


def test_text_encodings(tmp_path: Path) -> None:
    body = "关于做好住房公积金缴存工作的通知\n\n第一条 单位应当按时足额缴存住房公积金。"
    (tmp_path / "gbk.txt").write_bytes(body.encode("gbk"))
    (tmp_path / "gb18030.txt").write_bytes((body + "𠮷").encode("gb18030"))
    (tmp_path / "utf16.txt").write_bytes(body.encode("utf-16"))
    (tmp_path / "旧.md").write_bytes(("# 通知\n\n" + body).encode("gbk"))
    results = load_files(tmp_path, settings=settings_for(tmp_path))
    assert all(r.status == "ok" for r in results), [r.error for r in results]
    for r in results:
        assert "单位应当按时足额缴存住房公积金" in r.parsed.blocks[0][1]  # type: ignore[union-attr]
    assert {r.source: r.kind for r in results}["旧.md"] == "markdown"


# -- bad files -------------------------------------------------------------------------------------
def test_bad_files_fail_alone_with_a_reason(
    tmp_path: Path, law_formats: dict[str, Path], law_pdf: Path
) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    shutil.copy(law_formats["docx"], folder / "good.docx")
    shutil.copy(law_formats["html"], folder / "good.html")
    encrypt_pdf(law_pdf, folder / "加密.pdf")
    truncate(law_pdf, folder / "截断.pdf")
    truncate(law_formats["docx"], folder / "截断.docx", keep=0.5)
    zip_bomb_docx(folder / "炸弹.docx", megabytes=64)
    huge_png(folder / "巨图.png")
    (folder / "空.txt").write_bytes(b"")
    (folder / "旧格式.doc").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600)
    from doc_fixtures import scan_pdf

    scan_pdf(law_pdf, folder / "扫描.pdf", scale=1.0, pages=[0])
    (folder / "archive.zip").write_bytes(b"PK\x05\x06" + b"\0" * 18)
    results = {r.source: r for r in load_files(folder, ocr="never", settings=settings_for(tmp_path))}
    assert results["good.docx"].status == "ok" and results["good.html"].status == "ok"
    assert results["archive.zip"].status == "skipped"
    expected = {
        "加密.pdf": "已加密",
        "截断.pdf": "已损坏或不完整",
        "截断.docx": "已损坏或不完整",
        "炸弹.docx": "压缩炸弹",
        "巨图.png": "像素过多",
        "空.txt": "空文件",
        "旧格式.doc": "旧版 Office",
        "扫描.pdf": "OCR 已关闭",
    }
    for name, reason in expected.items():
        r = results[name]
        assert r.status == "failed" and r.error and r.error.startswith(f"「{name}」") and reason in r.error, r
    docs, _ = file_documents(list(results.values()), max_chars=800, overlap=80)
    assert sorted(d.id for d in docs) == ["good.docx", "good.html"]


def test_limits_are_settings(tmp_path: Path, law_formats: dict[str, Path]) -> None:
    shutil.copy(law_formats["docx"], tmp_path / "a.docx")
    [r] = load_files(tmp_path, settings=settings_for(tmp_path, max_file_bytes=1000))
    assert r.status == "failed" and "文件过大" in (r.error or "")
    md_to_pptx("# 标题\n\n## 一\n\n甲\n\n## 二\n\n乙\n\n## 三\n\n丙", tmp_path / "b.pptx", "b")
    (tmp_path / "a.docx").unlink()
    [r] = load_files(tmp_path, settings=settings_for(tmp_path, max_pages=2))
    assert r.status == "failed" and "页数过多" in (r.error or "")


def test_forced_format_and_errors(tmp_path: Path, law_formats: dict[str, Path]) -> None:
    shutil.copy(law_formats["html"], tmp_path / "a.html")
    corpus = load_corpus(tmp_path, "html")
    assert corpus.documents[0].metadata["format"] == "html" and corpus.chunks
    with pytest.raises(Exception) as exc:
        load_corpus(tmp_path, "pdf")
    assert "内容不是 PDF" in str(exc.value)
    with pytest.raises(FileRejected):
        raise FileRejected("x.pdf", "是空文件")


# -- OCR -------------------------------------------------------------------------------------------
def cer(reference: str, hypothesis: str) -> float:
    from rapidfuzz.distance import Levenshtein

    ref, hyp = squash(reference), squash(hypothesis)
    return Levenshtein.distance(ref, hyp) / max(1, len(ref))


@needs_ocr
def test_scanned_pdf_ocr_auto_with_cache(
    tmp_path: Path, scanned_pdf: Path, law_pdf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = settings_for(tmp_path, ocr_threads=2)
    [first] = load_files(scanned_pdf, settings=settings)
    assert first.status == "ok" and first.parsed and first.parsed.ocr_pages == 1, first.error
    text = first.parsed.blocks[0][1]
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(law_pdf))  # the same region's text layer is the known text
    page = pdf[0]
    height = page.get_height()
    reference = page.get_textpage().get_text_bounded(0, height * (1 - 0.32), page.get_width(), height)
    pdf.close()
    reference = re.sub(r"\d+/\d+/\d+,.*?M", "", normalize_text(reference))  # the dated header line
    assert cer(reference, text) < 0.1, text
    assert "第一条" in text and "契税" in text
    from zhiwen.ingest.ocr import OcrEngine

    def no_second_ocr(self: OcrEngine) -> None:
        raise RuntimeError("the page was OCRed again")

    monkeypatch.setattr(OcrEngine, "_engine", no_second_ocr)
    [again] = load_files(scanned_pdf, settings=settings)  # cached by page hash: no OCR again
    assert again.parsed and again.parsed.blocks == first.parsed.blocks, again.error
    assert list((settings.home / "cache" / "ocr").rglob("*.json"))


@needs_ocr
def test_image_file_ocr(tmp_path: Path, law_pdf: Path) -> None:
    import pypdfium2 as pdfium

    settings = settings_for(tmp_path)
    tmp_path = tmp_path / "in"
    tmp_path.mkdir()

    pdf = pdfium.PdfDocument(str(law_pdf))
    img = pdf[0].render(scale=2).to_pil()
    pdf.close()
    img.crop((0, int(img.height * 0.08), img.width, int(img.height * 0.17))).save(tmp_path / "photo.jpg")
    [r] = load_files(tmp_path, settings=settings)
    assert r.status == "ok" and r.kind == "image" and r.parsed and "契税" in r.parsed.blocks[0][1]
    [off] = load_files(tmp_path, ocr="never", settings=settings)
    assert off.status == "failed" and "OCR 已关闭" in (off.error or "")


# -- format parity (small; bench/bench_documents.py runs all 16 statutes) ------------------------
def test_format_parity_on_questions(tmp_path: Path, law_formats: dict[str, Path]) -> None:
    import json

    from zhiwen.kb import close_all, open_kb

    if "pdf" not in law_formats:
        pytest.skip("chromium not installed (bash scripts/test.sh --system)")
    questions = [
        q
        for line in (Path(__file__).resolve().parents[2] / "bench" / "documents_questions.jsonl")
        .read_text("utf-8")
        .splitlines()
        if line.strip() and (q := json.loads(line))["doc"] == "契税法"
    ]
    assert len(questions) >= 5
    settings = settings_for(tmp_path)
    recall: dict[str, float] = {}
    try:
        for kind, path in law_formats.items():
            [result] = load_files(path, settings=settings)
            docs, chunks = file_documents([result], max_chars=800, overlap=80)
            kb = open_kb(f"p_{kind}", settings=settings, create=True, embedder="hash")
            kb.index_documents(docs, chunks=chunks, progress=False)
            found = 0
            for q in questions:
                hits = kb.search(q["q"], mode="bm25", top_k=10)
                found += any(squash(q["evidence"]) in squash(h.chunk.text) for h in hits)
            recall[kind] = found / len(questions)
    finally:
        close_all()
    assert recall["markdown"] == 1.0
    assert all(recall[k] >= recall["markdown"] - 0.02 for k in recall), recall


def test_running_headers_footers_dropped_even_when_ocr_varies() -> None:
    from zhiwen.ingest.pdf import Line, PageLines, drop_headers_footers

    def page(i: int, header: str, footer: str) -> PageLines:
        lines = [
            Line(header, 50, 20, 300, 32, 9),
            Line(f"第{i}条 正文内容在页面中间，不应被删除。", 50, 300, 500, 312, 12),
            Line(footer, 50, 770, 300, 782, 9),
            Line(f"- {i} -", 290, 755, 310, 767, 9),
        ]
        return PageLines(i - 1, 612, 792, lines)

    pages = [
        page(1, "某某集团内部资料 严禁外传", "某某集团办公室印发 第1页 共3页"),
        page(2, "某某集团内部资料 严禁外传", "某某集团办公室印发 第2页 共3页"),
        page(3, "某某集团内部资枓 严禁外传", "某某集团办公室印友 第3页 共3页"),  # OCR misreads
    ]
    drop_headers_footers(pages)
    assert [[line.text for line in p.lines] for p in pages] == [
        [f"第{i}条 正文内容在页面中间，不应被删除。"] for i in (1, 2, 3)
    ]
    single = [page(1, "内部资料", "http://example.com/doc 1/1")]
    drop_headers_footers(single)
    assert [line.text for line in single[0].lines] == ["内部资料", "第1条 正文内容在页面中间，不应被删除。"]


def test_ocr_boxes_become_reading_order_lines() -> None:
    from zhiwen.ingest.layout import ocr_lines_to_lines
    from zhiwen.ingest.ocr import OcrLine

    boxes = [
        OcrLine("第三条契税税率为3一5%。", 100, 200, 900, 230),
        OcrLine("（二）", 100, 100, 160, 128),
        OcrLine("房屋买卖；", 170, 102, 400, 130),
    ]
    lines = ocr_lines_to_lines(boxes, scale=2.0)
    assert [line.text for line in lines] == ["（二）房屋买卖；", "第三条契税税率为3—5%。"]
    assert lines[0].top == 50 and lines[1].bottom == 115
