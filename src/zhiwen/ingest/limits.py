"""Safety limits of the document loaders, and the checks that apply them before parsing.

Every check raises :class:`FileRejected` (an :class:`~zhiwen.errors.IngestError`) whose Chinese
message names the file and the reason, so one bad file fails alone and the run goes on.
Limits are :class:`~zhiwen.config.IngestSettings` (``ZHIWEN_INGEST__MAX_FILE_BYTES`` …).

Example::

    >>> limits = IngestLimits.from_settings(get_settings())
    >>> check_file_size(Path("大文件.pdf"), limits)        # FileRejected when over the limit
    >>> check_zip(Path("制度.docx"), "制度.docx", limits)   # a zip bomb is refused unopened
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path

from zhiwen.config import IngestSettings, Settings, TablesSettings
from zhiwen.errors import IngestError


class FileRejected(IngestError):
    """One file cannot be indexed; ``reason`` is the Chinese reason without the file name."""

    def __init__(self, name: str, reason: str, detail: str = "") -> None:
        self.file = name
        self.reason = reason
        super().__init__(detail or reason, message=f"「{name}」{reason}", data={"file": name})


@dataclass(frozen=True, slots=True)
class IngestLimits:
    max_file_bytes: int = 100 * 1024 * 1024
    max_pages: int = 2000
    max_image_pixels: int = 60_000_000
    max_unzip_ratio: float = 100.0
    max_unzip_bytes: int = 512 * 1024 * 1024
    max_zip_entries: int = 20_000
    max_xml_bytes: int = 40 * 1024 * 1024
    max_text_chars: int = 20_000_000
    max_table_rows: int = 200_000  # rows of one table; more are dropped with a warning
    max_table_cells: int = 4_000_000  # cells of one table (rows × columns)

    @classmethod
    def from_settings(cls, settings: Settings | IngestSettings) -> IngestLimits:
        s = settings.ingest if isinstance(settings, Settings) else settings
        tables = settings.tables if isinstance(settings, Settings) else TablesSettings()
        return cls(
            max_file_bytes=s.max_file_bytes,
            max_pages=s.max_pages,
            max_image_pixels=s.max_image_pixels,
            max_unzip_ratio=s.max_unzip_ratio,
            max_unzip_bytes=s.max_unzip_bytes,
            max_zip_entries=s.max_zip_entries,
            max_xml_bytes=s.max_xml_bytes,
            max_text_chars=s.max_text_chars,
            max_table_rows=tables.max_rows,
            max_table_cells=tables.max_cells,
        )


def mb(n: int) -> str:
    """``n`` bytes as MB for a message (``12.3 MB``)."""
    return f"{n / 1024 / 1024:.1f} MB"


def check_file_size(path: Path, name: str, limits: IngestLimits) -> int:
    size = path.stat().st_size
    if size == 0:
        raise FileRejected(name, "是空文件")
    if size > limits.max_file_bytes:
        raise FileRejected(name, f"文件过大（{mb(size)}，上限 {mb(limits.max_file_bytes)}）")
    return size


def check_zip(path: Path, name: str, limits: IngestLimits, kind: str | None = None) -> int:
    """Refuse an Office file whose zip would unpack to too much (a zip bomb) before opening it.

    The sizes in the zip directory bound what :mod:`zipfile` will ever inflate (it stops at the
    declared size and checks the CRC), so checking them is enough. With ``kind`` (docx, pptx,
    xlsx) the XML its library parses whole is held to ``max_xml_bytes`` too (:func:`check_xml`).
    Returns the bytes the zip unpacks to.
    """
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise FileRejected(name, "文件已损坏或不完整（无法读取压缩包结构）", str(exc)) from exc
    if len(infos) > limits.max_zip_entries:
        raise FileRejected(name, f"压缩包内文件过多（{len(infos)} 个），疑似压缩炸弹")
    total = sum(i.file_size for i in infos)
    packed = max(1, sum(i.compress_size for i in infos))
    if total > limits.max_unzip_bytes:
        raise FileRejected(
            name, f"解压后过大（{mb(total)}，上限 {mb(limits.max_unzip_bytes)}），疑似压缩炸弹"
        )
    # tiny files compress badly, so the ratio only matters once there is something to inflate
    if total > 1024 * 1024 and total / packed > limits.max_unzip_ratio:
        raise FileRejected(
            name, f"压缩比异常（{total / packed:.0f} 倍，上限 {limits.max_unzip_ratio:.0f} 倍），疑似压缩炸弹"
        )
    if kind is not None:
        check_xml(infos, name, kind, limits)
    return total


def parsed_whole(member: str, kind: str) -> bool:
    """Whether ``kind``'s library builds a tree of zip member ``member`` (all of it at once).

    python-docx and python-pptx parse every XML part when they open a file; openpyxl in
    read-only mode streams the worksheets and parses the rest (shared strings, styles) whole.
    """
    if not member.endswith((".xml", ".rels")):
        return False
    return not (kind == "xlsx" and member.startswith("xl/worksheets/"))


def check_xml(infos: list[zipfile.ZipInfo], name: str, kind: str, limits: IngestLimits) -> None:
    """Refuse a file whose XML parts would take more memory as trees than the budget allows.

    A tree takes up to ~18× its XML (34 MB of paragraph XML held 600 MB), so a 5 MB .docx with
    300 MB of XML inside took 5.2 GB (#29); ``max_xml_bytes`` (40 MB) keeps one file under ~1 GB.
    """
    size = sum(i.file_size for i in infos if parsed_whole(i.filename, kind))
    if size > limits.max_xml_bytes:
        raise FileRejected(
            name,
            f"文档结构过大（解压后的 XML 共 {mb(size)}，上限 {mb(limits.max_xml_bytes)}），"
            "解析会占用过多内存；请拆分成几个文件后再导入",
        )


def check_pixels(width: int, height: int, name: str, limits: IngestLimits, what: str = "图片") -> None:
    if width <= 0 or height <= 0:
        raise FileRejected(name, f"{what}尺寸无效（{width}×{height}）")
    if width * height > limits.max_image_pixels:
        raise FileRejected(
            name,
            f"{what}像素过多（{width}×{height}，上限 {limits.max_image_pixels // 1_000_000} 百万像素）",
        )


def check_pages(pages: int, name: str, limits: IngestLimits, unit: str = "页") -> None:
    if pages > limits.max_pages:
        raise FileRejected(name, f"页数过多（{pages} {unit}，上限 {limits.max_pages} {unit}）")
