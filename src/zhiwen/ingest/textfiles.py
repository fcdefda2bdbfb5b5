"""Loaders for text-based files: plain text (any encoding), markdown, and HTML (main content).

* Plain text and markdown are decoded with ``charset-normalizer`` when they are not UTF-8, so
  GBK/GB18030 files (common in Chinese offices) load as they are.
* HTML keeps the main content only (``trafilatura``: navigation, footers and sidebars dropped),
  as markdown with its headings and tables.
* Memory budget (#29): text past ``ingest.max_text_chars`` is dropped with a warning, and an HTML
  page larger than ``ingest.max_xml_bytes`` is refused (its tree would take ~20× its size).

Example::

    >>> parsed = load_html_file(Path("通知.html"), "通知.html")
    >>> parsed.blocks[0][1][:10]
    '# 关于开展……'
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from zhiwen.ingest.grids import csv_rows, first_h1, html_grid, is_data_table, pipe_tables, table_caption
from zhiwen.ingest.limits import FileRejected, IngestLimits, mb
from zhiwen.ingest.model import PREVIEW_ROWS, ParsedFile, TablePlace
from zhiwen.tables.model import Table, table_from_grid

_TITLE = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)
_HTML_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def decode_bytes(data: bytes, name: str) -> str:
    """UTF-8 (with or without BOM) first, then the encoding charset-normalizer finds."""
    for bom, enc in ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16")):
        if data.startswith(bom):
            return data.decode(enc, errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(data, cp_isolation=None).best()
    if best is None:
        raise FileRejected(name, "无法识别文本编码（既不是 UTF-8，也不是 GBK/GB18030 等常见编码）")
    encoding = best.encoding
    # GBK text is detected as gb2312 or big5 now and then; gb18030 decodes a superset of both
    if encoding.lower().replace("_", "") in ("gb2312", "gbk", "hz", "big5"):
        try:
            return data.decode("gb18030")
        except UnicodeDecodeError:
            pass
    return str(best)


def _title(markdown: str, fallback: str) -> str:
    m = _TITLE.search(markdown)
    return m.group(1).strip() if m else fallback


def load_text_file(
    path: Path, name: str, *, markdown: bool = False, limits: IngestLimits | None = None
) -> ParsedFile:
    text = decode_bytes(path.read_bytes(), name)
    fmt = "markdown" if markdown else "text"
    stem = Path(name).stem
    parsed = ParsedFile(
        source=name,
        format=fmt,
        title=_title(text, stem) if markdown else stem,
        text_budget=limits.max_text_chars if limits else None,
    )
    parsed.add(text)
    del text
    if markdown:
        _mark_pipe_tables(parsed, limits or IngestLimits())
    if parsed.empty:
        raise FileRejected(name, "没有可索引的文字（文件内容为空白）")
    return parsed


def load_delimited(path: Path, name: str, limits: IngestLimits | None = None) -> ParsedFile:
    """A CSV or TSV file (any encoding) as one table: its first row is the header."""
    limits = limits or IngestLimits()
    text = decode_bytes(path.read_bytes(), name)
    rows, cut = csv_rows(text, path.suffix.lower(), limits.max_table_rows)
    del text
    width = max((len(r) for r in rows), default=0)
    if width * len(rows) > limits.max_table_cells:
        rows, cut = rows[: max(2, limits.max_table_cells // max(1, width))], True
    parsed = ParsedFile(source=name, format="csv", title=Path(name).stem, text_budget=limits.max_text_chars)
    if cut:
        parsed.warnings.append(
            f"「{name}」超过 {len(rows) - 1} 行（tables.max_rows / tables.max_cells），其余行未导入"
        )
    table = table_from_grid(rows, header_rows=1)
    if table is None:
        raise FileRejected(name, "表格中没有数据行（需要一行表头和至少一行数据，至少两列）")
    parsed.add_table(table)
    return parsed


def _mark_pipe_tables(parsed: ParsedFile, limits: IngestLimits) -> None:
    """The markdown's pipe tables kept as tables (their caption: the heading above them)."""
    from zhiwen.ingest.chunking import section_at

    for block, (_, text) in enumerate(parsed.blocks):
        for start, end, grid in pipe_tables(text):
            path = section_at(text, start)
            caption = path.rsplit(" > ", 1)[-1] if path else ""
            table = table_from_grid(grid, caption=caption, header_rows=1, max_rows=limits.max_table_rows)
            if table is not None and len(table.rows) == len(grid) - 1:
                parsed.tables.append(TablePlace(block, start, end, table))


