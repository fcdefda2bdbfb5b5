"""The advisor's two knowledge bases: statutes by article (``advisor_policy``) and the FAQ.

* ``advisor_policy``: the house-buying statutes of ``cn_law_subset`` (契税法, 增值税法,
  个人所得税法, 住房公积金管理条例 …), one chunk per article (第X条) with metadata ``city``
  (全国, or the city a local regulation belongs to), ``law``, ``article``, ``chapter``; plus one
  short document per dated rule of ``rules.toml`` (契税优惠, 首付比例, LPR, 公积金利率), so the
  rules the calculators use are searchable too.
* ``advisor_faq``: the FAQ shipped in ``data/faq.md``, one chunk per question.

Example::

    >>> docs, chunks = statute_documents(Path("../shared/data/cn_law_subset"), names=["契税法"])
    >>> chunks[2].title, chunks[2].metadata["city"]
    ('中华人民共和国契税法 第三条', '全国')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from zhiwen.apps.advisor.rules import RuleBook, get_rulebook
from zhiwen.apps.advisor.tools import FAQ_KB, NATIONAL, POLICY_KB
from zhiwen.chinese.places import find_cities
from zhiwen.corpora.statutes import Statute, parse_statute
from zhiwen.documents import Chunk, Document
from zhiwen.errors import IngestError

if TYPE_CHECKING:
    from zhiwen.appkit.app import AppContext

# the statutes of cn_law_subset a home buyer needs (file names start with these)
HOUSING_STATUTES = (
    "契税法",
    "增值税法",
    "个人所得税法",
    "住房公积金管理条例",
    "上海市住房公积金管理若干规定",
    "城市房地产管理法",
    "不动产登记暂行条例",
    "土地增值税暂行条例",
    "城市房地产开发经营管理条例",
    "物权编",
)
# the one statute the data names by its part: 民法典's 物权编
_PART_TITLES = {"物权编": "中华人民共和国民法典·物权编"}


def find_law_dir(data_dir: Path) -> Path:
    for candidate in (data_dir, data_dir / "cn_law_subset"):
        if any(candidate.glob("契税法*.md")):
            return candidate
    raise IngestError(f"no statutes (契税法*.md) under {data_dir}", message=f"未找到法规数据：{data_dir}")


def _law_files(law_dir: Path, names: Sequence[str]) -> list[tuple[str, Path]]:
    out = []
    for name in names:
        matches = sorted(p for p in law_dir.glob(f"{name}*.md") if p.stem.split("(")[0] == name)
        if matches:
            out.append((name, matches[0]))
    return out


def statute_documents(
    law_dir: Path, names: Sequence[str] = HOUSING_STATUTES
) -> tuple[list[Document], list[Chunk]]:
    """The statutes ``names`` as documents, chunked one article per chunk."""
    docs: list[Document] = []
    chunks: list[Chunk] = []
    for name, path in _law_files(law_dir, names):
        doc, doc_chunks = _statute_document(name, parse_statute(path))
        docs.append(doc)
        chunks += doc_chunks
    if not docs:
        raise IngestError(f"none of {list(names)} under {law_dir}", message=f"未找到购房相关法规：{law_dir}")
    return docs, chunks


def _statute_document(name: str, statute: Statute) -> tuple[Document, list[Chunk]]:
    """The whole statute as one document, and one chunk per article, its paragraphs a blank line
    apart as in the file (metadata: city, law, article, chapter)."""
    title = _PART_TITLES.get(name, statute.title)
    cities = find_cities(name)
    meta = {
        "city": cities[0] if cities else NATIONAL,
        "law": title,
        "source": title,
        "date": statute.date or None,
    }
    doc_id = f"law/{name}"
    chunks = [
        Chunk(
            id=f"{doc_id}#{a.label}",
            doc_id=doc_id,
            text="\n\n".join(p for p in a.paragraphs if not p.startswith("##")),
            title=f"{title} {a.label}",
            parent_id=doc_id,
            metadata={**meta, "article": a.label, "chapter": a.section or a.chapter},
        )
        for a in statute.articles
    ]
    return Document(id=doc_id, text=statute.source, title=title, metadata=meta), chunks


def rule_documents(book: RuleBook | None = None) -> tuple[list[Document], list[Chunk]]:
    """The dated rules of ``rules.toml`` as short searchable documents (city 全国)."""
    book = book or get_rulebook()
    items: list[tuple[str, str, str]] = []
    for rule in book.deed_tax_rules:
        end = f"，{rule.effective_to}止" if rule.effective_to else ""
        items.append(
            (
                f"rule/deed-{rule.id}",
                f"契税优惠：{rule.name}",
                f"{rule.summary}（{rule.effective_from}起{end}）依据：{rule.source}",
            )
        )
    items.append(
        (f"rule/{book.vat.id}", f"增值税：{book.vat.name}", f"{book.vat.summary} 依据：{book.vat.source}")
    )
    it = book.income_tax
    items.append((f"rule/{it.id}", f"个人所得税：{it.name}", f"{it.summary} 依据：{it.source}"))
    for dp in book.down_payment_rules:
        items.append(
            (
                f"rule/down-payment-{dp.effective_from}",
                "最低首付比例",
                f"{dp.summary}（{dp.effective_from}起）依据：{dp.source}",
            )
        )
    lpr = book.lpr(book.checked_on)
    items.append(
        (
            "rule/lpr",
            "贷款市场报价利率（LPR）",
            f"截至{lpr.date}：1年期LPR {lpr.one_year:g}%，5年期以上LPR {lpr.five_year:g}%。"
            + book.lpr_meta.note,
        )
    )
    fund = book.provident_fund(book.checked_on)
    items.append(
        (
            "rule/provident-fund",
            "个人住房公积金贷款利率",
            f"{fund.date}起：首套5年以下（含）{fund.first_home_5y_or_less:g}%，5年以上{fund.first_home_over_5y:g}%；"
            f"第二套5年以下（含）{fund.second_home_5y_or_less:g}%，5年以上{fund.second_home_over_5y:g}%。"
            f"{book.provident_fund_meta.note}",
        )
    )
    meta = {
        "city": NATIONAL,
        "law": "购房规则（本应用）",
        "source": "rules.toml",
        "checked_on": book.checked_on.isoformat(),
    }
    docs = [Document(id=i, text=t, title=title, metadata=meta) for i, title, t in items]
    chunks = [
        Chunk(id=f"{d.id}#0", doc_id=d.id, text=d.text, title=d.title, parent_id=d.id, metadata=dict(meta))
        for d in docs
    ]
    return docs, chunks


def faq_text() -> str:
    return resources.files("zhiwen.apps.advisor").joinpath("data/faq.md").read_text("utf-8")


def faq_documents(text: str | None = None) -> tuple[list[Document], list[Chunk]]:
    """The FAQ markdown (``## 类别`` / ``### 问题`` / answer) → one document per question."""
    text = faq_text() if text is None else text
    docs: list[Document] = []
    category = ""
    for block in re.split(r"^(?=#{2,3} )", text, flags=re.M):
        head, _, body = block.partition("\n")
        if head.startswith("## "):
            category = head[3:].strip()
        elif head.startswith("### ") and body.strip():
            question = head[4:].strip()
            answer = "".join(line.strip() for line in body.strip().splitlines())
            docs.append(
                Document(
                    id=f"faq/{len(docs) + 1:02d}",
                    text=f"{question}\n{answer}",
                    title=question,
                    metadata={"category": category, "city": NATIONAL, "source": "购房常见问题"},
                )
            )
    chunks = [
        Chunk(
            id=f"{d.id}#0", doc_id=d.id, text=d.text, title=d.title, parent_id=d.id, metadata=dict(d.metadata)
        )
        for d in docs
    ]
    return docs, chunks


def _index(ctx: AppContext, name: str, docs: list[Document], chunks: list[Chunk], progress: bool) -> int:
    from zhiwen.kb import open_kb

    kb = open_kb(name, settings=ctx.settings, create=True, app="advisor")
    kb.index_documents(docs, chunks=chunks, prune=True, progress=progress)
    return len(chunks)


def build_policy_kb(
    ctx: AppContext, law_dir: Path, *, names: Sequence[str] = HOUSING_STATUTES, progress: bool = True
) -> int:
    docs, chunks = statute_documents(law_dir, names)
    rule_docs, rule_chunks = rule_documents()
    return _index(ctx, POLICY_KB, docs + rule_docs, chunks + rule_chunks, progress)


def build_faq_kb(ctx: AppContext, *, progress: bool = True) -> int:
    docs, chunks = faq_documents()
    return _index(ctx, FAQ_KB, docs, chunks, progress)
