"""PDF loader: text layer with pypdfium2, OCR for pages without one, page numbers on every block.

Why pypdfium2 (PDFium, Chrome's PDF engine): on the 16 statutes printed by Chromium (134 pages)
it read 34 ms/page against 689 ms for pdfplumber and 406 ms for pdfminer.six, and gave the
ideographs (人, 民) where both pdfminer-based readers emitted 12,523 Kangxi/supplement radicals
(⼈ ⺠), so only 3 % of the evidence phrases were found verbatim (bench/bench_documents.py).
pdfplumber is used only to find tables, on pages that draw ruling lines.

Per page: characters → lines (with position and font size) → layout (:mod:`.layout`: running
headers/footers and page numbers dropped, headings from the outline or font sizes, wrapped lines
joined) → tables as markdown. A page whose text layer is missing or garbage is OCR'd
(``ocr="auto"``) in a bounded pool, cached by page-image hash (:mod:`.ocr`).

Example::

    >>> parsed = load_pdf(Path("出境入境管理法.pdf"), "出境入境管理法.pdf", limits, ocr="auto")
    >>> parsed.pages, parsed.blocks[3][0]
    (14, 2)
"""

from __future__ import annotations

import logging
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from zhiwen.ingest.layout import (
    Line,
    PageLines,
    drop_headers_footers,
    mark_outline_headings,
    mark_size_headings,
    ocr_lines_to_lines,
    page_markdown,
    text_layer_usable,
)
from zhiwen.ingest.limits import FileRejected, IngestLimits, check_pages, check_pixels
from zhiwen.ingest.model import PREVIEW_ROWS, ParsedFile
from zhiwen.ingest.normalize import normalize_text
from zhiwen.ingest.ocr import INSTALL_HINT, OcrEngine
from zhiwen.tables.model import Table, table_from_grid

__all__ = ["Line", "PageLines", "drop_headers_footers", "load_image", "load_pdf", "page_markdown"]

log = logging.getLogger(__name__)


# -- text layer ------------------------------------------------------------------------------------
def _page_lines(page: Any, textpage: Any) -> list[Line]:
    """Lines of a page from PDFium's characters (PDFium marks line ends with generated CR/LF)."""
    import pypdfium2.raw as raw

    height = page.get_height()
    lines: list[Line] = []
    buf: list[str] = []
    boxes: list[tuple[float, float, float, float]] = []
    sizes: list[float] = []

    def flush() -> None:
        text = "".join(buf).strip()
        if text and boxes:
            x0 = min(b[0] for b in boxes)
            x1 = max(b[2] for b in boxes)
            top = height - max(b[3] for b in boxes)
            bottom = height - min(b[1] for b in boxes)
            size = statistics.median(sizes) if sizes else 0.0
            lines.append(Line(text, x0, top, x1, bottom, size))
        buf.clear()
        boxes.clear()
        sizes.clear()

    count = textpage.count_chars()
    pending_high = 0
    for i in range(count):
        code = raw.FPDFText_GetUnicode(textpage, i)
        if code in (0x0D, 0x0A):
            if code == 0x0A or (i + 1 < count and raw.FPDFText_GetUnicode(textpage, i + 1) != 0x0A):
                flush()
            continue
        if 0xD800 <= code <= 0xDBFF:  # a surrogate pair: characters outside the BMP
            pending_high = code
            continue
        if 0xDC00 <= code <= 0xDFFF and pending_high:
            code = 0x10000 + ((pending_high - 0xD800) << 10) + (code - 0xDC00)
            pending_high = 0
        ch = chr(code) if code else ""
        buf.append(ch)
        if ch.strip() and not raw.FPDFText_IsGenerated(textpage, i):
            box = textpage.get_charbox(i)
            if box[2] > box[0] or box[3] > box[1]:
                boxes.append(box)
                sizes.append(float(raw.FPDFText_GetFontSize(textpage, i)))
    flush()
    return lines


