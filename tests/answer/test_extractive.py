"""Extractive answer composition and prompt layout."""

from __future__ import annotations

from zhiwen.answer.extractive import (
    compose_list,
    compose_passages,
    compose_sections,
    extractive_note,
    markdown_sections,
    truncate,
    with_note,
)
from zhiwen.answer.prompts import numbered_context, qa_messages
from zhiwen.documents import Document

RECIPE = """# 测试菜的做法

简介一段。

预估烹饪难度：★★

## 必备原料和工具

- 鸡蛋
- 盐

## 计算

- 鸡蛋 = 2 个

## 操作

### 简易版本

1. 打蛋
2. 炒

```
## 不是标题
```

## 附加内容

无
"""


def test_markdown_sections() -> None:
    sections = markdown_sections(RECIPE)
    assert list(sections) == ["必备原料和工具", "计算", "操作", "附加内容"]
    assert "### 简易版本" in sections["操作"] and "## 不是标题" in sections["操作"]


def test_compose_sections() -> None:
    doc = Document(id="d", text=RECIPE, title="测试菜的做法")
    text = compose_sections(doc, ["必备原料和工具", "操作"], cite=1, optional=["计算"])
    assert text.startswith("测试菜的做法 [1]")
    assert text.index("【必备原料和工具】") < text.index("【操作】") < text.index("【计算】")
    assert "附加内容" not in text
    # no such sections: the opening text instead, still cited
    plain = compose_sections(Document(id="p", text="只有一段话。", title="P"), ["操作"], cite=2)
    assert plain == "P [2]\n只有一段话。"


def test_compose_list_and_passages() -> None:
    assert compose_list([("西红柿炒鸡蛋", "素菜 · ★★", 1), ("冰粉", "", 2)]) == (
        "1. 西红柿炒鸡蛋（素菜 · ★★）[1]\n2. 冰粉[2]"
    )
    text = compose_passages([("标题", "正文  内容\n换行", 1)])
    assert text == "[1] 标题：正文 内容 换行"


def test_notes_never_pretend() -> None:
    assert "未配置大模型" in extractive_note("no_llm")
    assert "超时" in extractive_note("timeout")
    for reason in ("http_error", "empty", "bad_reply", "whatever"):
        assert "大模型调用失败" in extractive_note(reason)
    assert with_note("no_llm", "正文").startswith(extractive_note("no_llm") + "\n\n")


def test_truncate() -> None:
    assert truncate("短", 10) == "短"
    long = "第一句。" * 50
    cut = truncate(long, 30)
    assert cut.endswith("。……") and len(cut) <= 32


def test_prompt_layout() -> None:
    msgs = qa_messages("怎么做？", [("A", "内容A"), ("B", "内容B")], domain="菜谱")
    assert msgs[0]["role"] == "system" and "菜谱" in msgs[0]["content"]
    user = msgs[1]["content"]
    assert user.startswith("Context:\n[1] A\n内容A\n\n[2] B\n内容B\n\nQuestion:\n怎么做？\n\n")
    assert "Answer using only the context" in user
    assert numbered_context([]) == ""
