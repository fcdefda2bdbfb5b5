"""Dictionary and synonym files: both synonym layouts, encodings, row-numbered Chinese errors, and
export → import round trips (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.curation.csvio import export_dictionary, export_synonyms, parse_dictionary, parse_synonyms
from zhiwen.errors import InvalidParameter

# terms as owners write them: Chinese, letters, digits, inner punctuation
TERM = st.text(
    alphabet=st.sampled_from(list("土豆马铃薯洋芋西红柿番茄知识库问答ABCxyz019-_.·（）")),
    min_size=1,
    max_size=8,
)


def test_fastgpt_layout() -> None:
    text = "标准词,同义词1,同义词2,同义词3\n土豆,马铃薯,洋芋,\n西红柿,番茄,,\n"
    assert parse_synonyms(text) == (("土豆", "马铃薯", "洋芋"), ("西红柿", "番茄"))


def test_plain_layout_separators_and_blank_lines() -> None:
    text = "土豆 马铃薯\t洋芋\n\n西红柿、番茄，柿子\n"
    assert parse_synonyms(text) == (("土豆", "马铃薯", "洋芋"), ("西红柿", "番茄", "柿子"))


def test_encodings_and_bom() -> None:
    text = "标准词,同义词1\n土豆,马铃薯\n"
    for data in (text.encode("utf-8-sig"), text.encode("gb18030"), "\ufeff" + text):
        assert parse_synonyms(data) == (("土豆", "马铃薯"),)
    with pytest.raises(InvalidParameter, match="编码"):
        parse_synonyms(b"\xff\xfe\x00\xd8bad")


@pytest.mark.parametrize(
    ("text", "row", "words"),
    [
        ("土豆,马铃薯\n洋芋\n", 2, "至少要有两个"),
        ("土豆,马铃薯\n洋芋,土豆\n", 2, "已出现在第 1 行"),
        ("标准词,同义词1\n土豆,马铃薯\n番茄," + "番" * 65 + "\n", 3, "过长"),
        ("标准词,同义词1\n土豆,马铃薯\n土豆,土豆\n", 3, "至少要有两个"),
    ],
)
def test_row_numbered_errors(text: str, row: int, words: str) -> None:
    with pytest.raises(InvalidParameter) as err:
        parse_synonyms(text)
    assert err.value.data == {"row": row}
    assert err.value.message.startswith(f"第 {row} 行：") and words in err.value.message


def test_dictionary_layouts() -> None:
    assert parse_dictionary("词条\n知识库管理员\n宫保鸡丁 10 n\n知识库管理员\nModel X,备注\n") == (
        "知识库管理员",
        "宫保鸡丁",
        "Model X",
    )
    with pytest.raises(InvalidParameter) as err:
        parse_dictionary("好词\n" + "长" * 65 + "\n")
    assert err.value.data == {"row": 2}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(TERM, min_size=2, max_size=5, unique=True), max_size=6))
def test_synonyms_round_trip(raw: list[list[str]]) -> None:
    seen: set[str] = set()
    groups = []
    for group in raw:  # a term in one group only (case-insensitively), as the parser requires
        kept = [t for t in group if t.lower() not in seen]
        seen.update(t.lower() for t in kept)
        if len({t.lower() for t in kept}) == len(kept) >= 2:
            groups.append(tuple(kept))
    assert parse_synonyms(export_synonyms(groups)) == tuple(groups)


@settings(max_examples=60, deadline=None)
@given(st.lists(TERM, max_size=20, unique=True))
def test_dictionary_round_trip(words: list[str]) -> None:
    words = [w for w in words if w.lower() not in {"词条", "词", "词语", "word", "words"}]
    assert parse_dictionary(export_dictionary(words)) == tuple(words)
