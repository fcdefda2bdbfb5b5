"""The recipe app's ingest plug-in: HowToCook markdown, recognised by its content.

A folder is HowToCook when its markdown files carry the recipe template's difficulty line
(``预估烹饪难度：★★★``) — whatever the folder is called. Each recipe gets ``category`` (the
folder under ``dishes/``, or the first folder under the indexed root), ``difficulty`` (the
number of ★, 1–5) and ``name`` (the file name, or the folder name for ``README.md``-style
files). The KB it builds is answered by the recipe app.

Example::

    >>> sniff_howtocook(Path("../shared/data/howtocook/dishes"))
    True
    >>> corpus = load_howtocook(Path("../shared/data/howtocook/dishes"))
    >>> doc = next(d for d in corpus.documents if d.id == "meat_dish/宫保鸡丁/宫保鸡丁")
    >>> doc.metadata["category"], doc.metadata["difficulty"], corpus.kb_defaults
    ('meat_dish', 4, {'app': 'recipes'})
"""

from __future__ import annotations

import re
from itertools import islice
from pathlib import Path
from typing import Any

from zhiwen.ingest.base import Corpus
from zhiwen.ingest.markdown import MARKDOWN_SUFFIXES, load_markdown

FORMAT = "howtocook"
DIFFICULTY = re.compile(r"预估烹饪难度\s*[：:]\s*([★☆]+)")
_GENERIC_STEMS = frozenset({"readme", "index", "main", "_index"})
_SNIFF_FILES = 40  # enough to judge a folder without reading all of it
_SNIFF_BYTES = 4096


def _category(path: Path, root: Path) -> str | None:
    parts = path.resolve().parts
    if "dishes" in parts:
        i = len(parts) - 1 - parts[::-1].index("dishes")
        return parts[i + 1] if i + 1 < len(parts) - 1 else None
    rel = path.resolve().relative_to(root.resolve()).parts
    return rel[0] if len(rel) > 1 else None


def howtocook_enricher(path: Path, root: Path, text: str, metadata: dict[str, Any]) -> None:
    """HowToCook recipe metadata: category, difficulty (1-5, int) and dish name."""
    category = _category(path, root)
    if category:
        metadata["category"] = category
    m = DIFFICULTY.search(text)
    if m:
        metadata["difficulty"] = m.group(1).count("★")
    stem = path.stem
    metadata["name"] = path.parent.name if stem.lower() in _GENERIC_STEMS else stem


def _markdown_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path] if path.suffix.lower() in MARKDOWN_SUFFIXES else []
    found = (p for p in sorted(path.rglob("*")) if p.suffix.lower() in MARKDOWN_SUFFIXES and p.is_file())
    return list(islice(found, _SNIFF_FILES))


def sniff_howtocook(path: Path) -> bool:
    """True when most sampled markdown files under ``path`` are HowToCook recipes."""
    files = _markdown_files(Path(path)) if Path(path).exists() else []
    if not files:
        return False
    hits = 0
    for f in files:
        try:
            with f.open("rb") as fh:
                head = fh.read(_SNIFF_BYTES).decode("utf-8", errors="ignore")
        except OSError:
            continue
        hits += bool(DIFFICULTY.search(head))
    return hits * 2 > len(files)


def load_howtocook(path: Path, **options: Any) -> Corpus:
    """HowToCook markdown with recipe metadata; the template folder is skipped."""
    options.setdefault("skip_dirs", {"template"})
    corpus = load_markdown(Path(path), enrich=howtocook_enricher, **options)
    corpus.kb_defaults = {**corpus.kb_defaults, "app": "recipes"}
    return corpus
