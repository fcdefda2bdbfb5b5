"""PRC statutes as LawRefBook markdown, read into articles under their chapter and section.

A statute file has a ``# 标题`` line, a preamble up to ``<!-- INFO END -->``, then ``## 第X章``
/ ``### 第X节`` headings and articles that each start a line with ``第X条``; an article's
paragraphs are the lines up to the next article or heading. The file name carries the
statute's date: ``出境入境管理法(2012-06-30).md``. Headings are kept with their whitespace
collapsed (``第一章  总则`` → ``第一章 总则``); a deeper heading (``#### 第一节``) is a paragraph
of the article it follows.

Example::

    >>> statute = parse_statute(Path("出境入境管理法(2012-06-30).md"))
    >>> statute.id, statute.title, statute.date
    ('出境入境管理法', '中华人民共和国出境入境管理法', '2012-06-30')
    >>> article = statute.articles[21]
    >>> article.label, article.number, article.chapter
    ('第二十二条', 22, '第三章 外国人入境出境')
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from zhiwen.chinese.numerals import cn_to_int

_ARTICLE = re.compile(r"^第([零〇一二三四五六七八九十百千两\d]+)条[ \u3000]?")
_HEADING = re.compile(r"^(#{1,3})\s+(.+?)\s*$")
_DATE_IN_NAME = re.compile(r"[(（](\d{4}-\d{2}-\d{2})[)）]")
INFO_END = "<!-- INFO END -->"


@dataclass(frozen=True, slots=True)
class Article:
    label: str  # 第二十二条
    number: int  # 22
    chapter: str  # 第三章 外国人入境出境
    section: str  # 第一节 签证 (or "")
    paragraphs: tuple[str, ...]  # its lines, stripped, blank ones dropped; the first starts with the label

    @property
    def heading(self) -> str:
        return " ".join(p for p in (self.chapter, self.section) if p)

    @property
    def text(self) -> str:
        """The article, its label included, one paragraph a line."""
        return "\n".join(self.paragraphs)


@dataclass(frozen=True, slots=True)
class Statute:
    id: str  # file stem without the date: 出境入境管理法
    title: str  # 中华人民共和国出境入境管理法 (the last ``#`` heading)
    date: str  # 2012-06-30 (from the file name) or ""
    path: Path
    preamble: str
    articles: tuple[Article, ...]
    source: str = field(repr=False, default="")  # the file's text as it is

    @property
    def short_title(self) -> str:
        return self.title.removeprefix("中华人民共和国")


@dataclass
class _Reading:
    """The state of one pass over a statute's lines."""

    title: str
    chapter: str = ""
    section: str = ""
    preamble: list[str] = field(default_factory=list)
    articles: list[Article] = field(default_factory=list)
    head: tuple[str, int, str, str] | None = None  # the open article: label, number, chapter, section
    lines: list[str] = field(default_factory=list)

    def flush(self) -> None:
        if self.head is not None:
            label, number, chapter, section = self.head
            paragraphs = tuple(line for line in self.lines if line.strip())
            self.articles.append(Article(label, number, chapter, section, paragraphs))
        self.head, self.lines = None, []

    def heading(self, level: int, name: str) -> None:
        if level == 1:
            self.title = name
            return
        self.flush()
        if level == 2:
            self.chapter, self.section = name, ""
        else:
            self.section = name

    def line(self, stripped: str) -> None:
        heading = _HEADING.match(stripped)
        if heading:
            self.heading(len(heading.group(1)), " ".join(heading.group(2).split()))
            return
        article = _ARTICLE.match(stripped)
        if article:
            self.flush()
            number = cn_to_int(article.group(1)) or 0
            self.head = (f"第{article.group(1)}条", number, self.chapter, self.section)
            self.lines = [stripped]
        elif self.head is not None:
            self.lines.append(stripped)
        elif stripped and "INFO END" not in stripped:
            self.preamble.append(stripped)


def parse_statute(path: Path) -> Statute:
    """One statute file → its title, date, preamble and articles (see the module docstring)."""
    text = path.read_text(encoding="utf-8")
    date = _DATE_IN_NAME.search(path.stem)
    statute_id = _DATE_IN_NAME.sub("", path.stem).strip()
    reading = _Reading(title=statute_id)
    for line in text.splitlines():
        reading.line(line.strip())
    reading.flush()
    return Statute(
        id=statute_id,
        title=reading.title,
        date=date.group(1) if date else "",
        path=path,
        preamble="\n".join(reading.preamble),
        articles=tuple(reading.articles),
        source=text,
    )


__all__ = ["INFO_END", "Article", "Statute", "parse_statute"]
