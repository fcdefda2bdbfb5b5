"""The offline condenser's rules, the LLM reply parser, and what must never happen (hypothesis)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.conversation.condense import condense, keeps_specific_words, parse_reply
from zhiwen.conversation.offline import OfflineCondenser
from zhiwen.conversation.vocabulary import Vocabulary, title_names

VOCABULARY = Vocabulary(
    {
        "北京大学法学院": "title",
        "北京大学物理学院": "title",
        "泰国": "country",
        "西班牙": "country",
        "红烧肉": "dish",
        "糖醋排骨": "dish",
        "宫保鸡丁": "dish",
        "建立知识库与导入格式": "title",
        "服务端口与配置": "title",
    }
)
CONDENSER = OfflineCondenser(VOCABULARY)


def turns(*pairs: tuple[str, str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for question, answer in pairs:
        out += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    return out


LAW = turns(("北京大学法学院是哪年成立的？", "1904年"))
VISA = turns(("中国公民去泰国需要签证吗？", "免签"))


@pytest.mark.parametrize(
    ("history", "question", "expected", "method"),
    [
        (LAW, "它在哪个校区？", "北京大学法学院在哪个校区？", "anaphora"),
        (LAW, "该学院开设了哪些课程？", "北京大学法学院开设了哪些课程？", "anaphora"),
        (LAW, "开设了哪些课程？", "北京大学法学院开设了哪些课程？", "subject"),
        (VISA, "那西班牙呢？", "中国公民去西班牙需要签证吗？", "substitution"),
        (turns(("红烧肉怎么做？", "……")), "这道菜要炖多久？", "红烧肉要炖多久？", "anaphora"),
        (turns(("红烧肉怎么做？", "……")), "要炖多久？", "红烧肉要炖多久？", "subject"),
        (turns(("红烧肉怎么做？", "……")), "那糖醋排骨呢？", "糖醋排骨怎么做？", "substitution"),
        (turns(("推荐一道川菜", "宫保鸡丁 [1]")), "要放辣椒吗？", "宫保鸡丁要放辣椒吗？", "subject"),
        # a follow-up of a follow-up: the topic is the one the second turn switched to
        (
            [*VISA, *turns(("那西班牙呢？", "需要申根签证"))],
            "需要什么材料？",
            "西班牙需要什么材料？",
            "subject",
        ),
    ],
)
def test_follow_ups(history: list[dict[str, Any]], question: str, expected: str, method: str) -> None:
    found = CONDENSER.condense(history, question)
    assert (found.question, found.method, found.changed) == (expected, method, True)


@pytest.mark.parametrize(
    "question",
    [
        "宫保鸡丁怎么做？",
        "怎么创建知识库？",
        "默认端口是多少？",
        "因此我想知道北京大学法学院在哪里",
        "其实我不太确定",
    ],
)
def test_standalone_questions_pass_unchanged(question: str) -> None:
    found = CONDENSER.condense(turns(("红烧肉怎么做？", "……")), question)
    assert found.question == question and not found.changed


def test_without_history_nothing_changes() -> None:
    assert not CONDENSER.condense([], "它在哪个校区？").changed
    assert not CONDENSER.condense([{"role": "system", "content": "你是助手"}], "它在哪？").changed


def test_titles_lose_their_decorations() -> None:
    assert title_names("《契税法》(2020-08-11)") == ["契税法"]
    assert title_names("红烧肉的做法") == ["红烧肉"] and title_names("法") == ["法"]


text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=200, deadline=None)
@given(first=text, answer=text, question=text)
def test_the_rules_never_fail_and_never_lose_a_named_entity(first: str, answer: str, question: str) -> None:
    found = CONDENSER.condense(turns((first, answer)), question)
    assert found.original == question
    named = [m.text for m in VOCABULARY.find(question)]
    if found.method in ("anaphora", "subject"):
        assert not named  # a question that names an entity keeps its own subject
    if not found.changed:
        assert found.question == question


@settings(max_examples=200, deadline=None)
@given(question=text)
def test_no_history_means_no_change(question: str) -> None:
    assert condense([], question, vocabulary=VOCABULARY).question == question.strip()


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("北京大学法学院在哪个校区？", "北京大学法学院在哪个校区？"),
        ("改写后的问题：北京大学法学院在哪个校区？\n（补全了主语）", "北京大学法学院在哪个校区？"),
        ("<think>用户在问法学院</think>「北京大学法学院在哪个校区？」", "北京大学法学院在哪个校区？"),
        ("<think>还没想完", None),
        ("", None),
        ("很" * 500, None),
    ],
)
def test_llm_replies_are_parsed_or_refused(reply: str, expected: str | None) -> None:
    assert parse_reply(reply, "它在哪个校区？") == expected


def test_a_rewrite_must_keep_the_questions_specific_words() -> None:
    assert keeps_specific_words("北京大学法学院默认端口是多少？", "默认端口是多少？")
    assert not keeps_specific_words("北京大学法学院在哪个校区？", "默认端口是多少？")
