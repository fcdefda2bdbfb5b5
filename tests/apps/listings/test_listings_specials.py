"""Special requirements, soft negations and negation scope (:mod:`.specials`, :mod:`.negation`)."""

from __future__ import annotations

from typing import Any

import pytest
from req_check import run_case

from zhiwen.apps.listings.negation import is_negated

CASES: list[tuple[str, dict[str, Any]]] = [
    ("远离高架", {"negations+": ["高架"]}),
    ("不要临街的，太吵", {"negations+": ["临街"]}),
    ("不要老公房", {"negations+": ["公房"]}),
    ("不要动迁房", {"negations+": ["动迁房"]}),
    ("满五唯一，税费少", {"special+": ["满五唯一"]}),
    ("有车位，近公园", {"special+": ["停车", "近公园"]}),
    ("采光好、安静", {"special+": ["采光", "安静"]}),
    ("性价比高的学区房，别太贵", {"special+": ["学区", "低总价"]}),
    ("地铁11号线附近", {"special+": ["地铁"]}),
    ("不要朝北", {"negations+": ["朝北"], "exclude_north": True}),
    ("远离垃圾站", {"negations+": ["垃圾站"]}),  # unknown words stay soft negations
    ("不要浦东的", {"negations-": ["浦东"], "exclude": ["浦东新区"]}),  # a place, not a word
    ("不要塔楼", {"negations-": ["塔楼"]}),  # a hard building-type exclusion instead
    ("毛坯不要", {"decoration_exclude": ["毛坯"]}),  # a rejection after the word
    ("高架旁边的不考虑", {"negations+": ["高架"]}),
]


@pytest.mark.parametrize(("question", "expected"), CASES, ids=[c[0] for c in CASES])
def test_specials(question: str, expected: dict[str, Any]) -> None:
    run_case(question, expected)


@pytest.mark.parametrize(
    ("text", "word", "negated"),
    [
        ("不要毛坯", "毛坯", True),
        ("不要毛坯，要精装", "精装", False),
        ("远离高架", "高架", True),
        ("要电梯房", "电梯", False),
        ("别太吵", "吵", True),
        ("不想要低楼层和顶楼", "顶楼", True),
        ("不要低楼层的两房", "两房", False),
        ("不要临街的房子", "临街", True),
    ],
)
def test_negation_scope(text: str, word: str, negated: bool) -> None:
    assert is_negated(text, text.index(word)) is negated


@pytest.mark.parametrize(
    ("text", "word", "negated"),
    [
        ("顶楼不要", "顶楼", True),
        ("一楼二楼都不要，其他都行", "一楼", True),
        ("毛坯的不考虑。", "毛坯", True),
        ("一楼不要太吵", "一楼", False),  # the clause goes on: not a rejection of 一楼
        ("要一楼，顶楼不要", "一楼", False),
    ],
)
def test_rejection_after_the_word(text: str, word: str, negated: bool) -> None:
    start = text.index(word)
    assert is_negated(text, start, end=start + len(word)) is negated
