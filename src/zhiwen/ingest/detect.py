"""Which kind of document a file is, by its content (magic bytes), never by its name.

| kind | recognised by |
|------|---------------|
| ``pdf`` | ``%PDF-`` in the first 1 KB |
| ``docx`` / ``pptx`` / ``xlsx`` | a zip holding ``word/``, ``ppt/`` or ``xl/`` parts |
| ``image`` | PNG, JPEG, GIF, BMP, TIFF, WebP signatures |
| ``html`` | text starting with a doctype, ``<html``, ``<head`` or ``<body`` |
| ``markdown`` | text with ``#`` headings, or a ``.md`` name |
| ``text`` | any other decodable text (UTF-8, GBK/GB18030, UTF-16 …) |
| ``ole`` | legacy Office (.doc/.xls/.ppt) or an encrypted Office file: refused with a reason |
| ``empty`` / ``binary`` / ``zip`` | refused with a reason |

Example::

    >>> detect_kind(Path("报告（无扩展名）"))
    'pdf'
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

DOCUMENT_KINDS = ("pdf", "docx", "pptx", "xlsx", "image", "html", "markdown", "text")
_HEAD = 64 * 1024
_HTML_START = re.compile(
    rb"^\s*(<!--.*?-->\s*)*<(!doctype\s+html|html|head|body)\b", re.IGNORECASE | re.DOTALL
)
_MD_HEADING = re.compile(r"^#{1,6}[ \t]+\S", re.MULTILINE)
_MD_SUFFIXES = (".md", ".markdown")


def _image(head: bytes) -> bool:
    return (
        head.startswith((b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"BM"))
        or head.startswith((b"II*\x00", b"MM\x00*"))
        or (head[:4] == b"RIFF" and head[8:12] == b"WEBP")
    )


def _office(path: Path) -> str:
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return "corrupt_zip"
    for prefix, kind in (("word/", "docx"), ("ppt/", "pptx"), ("xl/", "xlsx")):
        if any(n.startswith(prefix) for n in names):
            return kind
    return "zip"


def _looks_binary(head: bytes) -> bool:
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 with BOM
        return False
    return b"\x00" in head


def detect_kind(path: Path) -> str:
    """The document kind of ``path`` (see the module table)."""
    with path.open("rb") as fh:
        head = fh.read(_HEAD)
    if not head:
        return "empty"
    return _binary_kind(path, head) or _text_kind(path, head)


def _binary_kind(path: Path, head: bytes) -> str | None:
    """``pdf``, an Office kind, ``ole``, ``image`` or ``binary`` by magic bytes; None for text."""
    if b"%PDF-" in head[:1024]:
        return "pdf"
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return _office(path)
    if head.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        return "ole"
    if _image(head):
        return "image"
    if _looks_binary(head):
        return "binary"
    return None


def _text_kind(path: Path, head: bytes) -> str:
    """``html``, ``markdown`` or ``text`` for a file that is text."""
    if _HTML_START.match(head.lstrip(b"\xef\xbb\xbf")):
        return "html"
    if path.suffix.lower() in _MD_SUFFIXES:
        return "markdown"
    try:
        sample = head.decode("utf-8", errors="ignore")
    except Exception:  # pragma: no cover - decode with errors=ignore does not raise
        sample = ""
    if _MD_HEADING.search(sample):
        return "markdown"
    return "text"
