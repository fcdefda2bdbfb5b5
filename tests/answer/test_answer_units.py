"""Answer units: sentences, list items, table rows and code blocks, with their heading paths."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from zhiwen.answer.units import plain_text, split_sentences, split_units
from zhiwen.documents import Document

MANUAL = """# 手册

## 导入文档

用 `zhiwen index` 命令导入：

```bash
zhiwen index --kb manual ./docs
```

### 格式

- **Markdown**：默认格式。
- CSV
  - 嵌套的一项

| 名称 | 说明 |
|---|---|
| beir | 评测格式 |
| csv | 记录 |

    缩进的一行仍是正文。
"""


def _doc(text: str, title: str = "手册") -> Document:
    return Document(id="d", text=text, title=title)


def test_markdown_blocks_become_units_with_heading_paths() -> None:
    doc = split_units(_doc(MANUAL))
    kinds = [(u.kind, u.path) for u in doc.units]
    assert kinds[0] == ("sentence", ("手册", "导入文档"))
    code = next(u for u in doc.units if u.kind == "code")
    assert code.text == "```bash\nzhiwen index --kb manual ./docs\n```" and code.path == ("手册", "导入文档")
    items = [u for u in doc.units if u.kind == "item"]
    assert [u.plain for u in items] == ["Markdown：默认格式。", "CSV 嵌套的一项"]
    assert items[1].text == "- CSV\n  - 嵌套的一项"  # nested items stay inside their item
    assert all(u.path == ("手册", "导入文档", "格式") for u in items)
    rows = [u for u in doc.units if u.kind == "row"]
    assert [u.plain for u in rows] == ["名称：beir；说明：评测格式", "名称：csv；说明：记录"]
    table = doc.blocks[rows[0].block]
    assert table.kind == "table" and table.header == "| 名称 | 说明 |\n|---|---|"
    # indented text is prose, not code (indented code is off)
    assert doc.units[-1].kind == "sentence" and doc.units[-1].plain == "缩进的一行仍是正文。"
    assert doc.structured


def test_headers_inside_code_are_not_headings() -> None:
    doc = split_units(_doc("# 甲\n\n```\n# 不是标题\n```\n\n正文一句话。"))
    assert [u.path for u in doc.units] == [("甲",), ("甲",)]


def test_plain_text_skips_the_parser() -> None:
    text = "海外网1月1日电 据报道，事故已造成12人死亡。另有14人受伤！\n第二行是另一句\n\n新段落。"
    doc = split_units(Document(id="p", text=text))
    assert not doc.structured
    assert [u.text for u in doc.units] == [
        "海外网1月1日电 据报道，事故已造成12人死亡。",
        "另有14人受伤！",
        "第二行是另一句",
        "新段落。",
    ]
    assert len(doc.blocks) == 2


def test_sentences_keep_quotes_and_join_fragments() -> None:
    assert split_sentences("他说：“我们走吧。”然后离开了。注：无。最后一句") == [
        "他说：“我们走吧。”",
        "然后离开了。",
        "注：无。最后一句",
    ]
    # decimals and abbreviations do not end sentences; English sentences do
    assert split_sentences("营收3.5亿元，同比增长。Feist Inc., v. Rural 案。") == [
        "营收3.5亿元，同比增长。",
        "Feist Inc., v. Rural 案。",
    ]
    assert split_sentences("It rained. Then it stopped.") == ["It rained.", "Then it stopped."]


def test_plain_text_of_inline_markdown() -> None:
    assert plain_text("用 `zhiwen index` 和 **[链接](http://x)** 导入") == "用 zhiwen index 和 链接 导入"


@given(st.text(alphabet="甲乙丙。！？；，\n ab.", max_size=80))
def test_sentences_lose_no_text(text: str) -> None:
    joined = "".join(split_sentences(text))
    assert "".join(joined.split()) == "".join(text.split())


def test_units_are_cached_by_content() -> None:
    a = split_units(_doc("# 甲\n\n一句话。"))
    assert split_units(_doc("# 甲\n\n一句话。")) is a
    assert split_units(_doc("# 甲\n\n另一句话。")) is not a
