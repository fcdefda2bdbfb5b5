"""Contrast checks: what makes a close question another question."""

from __future__ import annotations

import pytest

from zhiwen.faq.contrast import differences, negated, numbers


@pytest.mark.parametrize(
    ("question", "entry", "found"),
    [
        ("144小时过境免签是什么政策", "240小时过境免签是什么政策？", ("numbers",)),
        ("满二唯一是什么意思", "什么是满五唯一？有什么用？", ("numbers",)),
        ("Recall@100 是什么意思", "Recall@10 是什么意思？", ("numbers",)),
        ("哪些财产可以抵押", "哪些财产不得抵押？", ("polarity",)),
        ("外国人入境免签几天", "外国人出境需要什么？", ("opposite",)),
        ("支持导出哪些格式", "支持导入哪些文件格式？", ("opposite",)),
        ("美国公民来中国可以免签吗", "法国公民来中国可以免签吗？", ("names",)),
        ("中国公民去萨摩亚旅游免签吗", "萨摩亚公民来中国可以免签吗？", ("order",)),
        # the same question in other words: nothing
        ("能不能用公积金还房贷", "公积金可以用来付首付或还房贷吗？", ()),
        ("萨摩亚游客去中国免签吗", "萨摩亚公民来中国可以免签吗？", ()),
        ("免签30天是从入境当天算吗", "免签入境中国的停留天数怎么计算？", ()),
        ("外国人来华工作要办工作许可吗", "外国人在中国工作需要什么条件？", ()),
    ],
)
def test_differences(question: str, entry: str, found: tuple[str, ...]) -> None:
    assert differences(question, entry) == found


def test_numbers_and_polarity() -> None:
    assert numbers("首套房和二套房契税各多少？税率3%还是1.5%") == {"2", "3", "1.5"}
    assert numbers("一般要多久") == frozenset()
    assert negated("不动产登记要多久") is False  # 不动产 is a word, not a negation
    assert negated("是不是要交契税") is False and negated("不用交契税吗") is True
