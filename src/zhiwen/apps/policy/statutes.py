"""The policy app's use of statutes: which articles a KB keeps, and its documents and chunks.

Statutes are read by :mod:`zhiwen.corpora.statutes` (articles with their chapter and section);
:func:`select_articles` keeps those an :class:`ArticleSelector` asks for (by article number,
chapter/section heading or keyword), which is how the airline/crew KB takes only the crew,
transit and port provisions of a statute.

Each article becomes one chunk (id ``<statute>#<第X条>``) whose parent is the statute, so the
citation of a hit names the exact article.

Example::

    >>> from zhiwen.corpora.statutes import parse_statute
    >>> statute = parse_statute(Path("出境入境管理法(2012-06-30).md"))
    >>> sel = ArticleSelector(articles=("第二十二条",), keywords=("机组",))
    >>> [a.label for a in select_articles(statute, sel)][:1]
    ['第二十二条']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from zhiwen.corpora.statutes import Article, Statute
from zhiwen.documents import Chunk, Document


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
