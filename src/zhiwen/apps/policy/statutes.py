"""PRC statutes (LawRefBook markdown) split into articles, and selection of provisions.

A statute file has a ``# 标题`` line, a preamble up to ``<!-- INFO END -->``, then ``## 第X章``
/ ``### 第X节`` headings and articles that each start a line with ``第X条``. :func:`parse_statute`
returns the articles with their chapter and section; :func:`select_articles` keeps those a
:class:`ArticleSelector` asks for (by article number, chapter/section heading or keyword), which
is how the airline/crew KB takes only the crew, transit and port provisions of a statute.

Each article becomes one chunk (id ``<statute>#<第X条>``) whose parent is the statute, so the
citation of a hit names the exact article.

Example::

    >>> statute = parse_statute(Path("出境入境管理法(2012-06-30).md"))
    >>> statute.title, statute.articles[21].label
    ('中华人民共和国出境入境管理法', '第二十二条')
    >>> sel = ArticleSelector(articles=("第二十二条",), keywords=("机组",))
    >>> [a.label for a in select_articles(statute, sel)][:1]
    ['第二十二条']
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from zhiwen.documents import Chunk, Document

_ARTICLE = re.compile(r"^第([零〇一二三四五六七八九十百千两\d]+)条[ \u3000]?")
_HEADING = re.compile(r"^(#{1,3})\s+(.+?)\s*$")
_DATE_IN_NAME = re.compile(r"[(（](\d{4}-\d{2}-\d{2})[)）]")
_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_UNITS = {"十": 10, "百": 100, "千": 1000}


def chinese_number(text: str) -> int:
    """``二十二`` → 22, ``一百八十一`` → 181, ``十`` → 10, ``45`` → 45."""
    if text.isdigit():
        return int(text)
    total, current = 0, 0
    for ch in text:
        if ch in _DIGITS:
            current = _DIGITS[ch]
        elif ch in _UNITS:
            total += (current or 1) * _UNITS[ch]
            current = 0
    return total + current


@dataclass(frozen=True, slots=True)
class Article:
    label: str  # 第二十二条
    number: int  # 22
    chapter: str  # 第三章 外国人入境出境
    section: str  # 第一节 签证 (or "")
    text: str  # the article, its label included

    @property
    def heading(self) -> str:
        return " ".join(p for p in (self.chapter, self.section) if p)


@dataclass(frozen=True, slots=True)
class Statute:
    id: str  # file stem without the date: 出境入境管理法
    title: str  # 中华人民共和国出境入境管理法
    date: str  # 2012-06-30 (from the file name) or ""
    path: Path
    preamble: str
    articles: tuple[Article, ...]

    @property
    def short_title(self) -> str:
        return self.title.removeprefix("中华人民共和国")


def parse_statute(path: Path) -> Statute:
    text = path.read_text(encoding="utf-8")
    stem = path.stem
    m = _DATE_IN_NAME.search(stem)
    statute_id = _DATE_IN_NAME.sub("", stem).strip()
    title = statute_id
    chapter = section = ""
    preamble: list[str] = []
    articles: list[Article] = []
    current: list[str] = []
    head: tuple[str, int, str, str] | None = None

    def flush() -> None:
        if head is not None:
            body = "\n".join(line for line in current if line.strip()).strip()
            articles.append(Article(head[0], head[1], head[2], head[3], body))

    for line in text.splitlines():
        stripped = line.strip()
        heading = _HEADING.match(stripped)
        if heading:
            level, name = len(heading.group(1)), " ".join(heading.group(2).split())
            if level == 1:
                title = name
            elif level == 2:
                flush()
                head, current = None, []
                chapter, section = name, ""
            else:
                flush()
                head, current = None, []
                section = name
            continue
        art = _ARTICLE.match(stripped)
        if art:
            flush()
            label = f"第{art.group(1)}条"
            head, current = (label, chinese_number(art.group(1)), chapter, section), [stripped]
        elif head is not None:
            current.append(stripped)
        elif stripped and "INFO END" not in stripped:
            preamble.append(stripped)
    flush()
    return Statute(
        id=statute_id,
        title=title,
        date=m.group(1) if m else "",
        path=path,
        preamble="\n".join(preamble),
        articles=tuple(articles),
    )


@dataclass(frozen=True, slots=True)
class ArticleSelector:
    """Which articles of a statute to keep; an article matching ANY criterion is kept.

    ``all_articles`` keeps every article; ``chapters`` matches a substring of the chapter or
    section heading (``第五章``, ``机组``); ``keywords`` a substring of the article text.
    """

    all_articles: bool = False
    articles: Sequence[str] = ()
    chapters: Sequence[str] = ()
    keywords: Sequence[str] = ()

    def keeps(self, article: Article) -> bool:
        if self.all_articles or article.label in self.articles:
            return True
        if any(c in article.chapter or (article.section and c in article.section) for c in self.chapters):
            return True
        return any(k in article.text for k in self.keywords)


def select_articles(statute: Statute, selector: ArticleSelector) -> list[Article]:
    return [a for a in statute.articles if selector.keeps(a)]


def statute_document(statute: Statute, articles: Sequence[Article], *, kb_role: str) -> Document:
    """The parent document: the statute's title and the selected articles under their headings."""
    lines = [f"# {statute.title}"]
    if statute.preamble:
        lines.append(statute.preamble)
    last = None
    for a in articles:
        if a.heading != last and a.heading:
            lines.append(f"## {a.heading}")
            last = a.heading
        lines.append(a.text)
    return Document(
        id=statute.id,
        title=statute.title,
        text="\n\n".join(lines),
        metadata={
            "kind": "statute",
            "law": statute.title,
            "date": statute.date,
            "articles": len(articles),
            "role": kb_role,
        },
    )


def article_chunks(statute: Statute, articles: Sequence[Article]) -> list[Chunk]:
    """One chunk per article, titled ``《标题》第X条`` and prefixed by its chapter heading."""
    chunks = []
    for a in articles:
        prefix = f"《{statute.title}》{a.heading}\n" if a.heading else f"《{statute.title}》\n"
        chunks.append(
            Chunk(
                id=f"{statute.id}#{a.label}",
                doc_id=statute.id,
                text=prefix + a.text,
                title=f"{statute.short_title} {a.label}",
                parent_id=statute.id,
                metadata={
                    "kind": "article",
                    "law": statute.title,
                    "article": a.label,
                    "article_no": a.number,
                    "chapter": a.chapter,
                    "section": a.section,
                },
            )
        )
    return chunks
