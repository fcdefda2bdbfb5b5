"""Two kinds of follow-up the offline rules read: an ordinal (「那第二个呢？」) picks an item of the
list an answer enumerated and is never a name, and a sibling's part-name (「那外国语学院呢？」)
keeps the parent the conversation established (tiny vocabularies; hypothesis for what must
never happen).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from zhiwen.conversation.offline import OfflineCondenser
from zhiwen.conversation.slots import listed_items, ordinal_in
from zhiwen.conversation.vocabulary import titles_vocabulary

UNIVERSITIES = ("东湖大学", "西岭大学", "南江大学")
COLLEGES = ("计算机科学与技术学院", "外国语学院", "法学院")
HEADINGS = ("概况", "本科生培养", "联系方式")
MAJORS = ("计算机科学与技术", "软件工程", "人工智能")
TITLES = [f"{u}{c}{h}" for u in UNIVERSITIES for c in COLLEGES for h in HEADINGS] + [
    f"{u}计算机科学与技术学院{m}专业介绍" for u in UNIVERSITIES for m in MAJORS
]
CONDENSER = OfflineCondenser(titles_vocabulary(TITLES))
TOPIC = "东湖大学计算机科学与技术学院"
DISHES = ("红烧肉", "糖醋排骨", "宫保鸡丁", "鱼香肉丝", "麻婆豆腐")
NUMERALS = "一二三四五六七八九十"


def turns(*pairs: tuple[str, str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for question, answer in pairs:
        out += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    return out


COLLEGES_LISTED = turns(
    ("东湖大学有哪些学院？", "东湖大学设有：\n1. **计算机科学与技术学院** [1]\n2. 外国语学院\n3. 法学院")
)
MAJORS_LISTED = turns(
    (f"{TOPIC}有哪些本科专业？", "学院设有计算机科学与技术、软件工程和人工智能等3个本科专业。[1]")
)


# -- reading ordinals and lists ------------------------------------------------------------------
def test_ordinals_are_read_and_articles_or_counts_are_not() -> None:
    assert [ordinal_in(q).index for q in ("第一个", "第十二项", "最后一个", "倒数第二个")] == [0, 11, -1, -2]  # type: ignore[union-attr]
    assert [ordinal_in(q).step for q in ("上一个呢", "下一个呢")] == [-1, 1]  # type: ignore[union-attr]
    assert all(
        ordinal_in(q) is None for q in ("第十二条规定了什么？", "第二学位怎么申请？", "第一次去要带什么？")
    )


def test_lists_are_read_from_numbered_lines_and_from_one_sentence() -> None:
    assert listed_items(COLLEGES_LISTED[1]["content"]) == ["计算机科学与技术学院", "外国语学院", "法学院"]
    assert listed_items(MAJORS_LISTED[1]["content"]) == ["计算机科学与技术", "软件工程", "人工智能"]
    assert listed_items("学院始建于1978年，位于东校区。") == []
    assert listed_items("1.5亿元\n2.3万元") == []  # amounts, not numbered lines


def test_an_answers_list_of_sources_is_not_what_an_ordinal_picks_from() -> None:
    extract = (
        "学院设有软件工程、人工智能和网络空间安全等3个本科专业。[1]\n\n**相关段落**\n\n"
        "- [1] 东湖大学计算机学院本科生培养\n- [2] 西岭大学计算机学院本科生培养：学院设有软件工程。"
    )
    assert listed_items(extract) == ["软件工程", "人工智能", "网络空间安全"]


@given(
    st.lists(st.sampled_from(DISHES), min_size=3, max_size=5, unique=True),
    st.sampled_from(("和", "及", "、")),
)
def test_an_inline_list_gives_its_items_in_order(items: list[str], last: str) -> None:
    text = "推荐" + "、".join(items[:-1]) + last + items[-1] + "等几道菜。"
    assert listed_items(text) == items


# -- ordinals ------------------------------------------------------------------------------------
def test_the_second_after_a_question_about_the_first_asks_the_same_of_the_second() -> None:
    history = COLLEGES_LISTED + turns(("第一个的本科生培养有什么要求？", "学院本科生须修满160学分。"))
    found = CONDENSER.condense(history, "那第二个呢？")
    assert found.question == "东湖大学外国语学院的本科生培养有什么要求？"
    assert found.method == "ordinal" and found.topic == "东湖大学外国语学院"
    assert found.focus == ("东湖大学外国语学院",)
    assert CONDENSER.condense(history, "最后一个呢？").question == "东湖大学法学院的本科生培养有什么要求？"


def test_an_ordinal_with_its_noun_picks_the_item_and_keeps_the_topic() -> None:
    found = CONDENSER.condense(MAJORS_LISTED, "第二个专业是哪一年开设的？")
    assert found.question == f"{TOPIC}软件工程专业是哪一年开设的？" and found.topic == TOPIC
    history = MAJORS_LISTED + turns(("第二个专业是哪一年开设的？", "2001年"))
    # 计算机科学与技术 inside the college's name is not the item the last question was about
    assert CONDENSER.condense(history, "那第三个呢？").question == f"{TOPIC}人工智能专业是哪一年开设的？"
    assert (
        CONDENSER.condense(history, "上一个呢？").question == f"{TOPIC}计算机科学与技术专业是哪一年开设的？"
    )


def test_a_list_of_dishes_without_a_vocabulary() -> None:
    history = turns(("推荐几道家常菜", "1. 红烧肉：肥而不腻\n2. 糖醋排骨\n3. 宫保鸡丁"))
    assert OfflineCondenser().condense(history, "第二道怎么做？").question == "糖醋排骨怎么做？"


def test_an_ordinal_without_a_list_is_asked_as_it_is() -> None:
    history = turns((f"{TOPIC}本科生培养有什么要求？", "须修满160学分。"))
    for question in ("那第二个呢？", "第二个的院长是谁？", "下一个呢？"):
        found = CONDENSER.condense(history, question)
        assert found.question == question and not found.changed and not found.focus
    assert (
        CONDENSER.condense(MAJORS_LISTED, "第五个专业是哪一年开设的？").question
        == "第五个专业是哪一年开设的？"
    )


def test_a_first_of_its_own_is_no_reference_to_a_list() -> None:
    history = turns(("推荐几道家常菜", "1. 红烧肉\n2. 糖醋排骨\n3. 宫保鸡丁"))
    for question in ("第一个登上月球的人是谁？", "谁是第一个登上月球的人？"):
        found = OfflineCondenser().condense(history, question)
        assert found.method != "ordinal" and "红烧肉" not in found.question


ORDINALS = st.one_of(
    st.builds(lambda n, m: f"第{n}{m}", st.sampled_from(NUMERALS), st.sampled_from("个项种道家所位")),
    st.builds(lambda n: f"倒数第{n}个", st.sampled_from(NUMERALS[:3])),
    st.sampled_from(("最后一个", "上一个", "下一个", "前一个", "后一个")),
)
HISTORIES = st.sampled_from((COLLEGES_LISTED, MAJORS_LISTED, turns((f"{TOPIC}在哪？", "东校区。")), []))


@given(
    ORDINALS,
    st.sampled_from(
        ("那{o}呢？", "{o}的院长是谁？", "{o}呢", "{o}是哪一年开设的？", "谁是{o}登上月球的人？")
    ),
    HISTORIES,
)
def test_an_ordinal_is_never_a_topic(ordinal: str, template: str, history: list[dict[str, Any]]) -> None:
    question = template.format(o=ordinal)
    found = CONDENSER.condense(history, question)
    assert ordinal not in (found.topic or "") and all(ordinal not in f for f in found.focus)
    assert found.method != "ordinal" or ordinal not in found.question  # replaced when read


@given(st.lists(st.sampled_from(DISHES), min_size=2, max_size=5, unique=True), st.integers(1, 7))
def test_the_nth_item_or_nothing(items: list[str], n: int) -> None:
    history = turns(("推荐几道菜", "\n".join(f"{i}. {d}" for i, d in enumerate(items, 1))))
    question = f"第{NUMERALS[n - 1]}道怎么做？"
    found = OfflineCondenser().condense(history, question)
    assert found.question == (f"{items[n - 1]}怎么做？" if n <= len(items) else question)


# -- siblings ------------------------------------------------------------------------------------
OPENED = turns((f"{TOPIC}本科生培养有什么要求？", "须修满160学分。[1]"))


def test_a_sibling_by_its_part_name_keeps_the_university() -> None:
    found = CONDENSER.condense(OPENED, "那外国语学院呢？")
    assert found.question == "东湖大学外国语学院本科生培养有什么要求？"
    assert found.method == "sibling" and found.focus == ("东湖大学外国语学院",)
    asked = CONDENSER.condense(OPENED, "外国语学院的院长是谁？")
    assert asked.question == "东湖大学外国语学院的院长是谁？" and asked.topic == "东湖大学外国语学院"
    # and the conversation stays on the new sibling
    history = OPENED + turns(("那外国语学院呢？", "须修满150学分。"))
    assert CONDENSER.condense(history, "学院的院长是谁？").question == "东湖大学外国语学院的院长是谁？"


def test_a_name_in_full_or_one_the_vocabulary_lacks_is_not_a_sibling_switch() -> None:
    full = CONDENSER.condense(OPENED, "那西岭大学外国语学院呢？")
    assert full.question == "西岭大学外国语学院本科生培养有什么要求？" and full.method == "substitution"
    named = CONDENSER.condense(OPENED, "东湖大学的外国语学院在哪？")
    assert named.method != "sibling"
    other = CONDENSER.condense(OPENED, "那医学院呢？")  # no 东湖大学医学院 in the titles
    assert other.method != "sibling" and "医学院" not in (other.topic or "")


def test_the_item_is_replaced_where_it_stands_not_inside_the_colleges_name() -> None:
    colleges = ("土木工程学院", "法学院", "文学院")
    titles = [f"{u}{c}{h}" for u in UNIVERSITIES for c in colleges for h in HEADINGS]
    titles += [f"{u}土木工程学院{m}专业介绍" for u in UNIVERSITIES for m in ("土木工程", "工程管理")]
    history = turns(
        ("东湖大学土木工程学院有哪些本科专业？", "学院设有土木工程、工程管理等2个本科专业。"),
        ("第一个专业是哪一年开设的？", "2001年"),
    )
    found = OfflineCondenser(titles_vocabulary(titles)).condense(history, "那第二个呢？")
    assert found.question == "东湖大学土木工程学院工程管理专业是哪一年开设的？"


def test_the_ordinals_noun_picks_the_list_that_names_it() -> None:
    answer = "核心课程包括计算导论、计算方法和计算原理。" + MAJORS_LISTED[1]["content"]
    assert listed_items(answer) == ["计算导论", "计算方法", "计算原理"]
    assert listed_items(answer, of="专业") == ["计算机科学与技术", "软件工程", "人工智能"]
    found = CONDENSER.condense(turns((f"{TOPIC}有哪些本科专业？", answer)), "第二个专业是哪一年开设的？")
    assert found.question == f"{TOPIC}软件工程专业是哪一年开设的？"


def test_an_llm_rewrite_naming_the_item_of_an_ordinal_is_kept() -> None:
    from zhiwen.conversation.condense import keeps_the_question

    assert keeps_the_question("红烧肉怎么做？", "那最后一个怎么做？")
    assert keeps_the_question("东湖大学软件工程专业的学费是多少？", "第二个专业的学费是多少？")
    assert not keeps_the_question("今天天气怎么样？", "那最后一个怎么做？")
