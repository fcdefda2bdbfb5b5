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

from zhiwen.config import IngestSettings, Settings
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

    @classmethod
    def from_settings(cls, settings: Settings | IngestSettings) -> IngestLimits:
        s = settings.ingest if isinstance(settings, Settings) else settings
        return cls(
            max_file_bytes=s.max_file_bytes,
            max_pages=s.max_pages,
            max_image_pixels=s.max_image_pixels,
            max_unzip_ratio=s.max_unzip_ratio,
            max_unzip_bytes=s.max_unzip_bytes,
            max_zip_entries=s.max_zip_entries,
        )


def _mb(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MB"


def check_file_size(path: Path, name: str, limits: IngestLimits) -> int:
    size = path.stat().st_size
    if size == 0:
        raise FileRejected(name, "是空文件")
    if size > limits.max_file_bytes:
        raise FileRejected(name, f"文件过大（{_mb(size)}，上限 {_mb(limits.max_file_bytes)}）")
    return size


def check_zip(path: Path, name: str, limits: IngestLimits) -> None:
    """Refuse an Office file whose zip would unpack to too much (a zip bomb) before opening it.

    The sizes in the zip directory bound what :mod:`zipfile` will ever inflate (it stops at the
    declared size and checks the CRC), so checking them is enough.
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
            name, f"解压后过大（{_mb(total)}，上限 {_mb(limits.max_unzip_bytes)}），疑似压缩炸弹"
        )
    # tiny files compress badly, so the ratio only matters once there is something to inflate
    if total > 1024 * 1024 and total / packed > limits.max_unzip_ratio:
        raise FileRejected(
            name, f"压缩比异常（{total / packed:.0f} 倍，上限 {limits.max_unzip_ratio:.0f} 倍），疑似压缩炸弹"
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
