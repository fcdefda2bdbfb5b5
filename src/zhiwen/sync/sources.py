"""A KB's remembered sources (``sources`` in ``kb.json``): what each one is, and changing them.

A source is a folder path, a page URL or a sitemap URL (an URL whose path ends in ``.xml``, or
names a sitemap). Folders are kept as absolute paths, so ``zhiwen sync`` finds them from any
working directory.

Example::

    >>> source_kind("https://example.com/sitemap.xml"), source_kind("/data/manual")
    ('sitemap', 'folder')
    remember_source(kb, Path("docs"))       # `zhiwen index docs --kb manual` does it
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from zhiwen.errors import InvalidParameter

if TYPE_CHECKING:
    from zhiwen.kb.knowledge_base import KnowledgeBase

SourceKind = Literal["folder", "url", "sitemap"]


def source_kind(source: str) -> SourceKind:
    parts = urlsplit(source)
    if parts.scheme in ("http", "https"):
        path = parts.path.lower()
        return "sitemap" if path.endswith(".xml") or "sitemap" in path.rsplit("/", 1)[-1] else "url"
    return "folder"


def normalize_source(source: str | Path) -> str:
    """A source as kept in ``kb.json``: an http(s) URL as given, a folder as an absolute path."""
    text = str(source).strip()
    if not text:
        raise InvalidParameter("empty source", message="同步来源不能为空")
    if urlsplit(text).scheme in ("http", "https"):
        if not urlsplit(text).netloc:
            raise InvalidParameter(f"bad URL {text!r}", message=f"同步来源的网址无效：{text}")
        return text
    if "://" in text:
        raise InvalidParameter(
            f"unsupported source {text!r}", message=f"同步来源只支持文件夹和 http(s) 网址：{text}"
        )
    return str(Path(text).expanduser().resolve())


def configure(
    kb: KnowledgeBase,
    *,
    add: Sequence[str | Path] = (),
    remove: Sequence[str | Path] = (),
    interval: float | Literal["keep"] | None = "keep",
) -> None:
    """Change the KB's sources and sync interval (seconds; None: no schedule) in ``kb.json``,
    under its write lock (another process may be bumping the revision)."""
    added = [normalize_source(s) for s in add]
    dropped = {normalize_source(s) for s in remove}
    if interval not in ("keep", None) and not (isinstance(interval, int | float) and interval > 0):
        raise InvalidParameter(f"bad interval {interval!r}", message="同步间隔必须是正数（秒）")
    with kb.writing():
        sources = [s for s in kb.config.sources if s not in dropped]
        sources += [s for s in added if s not in sources]
        update: dict[str, object] = {"sources": sources}
        if interval != "keep":
            update["sync_interval"] = interval
        if any(getattr(kb.config, k) != v for k, v in update.items()):
            kb.config = kb.config.model_copy(update=update)
            kb.save_config()


def remember_folder(kb: KnowledgeBase | None, path: Path) -> None:
    """After ``zhiwen index PATH``: a folder becomes a source of the KB (a single file does not)."""
    if kb is not None and path.is_dir():
        remember_source(kb, path)


def remember_source(kb: KnowledgeBase, source: str | Path) -> None:
    """Add ``source`` to the KB's sources unless it is there (``zhiwen index FOLDER``)."""
    if normalize_source(source) not in kb.config.sources:
        configure(kb, add=[source])