def _find_tables(path: Path, indices: list[int]) -> dict[int, list[tuple[float, float, Table]]]:
    """Tables (top, bottom, table) of the pages that draw lines, found by pdfplumber."""
    found: dict[int, list[tuple[float, float, Table]]] = {}
    if not indices:
        return found
    try:
        import pdfplumber
    except ImportError:
        return found
    logging.getLogger("pdfminer").setLevel(logging.ERROR)
    with pdfplumber.open(str(path)) as pdf:
        for index in indices:
            try:
                for table in pdf.pages[index].find_tables():
                    rows = table.extract()
                    if len(rows) >= 2 and max(len(r) for r in rows) >= 2:
                        kept = table_from_grid(
                            [[normalize_text(c or "") for c in r] for r in rows], page=index + 1
                        )
                        if kept is not None:
                            found.setdefault(index, []).append((table.bbox[1], table.bbox[3], kept))
            except Exception as exc:  # a table we cannot read stays as text lines
                log.debug("table detection failed on page %d of %s: %s", index + 1, path, exc)
    return found


def _heading_above(page: PageLines, top: float) -> str:
    """The last heading line above ``top`` on the page: a table's caption."""
    above = [line for line in page.lines if line.heading and line.bottom <= top + 1]
    return above[-1].text.strip() if above else ""


def _draws_lines(page: Any) -> bool:
    import pypdfium2.raw as raw

    for n, _ in enumerate(page.get_objects(filter=[raw.FPDF_PAGEOBJ_PATH], max_depth=3), start=1):
        if n >= 6:
            return True
    return False


# -- the loader ------------------------------------------------------------------------------------
def _open(path: Path, name: str) -> Any:
    import pypdfium2 as pdfium

    try:
        return pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        msg = str(exc).lower()
        if "password" in msg:
            raise FileRejected(name, "已加密（需要密码才能打开），请先解除密码保护再导入", str(exc)) from exc
        raise FileRejected(name, "文件已损坏或不完整，无法解析为 PDF", str(exc)) from exc


def _outline(pdf: Any) -> list[tuple[int, str, int | None]]:
    out: list[tuple[int, str, int | None]] = []
    try:
        for item in pdf.get_toc(max_depth=8):
            dest = item.get_dest()
            out.append((item.level, item.get_title() or "", dest.get_index() if dest is not None else None))
    except Exception as exc:  # a broken outline is no reason to refuse the text
        log.debug("outline unreadable: %s", exc)
    return out


def load_pdf(
    path: Path,
    name: str,
    limits: IngestLimits,
    *,
    ocr: str = "auto",
    ocr_engine: Callable[[], OcrEngine] | None = None,
    ocr_scale: float = 2.0,
    on_page: Callable[[int, int], None] | None = None,
) -> ParsedFile:
    """Parse a PDF (see the module docstring). ``on_page(done, total)`` reports OCR progress."""
    pdf = _open(path, name)
    try:
        n = len(pdf)
        if n == 0:
            raise FileRejected(name, "PDF 中没有页面")
        check_pages(n, name, limits)
        meta_title = normalize_text((pdf.get_metadata_dict().get("Title") or "").strip())
        outline = _outline(pdf)
        pages, line_pages = _text_layers(pdf, n)
        parsed = ParsedFile(source=name, format="pdf", pages=n, flow=True, text_budget=limits.max_text_chars)
        _ocr_where_needed(pdf, pages, parsed, name, limits, ocr, ocr_engine, ocr_scale, on_page)
    finally:
        pdf.close()

    drop_headers_footers(pages)
    if not mark_outline_headings(pages, outline):
        mark_size_headings(pages)
    tables = _find_tables(path, [i for i in line_pages if not pages[i].ocr])
    for page in pages:
        if parsed.full:
            parsed.note_truncated()
            break
        mine = tables.get(page.index, [])
        for top, _, table in mine:
            table.caption = table.caption or _heading_above(page, top)
        shown = [(top, bottom, t.markdown(PREVIEW_ROWS)) for top, bottom, t in mine]
        parsed.add_with_tables(
            page_markdown(page, shown), [t for *_, t in sorted(mine, key=lambda m: m[0])], page=page.index + 1
        )
    if parsed.empty:
        raise FileRejected(name, "没有识别出任何文字")
    first_heading = next((line.text for p in pages for line in p.lines if line.heading == 1), "")
    parsed.title = meta_title or first_heading or Path(name).stem
    return parsed


def _text_layers(pdf: Any, n: int) -> tuple[list[PageLines], list[int]]:
    """Every page's text-layer lines, and the pages that draw lines (table candidates)."""
    pages: list[PageLines] = []
    line_pages: list[int] = []
    for index in range(n):
        page = pdf[index]
        textpage = page.get_textpage()
        lines = _page_lines(page, textpage)
        pages.append(PageLines(index, page.get_width(), page.get_height(), lines))
        if _draws_lines(page):
            line_pages.append(index)
    return pages, line_pages


