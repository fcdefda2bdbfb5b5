"""An FAQ export is a file the importer reads back to the same entries (CSV with a BOM, JSONL)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.faq import FAQEntry, normalise_question, read_faq
from zhiwen.owner.faq import ExportFormat, export_entries

_CHARS = st.sampled_from(list("怎么退货换发票客服电话多少钱天abcXYZ0129 ,，。？\"'、;：-"))
_LINE = st.text(_CHARS, min_size=1, max_size=30).filter(lambda s: normalise_question(s) != "")


@st.composite
def entries(draw: st.DrawFn) -> list[FAQEntry]:
    questions = draw(st.lists(_LINE, min_size=1, max_size=6, unique_by=normalise_question))
    out: list[FAQEntry] = []
    for i, question in enumerate(questions):
        answer = draw(st.text(_CHARS | st.just("\n"), min_size=1, max_size=60).filter(str.strip))
        category = draw(st.sampled_from(["", "售后", "发票"]))
        out.append(
            FAQEntry.create(question, answer, category=category, enabled=draw(st.booleans()), id=f"e{i}")
        )
    return out


@settings(max_examples=40, deadline=None)
@given(entries(), st.sampled_from(["csv", "jsonl"]))
def test_export_reads_back(items: list[FAQEntry], fmt: ExportFormat) -> None:
    data = "".join(export_entries(items, fmt)).encode("utf-8")
    assert list(read_faq(data, file=f"faq.{fmt}").entries) == items
