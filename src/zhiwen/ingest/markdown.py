"""Markdown directory loader with metadata enrichment hooks.

Files are found recursively and sorted, so ids and order are the same on every run. The id is
the path relative to the root without suffix (``meat_dish/知识库``); the title is the first
``# `` heading or the file stem; ``source`` is the relative path with suffix.

Enrichment hooks are callables ``(path, root, text, metadata) -> None`` that add metadata in
place; apps bring their own hooks for their formats.

Example::

    >>> corpus = load_markdown(Path("docs"), metadata={"lang": "zh"})
    >>> corpus.documents[0].id, corpus.documents[0].metadata["source"]
    ('guide/install', 'guide/install.md')
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from zhiwen.documents import Document
from zhiwen.errors import IngestError
from zhiwen.ingest._io import empty_corpus, read_utf8, require_path
from zhiwen.ingest.base import Corpus

log = logging.getLogger(__name__)

Enricher = Callable[[Path, Path, str, dict[str, Any]], None]

MARKDOWN_SUFFIXES = (".md", ".markdown")
_TITLE = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)


def markdown_title(text: str, fallback: str) -> str:
    """The first level-1 heading outside code fences, else ``fallback``."""
    in_fence = False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if not in_fence:
            m = _TITLE.match(line)
            if m:
                return m.group(1).strip()
    return fallback


# -- enrichment hooks ------------------------------------------------------------------------
ENRICHERS: dict[str, Enricher] = {}  # named hooks for ``enrich="name"``; apps may add theirs


def _resolve_enrichers(
    enrich: str | Enricher | Sequence[str | Enricher] | None, root: Path
) -> list[Enricher]:
    if enrich is None:
        return []
    items: Iterable[str | Enricher] = [enrich] if isinstance(enrich, str) or callable(enrich) else enrich
    out: list[Enricher] = []
    for item in items:
        if callable(item):
            out.append(item)
        elif item in ("", "none"):
            continue
        elif item in ENRICHERS:
            out.append(ENRICHERS[item])
        else:
            raise IngestError(
                f"unknown enrichment {item!r}; known: {', '.join(sorted(ENRICHERS)) or 'none'}",
                message=f"导入失败：未知的元数据增强「{item}」，可选：{'、'.join(sorted(ENRICHERS)) or '无'}",
            )
    return out


def _find_files(root: Path, suffixes: Sequence[str], skip_dirs: frozenset[str]) -> list[Path]:
    files = []
    for p in root.rglob("*"):
        rel = p.relative_to(root).parts
        # hidden folders (.git) and skipped ones (an app's templates) never hold documents
        if any(part.startswith(".") or part in skip_dirs for part in rel[:-1]):
            continue
        if p.suffix.lower() in suffixes and p.is_file() and not rel[-1].startswith("."):
            files.append(p)
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def load_markdown(
    path: Path,
    *,
    enrich: str | Enricher | Sequence[str | Enricher] | None = None,
    suffixes: Sequence[str] = MARKDOWN_SUFFIXES,
    skip_dirs: Iterable[str] | None = None,
    metadata: dict[str, Any] | None = None,
) -> Corpus:
    """Load every markdown file under ``path`` (or the single file ``path``).

    ``enrich``: a hook, a name in :data:`ENRICHERS`, a list of them, or ``"none"``;
    ``skip_dirs``: folder names never read (default none).
    ``metadata`` is added to every document (e.g. ``{"lang": "zh"}``).
    """
    path = require_path(Path(path))
    root = path.parent if path.is_file() else path
    hooks = _resolve_enrichers(enrich, root)
    skip_dirs = set(skip_dirs or ())
    sfx = tuple(s.lower() if s.startswith(".") else f".{s.lower()}" for s in suffixes)
    files = [path] if path.is_file() else _find_files(root, sfx, frozenset(skip_dirs))

    docs: list[Document] = []
    bad: list[str] = []
    bad_files: list[str] = []
    for f in files:
        rel = f.relative_to(root)
        try:
            text = read_utf8(f)
        except IngestError as exc:
            bad.append(exc.detail)
            bad_files.append(rel.as_posix())
            continue
        if not text.strip():
            log.info("skipping empty file %s", f)
            continue
        doc_id = rel.with_suffix("").as_posix()
        meta: dict[str, Any] = dict(metadata or {})
        meta["source"] = rel.as_posix()
        for hook in hooks:
            hook(f, root, text, meta)
        docs.append(Document(id=doc_id, text=text, title=markdown_title(text, f.stem), metadata=meta))
    if bad:
        # every undecodable file is named at once, before anything is indexed
        more = f" (+{len(bad) - 3} more)" if len(bad) > 3 else ""
        raise IngestError(
            "; ".join(bad[:3]) + more,
            message=f"导入失败：{len(bad)} 个文件不是 UTF-8 编码，例如 {bad_files[0]}",
        )
    if not docs:
        raise empty_corpus(path, f"no non-empty {'/'.join(sfx)} files")
    return Corpus(documents=docs)
