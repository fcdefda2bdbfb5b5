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

from zhiwen.ingest.limits import FileRejected, IngestLimits, mb
from zhiwen.ingest.model import ParsedFile

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
    if parsed.empty:
        raise FileRejected(name, "没有可索引的文字（文件内容为空白）")
    return parsed


def load_html_file(path: Path, name: str, limits: IngestLimits | None = None) -> ParsedFile:
    import trafilatura

    data = path.read_bytes()
    if limits is not None and len(data) > limits.max_xml_bytes:
        raise FileRejected(
            name,
            f"网页过大（{mb(len(data))}，上限 {mb(limits.max_xml_bytes)}，ingest.max_xml_bytes），"
            "解析会占用过多内存；请拆分后再导入",
        )
    html = decode_bytes(data, name)
    markdown = trafilatura.extract(
        html,
        output_format="markdown",
        include_tables=True,
        include_formatting=True,
        include_comments=False,
        favor_recall=True,
        with_metadata=False,
    )
    m = _HTML_TITLE.search(data)
    page_title = re.sub(r"\s+", " ", decode_bytes(m.group(1), name)).strip() if m else ""
    if not markdown or not markdown.strip():
        raise FileRejected(name, "网页中没有找到正文内容")
    parsed = ParsedFile(
        source=name,
        format="html",
        title=_title(markdown, page_title or Path(name).stem),
        text_budget=limits.max_text_chars if limits else None,
    )
    parsed.add(markdown)
    return parsed
