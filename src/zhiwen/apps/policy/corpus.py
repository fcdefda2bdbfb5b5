"""Building the app's KB contents from a data directory, as :mod:`.kbconfig` describes them.

:func:`build_corpus` turns one KB entry's sources into documents and chunks (nothing is
indexed here); the app's ``setup`` indexes them. Kinds:

* ``visa_table`` — one document (and one chunk) per country row, plus the policy pages;
* ``statutes`` — one parent document per statute, one chunk per selected article;
* ``markdown`` — any markdown files, header-chunked.

Example::

    >>> cfg = load_kb_config()
    >>> corpus = build_corpus(cfg.kbs["visa"], Path("../shared/data"))
    >>> len([d for d in corpus.documents if d.id.startswith("country/")])
    82
"""

from __future__ import annotations

import logging
from pathlib import Path

from zhiwen.corpora.statutes import Article, Statute, parse_statute
from zhiwen.documents import Chunk, Document
from zhiwen.errors import IngestError
from zhiwen.ingest.base import Corpus
from zhiwen.ingest.chunking import chunk_markdown

from .countries import Gazetteer, default_gazetteer
from .kbconfig import KBEntry, SourceConfig
from .statutes import ArticleSelector, article_chunks, select_articles, statute_document
from .visa_table import load_visa_table, policy_doc_ids, policy_documents

log = logging.getLogger(__name__)


class _Parts:
    """What one KB entry's sources have given so far: documents, their chunks, notes."""

    def __init__(self) -> None:
        self.documents: list[Document] = []
        self.chunks: list[Chunk] = []
        self.notes: list[str] = []


def resolve(data_dir: Path, pattern: str) -> list[Path]:
    """Files under ``data_dir`` matching ``pattern`` (a relative path or glob), sorted."""
    if any(ch in pattern for ch in "*?["):
        return sorted(p for p in data_dir.glob(pattern) if p.is_file())
    path = data_dir / pattern
    return [path] if path.exists() else []


def single_chunk(doc: Document) -> Chunk:
    return Chunk(
        id=f"{doc.id}#0",
        doc_id=doc.id,
        text=doc.text,
        title=doc.title,
        parent_id=doc.id,
        metadata=dict(doc.metadata),
    )


def _visa_source(source: SourceConfig, data_dir: Path, gazetteer: Gazetteer, out: _Parts) -> None:
    files = resolve(data_dir, source.path)
    if not files:
        raise IngestError(
            f"no visa table at {data_dir / source.path}", message=f"导入失败：找不到免签政策表 {source.path}"
        )
    policies_dir = data_dir / source.policies if source.policies else None
    table = load_visa_table(files[0], gazetteer, policies_dir)
    page_ids = policy_doc_ids(policies_dir) if policies_dir is not None else {}
    for entry in table:
        doc = entry.to_document(policy_doc=page_ids.get(entry.policy_file, ""))
        out.documents.append(doc)
        out.chunks.append(single_chunk(doc))
    if table.unknown:
        out.notes.append(f"免签表中 {len(table.unknown)} 个国家名未识别：{', '.join(table.unknown)}")
    out.notes.append(f"免签表：{len(table)} 个国家")
    if policies_dir is not None:
        pages = policy_documents(table, policies_dir)
        for doc in pages:
            out.documents.append(doc)
            out.chunks.extend(chunk_markdown(doc))
        out.notes.append(f"政策说明：{len(pages)} 篇")


def _statute_source(
    source: SourceConfig, data_dir: Path, picked: dict[str, tuple[Statute, list[Article]]]
) -> None:
    files = resolve(data_dir, source.path)
    if not files:
        raise IngestError(
            f"no statute matches {data_dir / source.path}", message=f"导入失败：找不到法规文件 {source.path}"
        )
    selector = ArticleSelector(source.all_articles, source.articles, source.chapters, source.keywords)
    for path in files:
        statute = parse_statute(path)
        articles = select_articles(statute, selector)
        if not articles:
            log.warning("statute %s: no article selected", statute.id)
            continue
        _, kept = picked.setdefault(statute.id, (statute, []))
        known = {a.label for a in kept}
        kept.extend(a for a in articles if a.label not in known)


def _markdown_source(source: SourceConfig, data_dir: Path, out: _Parts) -> None:
    files = resolve(data_dir, source.path)
    if not files:
        raise IngestError(
            f"no markdown matches {data_dir / source.path}", message=f"导入失败：找不到文件 {source.path}"
        )
    for path in files:
        text = path.read_text(encoding="utf-8")
        title = next((ln.lstrip("# ").strip() for ln in text.splitlines() if ln.startswith("# ")), path.stem)
        doc_id = (
            str(path.relative_to(data_dir).with_suffix("")) if path.is_relative_to(data_dir) else path.stem
        )
        doc = Document(id=doc_id, text=text, title=title, metadata={"kind": "markdown"})
        out.documents.append(doc)
        out.chunks.extend(chunk_markdown(doc))


def build_corpus(
    kb: KBEntry, data_dir: Path, gazetteer: Gazetteer | None = None, *, role: str = ""
) -> Corpus:
    """Documents and chunks of one KB entry, and notes on them (``warnings``: 「免签表：82 个国家」);
    ``IngestError`` when a source is missing."""
    gazetteer = gazetteer or default_gazetteer()
    out = _Parts()
    statutes: dict[str, tuple[Statute, list[Article]]] = {}
    for source in kb.sources:
        if source.kind == "visa_table":
            _visa_source(source, data_dir, gazetteer, out)
        elif source.kind == "statutes":
            _statute_source(source, data_dir, statutes)
        else:
            _markdown_source(source, data_dir, out)
    for statute, articles in statutes.values():
        articles.sort(key=lambda a: a.number)
        out.documents.append(statute_document(statute, articles, kb_role=role or kb.name))
        out.chunks.extend(article_chunks(statute, articles))
    if statutes:
        n_articles = sum(len(a) for _, a in statutes.values())
        out.notes.append(f"法规：{len(statutes)} 部，{n_articles} 条")
    return Corpus(out.documents, out.chunks, warnings=out.notes)
