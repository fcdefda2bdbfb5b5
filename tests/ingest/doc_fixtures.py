"""Document fixtures built at test time from ../shared/data statutes with real tools.

Nothing here is committed as a binary: markdown statutes are rendered to HTML (markdown-it, with
site navigation and a footer around the article), printed to PDF by headless Chromium (embedded
Noto CJK fonts, Chromium's own running header with date and title, and footer with URL and
``n/N``, bookmarks from the headings), written to DOCX with python-docx, PPTX with python-pptx,
XLSX with openpyxl, and rendered page images packed into an image-only "scanned" PDF (img2pdf).
The bad files (encrypted, truncated, zip bomb, huge image, empty) are made the same way.

Used by tests/ingest, tests/cli, tests/api and bench/bench_documents.py::

    html = md_to_html(text, title)
    ok = html_to_pdf(html_file, pdf_file)          # False when Chromium is absent
"""

from __future__ import annotations

import io
import re
import shutil
import struct
import subprocess
import zipfile
import zlib
from pathlib import Path
from typing import Any

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*$")


def ocr_installed() -> bool:
    from zhiwen.ingest.ocr import ocr_available

    return ocr_available()


def chromium_bin() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def md_to_html(markdown: str, title: str) -> str:
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark").enable("table").render(markdown)
    return (
        '<!doctype html><html lang="zh-CN"><head><meta charset="utf-8">'
        f"<title>{title}</title>"
        "<style>body{font-family:'Noto Serif CJK SC','Noto Sans CJK SC',serif;font-size:12pt;}"
        "table{border-collapse:collapse}td,th{border:1px solid #000;padding:2px 6px}</style></head>"
        '<body><nav><a href="/">首页</a> | <a href="/laws">法律法规</a> | <a href="/about">联系我们</a></nav>'
        f"<main><article>{body}</article></main>"
        "<footer><p>版权所有 © 示例法规网 京ICP备00000000号</p><p>地址：北京市示例路1号</p></footer>"
        "</body></html>"
    )


def html_to_pdf(html_file: Path, pdf_file: Path, timeout: float = 120) -> bool:
    """Print ``html_file`` with headless Chromium (header/footer and bookmarks on)."""
    exe = chromium_bin()
    if exe is None:
        return False
    cmd = [
        exe,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--generate-pdf-document-outline",
        f"--print-to-pdf={pdf_file}",
        html_file.resolve().as_uri(),
    ]
    subprocess.run(cmd, capture_output=True, timeout=timeout, check=False)
    return pdf_file.is_file() and pdf_file.stat().st_size > 0


def md_to_docx(markdown: str, docx_file: Path, title: str = "") -> None:
    """Headings as Heading n, ``- `` items as List Bullet, tables as Word tables, paragraphs."""
    import docx

    document = docx.Document()
    if title:
        document.core_properties.title = title
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("|"):
            i = _add_table(document, lines, i)
        else:
            _add_line(document, lines[i].rstrip())
            i += 1
    document.save(str(docx_file))


def _add_line(document: Any, line: str) -> None:
    """One markdown line that is no table row: a heading, a bullet or a paragraph (blank lines
    and comments add nothing)."""
    m = _HEADING.match(line)
    if not line.strip() or line.startswith("<!--"):
        return
    if m:
        document.add_heading(m.group(2), level=min(len(m.group(1)), 9))
    elif line.lstrip().startswith("- "):
        document.add_paragraph(line.lstrip()[2:], style="List Bullet")
    else:
        document.add_paragraph(line.strip())


def _add_table(document: Any, lines: list[str], i: int) -> int:
    """The markdown table starting at line ``i`` as a Word table; returns the line after it."""
    rows = []
    while i < len(lines) and lines[i].startswith("|"):
        cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
        if not all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
            rows.append(cells)
        i += 1
    table = document.add_table(rows=len(rows), cols=max(len(r) for r in rows))
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            table.cell(r, c).text = cell
    return i


def sections(markdown: str) -> list[tuple[str, str]]:
    """``(heading, body)`` of every ``##``/``###`` section (the title section first)."""
    out: list[tuple[str, str]] = []
    head, body = "", []
    for line in markdown.splitlines():
        m = _HEADING.match(line)
        if m:
            if body or head:
                out.append((head, "\n".join(body).strip()))
            head, body = m.group(2), []
        elif not line.startswith("<!--"):
            body.append(line)
    out.append((head, "\n".join(body).strip()))
    return [(h, b) for h, b in out if b]