def load_html_file(path: Path, name: str, limits: IngestLimits | None = None) -> ParsedFile:
    """A web page's main content as markdown, its data tables kept as tables (:mod:`.grids`).

    The title is the page's ``<h1>``, else its first heading, else its ``<title>``; a title that
    every page of an import shares is the site's, not the page's (:func:`.site.own_titles`).
    """
    import lxml.html

    data = path.read_bytes()
    if limits is not None and len(data) > limits.max_xml_bytes:
        raise FileRejected(
            name,
            f"网页过大（{mb(len(data))}，上限 {mb(limits.max_xml_bytes)}，ingest.max_xml_bytes），"
            "解析会占用过多内存；请拆分后再导入",
        )
    html = decode_bytes(data, name)
    m = _HTML_TITLE.search(data)
    page_title = re.sub(r"\s+", " ", decode_bytes(m.group(1), name)).strip() if m else ""
    try:
        tree = lxml.html.fromstring(html)
    except (ValueError, lxml.etree.ParserError) as exc:
        raise FileRejected(name, "网页中没有找到正文内容", str(exc)) from exc
    h1 = first_h1(tree)
    sub_heading = first_h1(tree, ("h2", "h3"))  # read before the extractor cleans the tree
    tables = _cut_tables(tree, limits or IngestLimits())
    markdown = _main_content(tree) or ""
    markdown, shown = _put_back(markdown, tables)
    if not markdown.strip():
        raise FileRejected(name, "网页中没有找到正文内容")
    heading = (
        h1 or _first_heading(markdown) or sub_heading or next((t.caption for _, t in tables if t.caption), "")
    )
    parsed = ParsedFile(
        source=name,
        format="html",
        title=h1 or _title(markdown, page_title or Path(name).stem),
        text_budget=limits.max_text_chars if limits else None,
    )
    parsed.heading = heading
    parsed.site_title = page_title
    parsed.add_with_tables(markdown, shown)
    return parsed


_PLACEHOLDER = "ZWTABLE{}ZW"
_ANY_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def _first_heading(markdown: str) -> str:
    m = _ANY_HEADING.search(markdown)
    return m.group(1).strip() if m else ""


def _cut_tables(tree: Any, limits: IngestLimits) -> list[tuple[str, Table]]:
    """Data tables out of ``tree``, each replaced by a placeholder paragraph."""
    import lxml.html

    out: list[tuple[str, Table]] = []
    for el in list(tree.iter("table")):
        if el.getparent() is None or not is_data_table(el):
            continue
        grid, head = html_grid(el, limits.max_table_cells)
        table = table_from_grid(
            grid, caption=table_caption(el), header_rows=head or None, max_rows=limits.max_table_rows
        )
        if table is None:
            continue
        token = _PLACEHOLDER.format(len(out))
        holder = lxml.html.fromstring(f"<p>{token}</p>")
        holder.tail = el.tail
        el.getparent().replace(el, holder)
        out.append((token, table))
    return out


def _main_content(tree: Any) -> str | None:
    import trafilatura

    return trafilatura.extract(
        tree,
        output_format="markdown",
        include_tables=True,
        include_formatting=True,
        include_comments=False,
        favor_recall=True,
        with_metadata=False,
    )


def _put_back(markdown: str, tables: list[tuple[str, Table]]) -> tuple[str, list[Table]]:
    """Each table's markdown where its placeholder stands (at the end when the extractor
    dropped it), and the tables in the order the text shows them."""
    placed: list[tuple[int, Table]] = []
    for token, table in tables:
        md = table.markdown(PREVIEW_ROWS)
        line = re.search(rf"^.*{token}.*$", markdown, re.MULTILINE)
        if line:
            markdown = markdown[: line.start()] + "\n\n" + md + "\n\n" + markdown[line.end() :]
        else:
            markdown = markdown.rstrip() + "\n\n" + md + "\n"
    for _, table in tables:
        placed.append((markdown.find(table.markdown(PREVIEW_ROWS)), table))
    return markdown, [t for _, t in sorted(placed, key=lambda p: p[0])]
