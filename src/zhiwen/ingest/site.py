"""The pages of one site imported together: each keeps its own title, the site's chrome stays out.

A web page's ``<title>`` is often the site's name on every page (「中国人民大学阳光招生信息平台」),
or the page's name plus the site's (「2021年甘肃省录取分数线 - 阳光招生」). Among the web pages of
one import (a folder), a title — or a part of a title between separators — that several pages
share is the site's: it is taken off, and a page left without a title takes its own first
heading (or its first table's caption). Likewise a line (a navigation menu, a header, a footer)
that most pages of the import repeat is not indexed, nor lines that come as a block (three or
more on exactly the same pages, three pages at least): the chrome the content extractor kept on
some pages and dropped on others.

Example::

    >>> own_titles(parsed_pages)        # in place
    >>> [p.title for p in parsed_pages]
    ['2021年甘肃省录取分数线', '2022年甘肃省录取分数线', …]
    >>> drop_repeated_lines(parsed_pages)
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from zhiwen.ingest.model import ParsedFile, TablePlace

#: pages of one import that must share a title (or a line) before it counts as the site's
MIN_PAGES = 3
#: the share of the import's pages a line must appear on to be the site's chrome
REPEATED_SHARE = 0.6
#: lines repeated together on the same pages that make a block of the site's chrome
BLOCK_LINES = 3
_SEPARATORS = re.compile(r"\s*(?:[|｜_–—·•]|\s-\s|-{2,})\s*")


def _parts(title: str) -> list[str]:
    return [p for p in (p.strip() for p in _SEPARATORS.split(title)) if p]


def own_titles(pages: Sequence[ParsedFile]) -> None:
    """Take the site's name off the titles of ``pages`` (see the module docstring)."""
    if len(pages) < MIN_PAGES:
        return
    shared = Counter(p for page in pages for p in set(_parts(page.site_title or page.title)))
    site = {part for part, n in shared.items() if n >= MIN_PAGES and n >= 0.5 * len(pages)}
    if not site:
        return
    for page in pages:
        if page.title not in site and not any(part in site for part in _parts(page.title)):
            continue
        left = [p for p in _parts(page.title) if p not in site]
        page.title = " - ".join(left) or page.heading or page.source.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def _line_key(line: str) -> str:
    return re.sub(r"\s+", "", line.strip().lstrip("#-*> ").strip())


def drop_repeated_lines(pages: Sequence[ParsedFile]) -> int:
    """Remove from ``pages`` the lines most of them repeat (outside tables); returns how many."""
    if len(pages) < MIN_PAGES:
        return 0
    keys = [
        {_line_key(line) for text in _free_texts(page) for line in text.splitlines()} - {""} for page in pages
    ]
    counts: Counter[str] = Counter(key for page_keys in keys for key in page_keys)
    need = max(MIN_PAGES, REPEATED_SHARE * len(pages))
    repeated = {key for key, n in counts.items() if n >= need} | _chrome_blocks(keys, counts)
    if not repeated:
        return 0
    removed = 0
    for page in pages:
        removed += _drop_lines(page, repeated)
    return removed


def _chrome_blocks(keys: Sequence[set[str]], counts: Counter[str]) -> set[str]:
    """Lines that come as a block (at least :data:`BLOCK_LINES` of them on exactly the same
    pages, at least :data:`MIN_PAGES` pages): a menu, a link list, a footer that the content
    extractor kept on some pages of the site and dropped on others (a page of big tables)."""
    pages_of: dict[str, frozenset[int]] = {}
    for key, n in counts.items():
        if n >= MIN_PAGES:
            pages_of[key] = frozenset(i for i, page_keys in enumerate(keys) if key in page_keys)
    blocks = Counter(pages_of.values())
    return {key for key, on in pages_of.items() if blocks[on] >= BLOCK_LINES}


def _segments(page: ParsedFile, block: int) -> list[tuple[str, TablePlace | None]]:
    """A block cut into its free text and its tables, in order."""
    text = page.blocks[block][1]
    out: list[tuple[str, TablePlace | None]] = []
    pos = 0
    for place in sorted((t for t in page.tables if t.block == block), key=lambda t: t.start):
        out.append((text[pos : place.start], None))
        out.append((text[place.start : place.end], place))
        pos = place.end
    out.append((text[pos:], None))
    return out


def _free_texts(page: ParsedFile) -> list[str]:
    """The page's text outside its tables."""
    return [text for b in range(len(page.blocks)) for text, place in _segments(page, b) if place is None]


def _clean(text: str, repeated: set[str]) -> tuple[str, int]:
    lines = text.split("\n")
    kept = [line for line in lines if _line_key(line) not in repeated]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)), len(lines) - len(kept)


def _drop_lines(page: ParsedFile, repeated: set[str]) -> int:
    removed = 0
    places: list[TablePlace] = []
    for b, (number, _) in enumerate(page.blocks):
        out = ""
        for text, place in _segments(page, b):
            if place is None:
                cleaned, n = _clean(text, repeated)
                out += cleaned
                removed += n
            else:
                places.append(replace(place, start=len(out), end=len(out) + len(text)))
                out += text
        page.blocks[b] = (number, out)
    page.tables = places
    return removed