def _ocr_where_needed(
    pdf: Any,
    pages: list[PageLines],
    parsed: ParsedFile,
    name: str,
    limits: IngestLimits,
    ocr: str,
    ocr_engine: Callable[[], OcrEngine] | None,
    ocr_scale: float,
    on_page: Callable[[int, int], None] | None,
) -> None:
    """OCR the pages the ``ocr`` mode asks for; with ``never``, pages without text are dropped."""
    need_ocr = [
        p.index for p in pages if ocr == "always" or (ocr == "auto" and not text_layer_usable(p.lines))
    ]
    if ocr == "never" and not any(text_layer_usable(p.lines) for p in pages):
        raise FileRejected(
            name, "没有可用的文字层（疑似扫描件），且 OCR 已关闭（--ocr never）；请用 --ocr auto 导入"
        )
    if need_ocr:
        if ocr_engine is None:
            raise FileRejected(
                name,
                f"有 {len(need_ocr)} 页没有文字层，需要 OCR，但未安装 OCR 组件（{INSTALL_HINT}）",
            )
        _run_ocr(pdf, pages, need_ocr, name, limits, ocr_engine(), ocr_scale, on_page)
        parsed.ocr_pages = len(need_ocr)
    elif ocr == "never":
        _drop_untexted(pages, parsed, name)


def _drop_untexted(pages: list[PageLines], parsed: ParsedFile, name: str) -> None:
    """OCR is off: pages without a usable text layer are left out, with a warning."""
    skipped = [p.index + 1 for p in pages if not text_layer_usable(p.lines)]
    if skipped:
        parsed.warnings.append(
            f"「{name}」第 {skipped[0]} 页等 {len(skipped)} 页没有文字层，OCR 已关闭，未导入"
        )
        for p in pages:
            if p.index + 1 in skipped:
                p.lines = []


def _run_ocr(
    pdf: Any,
    pages: list[PageLines],
    indices: list[int],
    name: str,
    limits: IngestLimits,
    engine: OcrEngine,
    scale: float,
    on_page: Callable[[int, int], None] | None,
) -> None:
    def images() -> Any:
        for index in indices:
            page = pdf[index]
            w, h = int(page.get_width() * scale), int(page.get_height() * scale)
            check_pixels(w, h, name, limits, what=f"第 {index + 1} 页渲染后")
            yield index, page.render(scale=scale).to_pil()

    for done, (index, ocr_lines) in enumerate(engine.map_pages(images()), start=1):
        pages[index].lines = ocr_lines_to_lines(ocr_lines, scale)
        pages[index].ocr = True
        if on_page:
            on_page(done, len(indices))


def load_image(
    path: Path,
    name: str,
    limits: IngestLimits,
    *,
    ocr: str = "auto",
    ocr_engine: Callable[[], OcrEngine] | None,
) -> ParsedFile:
    """An image file (a photographed or scanned page): OCR, one page."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as img:
            check_pixels(img.width, img.height, name, limits)  # before decoding a single pixel
            frames = getattr(img, "n_frames", 1)
            check_pages(frames, name, limits)
            if ocr == "never":
                raise FileRejected(name, "是图片，需要 OCR 才能提取文字，但 OCR 已关闭（--ocr never）")
            if ocr_engine is None:
                raise FileRejected(name, f"是图片，需要 OCR，但未安装 OCR 组件（{INSTALL_HINT}）")
            img.load()
            image = img.convert("RGB")
    except FileRejected:
        raise
    except Image.DecompressionBombError as exc:  # Pillow's own guard fired before ours could
        raise FileRejected(
            name, f"图片像素过多（上限 {limits.max_image_pixels // 1_000_000} 百万像素）", str(exc)
        ) from exc
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise FileRejected(name, "图片已损坏或格式无法识别", str(exc)) from exc
    assert ocr_engine is not None
    lines = ocr_lines_to_lines(ocr_engine().recognize(image), 1.0)
    page = PageLines(0, float(image.width), float(image.height), lines, ocr=True)
    parsed = ParsedFile(source=name, format="image", pages=1, ocr_pages=1, title=Path(name).stem)
    parsed.add(page_markdown(page), page=1)
    if parsed.empty:
        raise FileRejected(name, "图片中没有识别出文字")
    return parsed