def md_to_pptx(markdown: str, pptx_file: Path, title: str) -> None:
    """One slide per section: its heading as the slide title, its paragraphs as the body."""
    from pptx import Presentation
    from pptx.util import Inches, Pt

    prs = Presentation()
    prs.core_properties.title = title
    for head, body in sections(markdown):
        slide = prs.slides.add_slide(prs.slide_layouts[5])  # title only
        slide.shapes.title.text = head or title
        box = slide.shapes.add_textbox(Inches(0.5), Inches(1.5), Inches(9), Inches(5))
        frame = box.text_frame
        frame.word_wrap = True
        for k, para in enumerate(p for p in body.split("\n\n") if p.strip()):
            p = frame.paragraphs[0] if k == 0 else frame.add_paragraph()
            p.text = para.strip()
            p.font.size = Pt(12)
    prs.save(str(pptx_file))


def write_xlsx(rows_by_sheet: dict[str, list[list[object]]], xlsx_file: Path) -> None:
    import openpyxl

    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for sheet, rows in rows_by_sheet.items():
        ws = wb.create_sheet(sheet)
        for row in rows:
            ws.append(row)
    wb.save(str(xlsx_file))


def scan_pdf(
    pdf_file: Path,
    out_file: Path,
    *,
    scale: float = 2.0,
    pages: list[int] | None = None,
    crop: float | None = None,
) -> None:
    """An image-only PDF of ``pdf_file``'s pages (grayscale JPEG, like a scanner's); ``crop`` keeps
    the top share of each page (a short page keeps test-time OCR fast)."""
    import img2pdf
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(pdf_file))
    images: list[bytes] = []
    try:
        for index in pages if pages is not None else range(len(pdf)):
            img = pdf[index].render(scale=scale).to_pil().convert("L")
            if crop:
                img = img.crop((0, 0, img.width, int(img.height * crop)))
            buf = io.BytesIO()
            img.save(buf, format="JPEG", quality=80)
            images.append(buf.getvalue())
    finally:
        pdf.close()
    dpi = int(72 * scale)
    out_file.write_bytes(img2pdf.convert(images, layout_fun=img2pdf.get_fixed_dpi_layout_fun((dpi, dpi))))


def pdf_page_texts(pdf_file: Path) -> list[str]:
    """The raw text of every page (ground truth for page checks), whitespace removed."""
    import pypdfium2 as pdfium

    from zhiwen.ingest.normalize import normalize_text

    pdf = pdfium.PdfDocument(str(pdf_file))
    try:
        return [
            re.sub(r"\s+", "", normalize_text(pdf[i].get_textpage().get_text_range()))
            for i in range(len(pdf))
        ]
    finally:
        pdf.close()


# -- bad files -------------------------------------------------------------------------------------
def encrypt_pdf(pdf_file: Path, out_file: Path) -> None:
    import pikepdf

    with pikepdf.open(str(pdf_file)) as pdf:
        pdf.save(str(out_file), encryption=pikepdf.Encryption(owner="owner", user="secret", R=6))


def truncate(src: Path, out_file: Path, keep: float = 0.4) -> None:
    data = src.read_bytes()
    out_file.write_bytes(data[: int(len(data) * keep)])


def zip_bomb_docx(out_file: Path, megabytes: int = 64) -> None:
    """A .docx-looking zip whose document.xml inflates ~1000×."""
    with zipfile.ZipFile(out_file, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        with zf.open("word/document.xml", "w", force_zip64=True) as fh:
            block = b"\0" * (1 << 20)
            for _ in range(megabytes):
                fh.write(block)


def huge_png(out_file: Path, width: int = 100_000, height: int = 100_000) -> None:
    """A tiny PNG whose header claims ``width × height`` pixels (a decompression bomb)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    idat = zlib.compress(b"\0" * 1024)
    out_file.write_bytes(
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
    )


def statute(shared: Path, stem_prefix: str) -> Path:
    matches = sorted((shared / "cn_law_subset").glob(f"{stem_prefix}*.md"))
    if not matches:
        raise FileNotFoundError(stem_prefix)
    return matches[0]


def build_statute_formats(md_file: Path, out_dir: Path, *, pdf: bool = True) -> dict[str, Path]:
    """``{kind: path}`` of one statute as markdown, html, docx and (with Chromium) pdf."""
    out_dir.mkdir(parents=True, exist_ok=True)
    text = md_file.read_text("utf-8")
    stem = md_file.stem.split("(")[0]
    out: dict[str, Path] = {"markdown": out_dir / f"{stem}.md"}
    out["markdown"].write_text(text, "utf-8")
    html = out_dir / f"{stem}.html"
    html.write_text(md_to_html(text, stem), "utf-8")
    out["html"] = html
    docx_file = out_dir / f"{stem}.docx"
    md_to_docx(text, docx_file, title=stem)
    out["docx"] = docx_file
    if pdf:
        pdf_file = out_dir / f"{stem}.pdf"
        if html_to_pdf(html, pdf_file):
            out["pdf"] = pdf_file
    return out
