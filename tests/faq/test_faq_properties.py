"""Property tests of the FAQ parsers: what is written is read back, the normal form is stable,
and no input makes the importer fail with anything but its own 4xx errors."""

from __future__ import annotations

import csv
import io
import json

import openpyxl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zhiwen.errors import ZhiwenError
from zhiwen.faq import FAQEntry, read_faq
from zhiwen.faq.contrast import differences
from zhiwen.faq.normalize import normalise_question

HAN = st.characters(min_codepoint=0x4E00, max_codepoint=0x9FA5)
TEXT = st.text(alphabet=st.one_of(HAN, st.sampled_from("abcXYZ0123 ，。？！、")), min_size=1, max_size=40)
# one cell of text: no line breaks in a question (a cell's lines are its questions)
QUESTION = TEXT.map(str.strip).filter(lambda t: normalise_question(t) != "")
# what a spreadsheet cell holds: letters, digits, punctuation, spaces and line breaks
ANSWER = (
    st.text(
        alphabet=st.one_of(st.characters(categories=("L", "N", "P", "Zs")), st.just("\n")),
        min_size=1,
        max_size=200,
    )
    .map(str.strip)
    .filter(bool)
)


@st.composite
def faqs(draw: st.DrawFn) -> list[FAQEntry]:
    n = draw(st.integers(1, 8))
    seen: set[str] = set()
    out = []
    for _ in range(n):
        asked = [
            q for q in draw(st.lists(QUESTION, min_size=1, max_size=4)) if normalise_question(q) not in seen
        ]
        if not asked:
            continue
        distinct = list({normalise_question(q): q for q in asked}.values())
        seen.update(normalise_question(q) for q in distinct)
        out.append(
            FAQEntry.create(
                distinct[0],
                draw(ANSWER),
                similar=distinct[1:],
                category=draw(st.sampled_from(["", "签证", "税费"])),
            )
        )
    return out or [FAQEntry.create("问题", "答案")]


def _as_csv(entries: list[FAQEntry]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["问题", "答案", "相似问题", "分类"])
    for e in entries:
        writer.writerow([e.question, e.answer, "\n".join(e.similar), e.category])
    return out.getvalue().encode("utf-8")


def _as_jsonl(entries: list[FAQEntry]) -> bytes:
    rows = [
        {"问题": e.question, "答案": e.answer, "相似问题": list(e.similar), "分类": e.category}
        for e in entries
    ]
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in rows).encode("utf-8")


def _as_xlsx(entries: list[FAQEntry]) -> bytes:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["问题", "答案", "相似问题", "分类"])
    for e in entries:
        sheet.append([e.question, e.answer, "\n".join(e.similar), e.category])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _key(entries: tuple[FAQEntry, ...] | list[FAQEntry]) -> list[tuple[str, str, tuple[str, ...], str, str]]:
    return [(e.id, e.question, e.similar, e.answer, e.category) for e in entries]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(faqs())
def test_csv_and_jsonl_read_back_what_was_written(entries: list[FAQEntry]) -> None:
    assert _key(read_faq(_as_csv(entries), file="f.csv").entries) == _key(entries)
    assert _key(read_faq(_as_jsonl(entries), file="f.jsonl").entries) == _key(entries)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(faqs())
def test_xlsx_reads_back_what_was_written(entries: list[FAQEntry]) -> None:
    assert _key(read_faq(_as_xlsx(entries), file="f.xlsx").entries) == _key(entries)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400), st.sampled_from(["f.csv", "f.tsv", "f.jsonl", "f.xlsx"]))
def test_any_bytes_are_read_or_refused_with_a_4xx_error(data: bytes, name: str) -> None:
    try:
        read_faq(data, file=name)
    except ZhiwenError as exc:
        assert 400 <= exc.http_status < 500 and exc.message


@given(TEXT)
def test_the_normal_form_is_idempotent_and_ignores_punctuation_spaces_and_width(text: str) -> None:
    once = normalise_question(text)
    assert normalise_question(once) == once
    noisy = " ".join(text) + "？！"
    assert normalise_question(noisy) == once
    wide = text.translate({c: c + 0xFEE0 for c in range(0x21, 0x7F)})
    assert normalise_question(wide) == once


@given(QUESTION)
def test_a_question_differs_in_nothing_from_itself(text: str) -> None:
    assert differences(text, text) == ()
