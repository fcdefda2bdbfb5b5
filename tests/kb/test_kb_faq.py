"""A KB's FAQ entries kept as curated chunks: put, update, found by retrieval, matched."""

from __future__ import annotations

from pathlib import Path

from zhiwen.faq import FAQEntry, FAQMatch
from zhiwen.kb import open_kb
from zhiwen.kb.faq import FAQ_DOC, faq_entries, faq_matcher, put_faq_entries


def _entries() -> list[FAQEntry]:
    return [
        FAQEntry.create("怎么导入 PDF？", "在「文档」页点「上传」即可。", similar=["PDF 如何上传"]),
        FAQEntry.create("支持哪些文件格式？", "支持 PDF、Word、Excel、PPT 和纯文本。", category="格式"),
    ]


def test_put_update_and_match(zhiwen_home: Path) -> None:
    kb = open_kb("faqkb", create=True, embedder="hash")
    report = put_faq_entries(kb, _entries(), actor="k1")
    assert (report.added, report.updated) == (2, 0)
    assert {e.question for e in faq_entries(kb)} == {"怎么导入 PDF？", "支持哪些文件格式？"}
    again = put_faq_entries(kb, _entries(), actor="k1")
    assert (again.added, again.updated, again.unchanged) == (0, 0, 2)

    changed = _entries()
    changed[0] = FAQEntry.create(changed[0].question, "新的答案：拖进上传框。", similar=changed[0].similar)
    assert put_faq_entries(kb, changed, actor="k1").updated == 1
    assert any(e.answer == "新的答案：拖进上传框。" for e in faq_entries(kb))

    matcher = faq_matcher(kb)
    assert matcher is not None and len(matcher) == 2
    decision = matcher.match("怎么导入PDF")  # the exact normal form of the main question
    assert isinstance(decision, FAQMatch) and decision.entry.answer == "新的答案：拖进上传框。"

    hits = kb.search("PDF 如何上传", top_k=3)
    assert hits and hits[0].chunk.doc_id == FAQ_DOC
