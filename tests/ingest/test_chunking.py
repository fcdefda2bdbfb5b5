"""Header chunking: structure on examples, and properties under hypothesis."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.documents import Document
from zhiwen.ingest.chunking import (
    chunk_documents,
    chunk_markdown,
    chunk_spans,
    merge_header_only,
    split_sections,
    split_text,
)

RECIPE = """# 宫保鸡丁的做法

川菜名菜。

预估烹饪难度：★★★★

## 必备原料和工具

- 鸡胸肉
- 花生

### 可选原料

- 莴笋

## 操作

### 简易版本

- 鸡肉切丁，腌制 10 分钟。
- 热锅下油，炒香辣椒。

```bash
# 这不是标题
```

## 附加内容

好吃。
"""


def _doc(text: str, doc_id: str = "meat_dish/宫保鸡丁", **meta: object) -> Document:
    return Document(id=doc_id, text=text, title="宫保鸡丁的做法", metadata=dict(meta))


def test_sections_parents_and_ids() -> None:
    chunks = chunk_markdown(_doc(RECIPE, category="meat_dish", difficulty=4), max_chars=800, overlap=80)
    assert [c.metadata["section"] for c in chunks] == [
        "宫保鸡丁的做法",
        "宫保鸡丁的做法 > 必备原料和工具",
        "宫保鸡丁的做法 > 必备原料和工具 > 可选原料",
        "宫保鸡丁的做法 > 操作 > 简易版本",  # the header-only "## 操作" merged into the next
        "宫保鸡丁的做法 > 附加内容",
    ]
    assert [c.id for c in chunks] == [f"meat_dish/宫保鸡丁#{i}" for i in range(5)]
    for i, c in enumerate(chunks):
        assert c.parent_id == c.doc_id == "meat_dish/宫保鸡丁"
        assert c.title == "宫保鸡丁的做法"
        assert c.metadata["category"] == "meat_dish" and c.metadata["difficulty"] == 4
        assert c.metadata["chunk_index"] == i
    assert chunks[3].text.startswith("## 操作\n\n### 简易版本")
    assert "# 这不是标题" in chunks[3].text  # code fences are not headers


def test_level_four_headers_stay_inside() -> None:
    chunks = chunk_markdown(_doc("# T\n\n#### 小贴士\n内容\n"), max_chars=800, overlap=0)
    assert len(chunks) == 1 and "#### 小贴士" in chunks[0].text


def test_no_headers_and_trailing_header() -> None:
    chunks = chunk_markdown(_doc("只有一段话。"), max_chars=800, overlap=0)
    assert [(c.text, c.metadata["section"]) for c in chunks] == [("只有一段话。", "")]
    chunks = chunk_markdown(_doc("# A\n正文\n## 结尾\n"), max_chars=800, overlap=0)
    assert len(chunks) == 1 and chunks[0].text.endswith("## 结尾")


def test_long_section_splits_on_sentences() -> None:
    body = "".join(f"第{i}句话讲一件事情。" for i in range(100))
    chunks = chunk_markdown(_doc(f"# 标题\n\n## 长节\n\n{body}\n"), max_chars=120, overlap=20)
    long = [c for c in chunks if c.metadata["section"] == "标题 > 长节"]
    assert len(long) > 5
    assert all(len(c.text) <= 120 for c in chunks)
    assert all(c.text.endswith("。") for c in long[:-1])  # cut after a sentence end
    assert long[0].text.startswith("# 标题\n\n## 长节\n\n第0句")  # headers stay with their body
    assert len({c.metadata["section"] for c in long}) == 1


def test_defaults_come_from_settings(zhiwen_home: object, monkeypatch: object) -> None:
    import pytest

    from zhiwen.config import reset_settings_cache

    mp: pytest.MonkeyPatch = monkeypatch  # type: ignore[assignment]
    mp.setenv("ZHIWEN_RETRIEVAL__CHUNK_MAX_CHARS", "60")
    mp.setenv("ZHIWEN_RETRIEVAL__CHUNK_OVERLAP_CHARS", "0")
    reset_settings_cache()
    chunks = chunk_documents([_doc("# 标题\n\n" + "一句话。" * 50)])
    assert len(chunks) > 3 and all(len(c.text) <= 60 for c in chunks)


# -- properties -------------------------------------------------------------------------------
_line = st.one_of(
    st.text(alphabet="宫保鸡丁做法。！？，abc 12\t", min_size=0, max_size=60),
    st.builds(
        lambda n, t: "#" * n + " " + t,
        st.integers(1, 4),
        st.text(alphabet="标题甲乙", min_size=1, max_size=6),
    ),
    st.just("```"),
    st.just(""),
)
_markdown = st.lists(_line, min_size=0, max_size=40).map("\n".join)


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet="甲乙丙。！？，\n a.", min_size=0, max_size=600),
    max_chars=st.integers(1, 120),
    overlap=st.integers(0, 60),
)
def test_split_text_is_exact_cover_within_cap(text: str, max_chars: int, overlap: int) -> None:
    pieces = split_text(text, max_chars, overlap)
    assert all(len(p) <= max_chars for _, p in pieces)
    assert all(text[s : s + len(p)] == p for s, p in pieces)
    # contiguous cover: each piece starts at or before the end of the previous one
    end = 0
    for s, p in pieces:
        assert s <= end
        end = max(end, s + len(p))
    assert end == len(text) and pieces[0][0] == 0


@settings(max_examples=200, deadline=None)
@given(text=_markdown)
def test_sections_concatenate_to_the_document(text: str) -> None:
    secs = split_sections(text)
    assert "".join(s.text for s in secs) == text
    assert "".join(s.text for s in merge_header_only(secs)) == text


@settings(max_examples=200, deadline=None)
@given(text=_markdown, max_chars=st.integers(20, 300), overlap=st.integers(0, 40))
def test_chunks_cover_capped_unique_deterministic(text: str, max_chars: int, overlap: int) -> None:
    doc = _doc(text, doc_id="d")
    chunks = chunk_markdown(doc, max_chars, overlap)
    assert chunk_markdown(doc, max_chars, overlap) == chunks
    ids = [c.id for c in chunks]
    assert ids == [f"d#{i}" for i in range(len(chunks))] and len(set(ids)) == len(ids)
    assert all(len(c.text) <= max_chars and c.text.strip() for c in chunks)
    # every chunk is a span of the document, and every non-blank character is in some chunk
    spans = chunk_spans(text, max_chars, overlap)
    assert [text[a:b] for a, b, _ in spans] == [c.text for c in chunks]
    assert [sec for _, _, sec in spans] == [c.metadata["section"] for c in chunks]
    covered = [False] * len(text)
    for a, b, _ in spans:
        covered[a:b] = [True] * (b - a)
    assert all(covered[i] or text[i].isspace() for i in range(len(text)))
