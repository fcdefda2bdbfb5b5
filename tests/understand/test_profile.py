"""Query-intent profiler (seed 004 §4.1): keywords, case, ties, empty, overrides."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zhiwen.understand.profile import DEFAULT_KEYWORDS, QueryIntent, QueryProfiler

P = QueryProfiler()


@pytest.mark.parametrize(
    ("query", "intent"),
    [
        ("总结一下各种面条的做法", QueryIntent.BROAD),
        ("比较 bm25 和向量检索", QueryIntent.BROAD),
        ("Give me an OVERVIEW of zhiwen", QueryIntent.BROAD),
        ("宫保鸡丁怎么做", QueryIntent.FOCUSED),
        ("安装的步骤是什么", QueryIntent.FOCUSED),
        ("How to create a knowledge base", QueryIntent.FOCUSED),
        ("安装时报错怎么办", QueryIntent.TROUBLESHOOT),  # tie focused/troubleshoot → troubleshoot
        ("Build FAILED with errors", QueryIntent.TROUBLESHOOT),
        ("这份文档讲了什么", QueryIntent.DOC_SPECIFIC),
        ("summarize this document", QueryIntent.DOC_SPECIFIC),
        ("宫保鸡丁", QueryIntent.UNKNOWN),
        ("", QueryIntent.UNKNOWN),
        ("   ", QueryIntent.UNKNOWN),
        ("prefix tree", QueryIntent.UNKNOWN),  # "fix" only at a word start
        ("Ошибка сервера", QueryIntent.UNKNOWN),  # unknown language
    ],
)
def test_classify(query: str, intent: QueryIntent) -> None:
    assert P.classify(query) is intent


def test_more_hits_win() -> None:
    assert P.classify("报错 失败 无法启动，如何解决") is QueryIntent.TROUBLESHOOT
    assert P.scores("总结并比较")[QueryIntent.BROAD] == 2


def test_override_replaces_one_intent() -> None:
    prof = QueryProfiler({"broad": ["盘点"], "TROUBLESHOOT": ["卡住"]})
    assert prof.classify("盘点家常菜") is QueryIntent.BROAD
    assert prof.classify("总结一下") is QueryIntent.UNKNOWN  # default broad words replaced
    assert prof.classify("程序卡住了") is QueryIntent.TROUBLESHOOT
    assert prof.classify("如何安装") is QueryIntent.FOCUSED  # untouched intents keep defaults


def test_unknown_intent_key_rejected() -> None:
    with pytest.raises(ValueError):
        QueryProfiler({"weird": ["x"]})


def test_every_default_keyword_classifies_alone() -> None:
    for key, words in DEFAULT_KEYWORDS.items():
        for word in words:
            assert P.scores(word)[QueryIntent(key)] >= 1, word


@given(st.text(max_size=50))
def test_never_raises(text: str) -> None:
    assert isinstance(P.classify(text), QueryIntent)
