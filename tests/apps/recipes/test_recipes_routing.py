"""Rules of the recipe app: routes, filters, counts, dish-name variants and matching (no KB)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zhiwen.apps.recipes.names import DishCatalog, dish_phrase, expand_variants
from zhiwen.apps.recipes.routing import (
    classify,
    difficulty_filter,
    list_query,
    question_categories,
    question_filters,
    wanted_count,
)
from zhiwen.documents import Document


@pytest.mark.parametrize(
    "question",
    [
        "推荐几个素菜",
        "有什么川菜",
        "给我3个简单的菜",
        "今天喝什么汤",
        "有哪些适合新手的早餐",
        "来几道硬菜",
        "列出五道甜品",
    ],
)
def test_list_route(question: str) -> None:
    decision = classify(question)
    assert decision.route == "list" and decision.confident


@pytest.mark.parametrize(
    "question",
    [
        "宫保鸡丁怎么做",
        "制作步骤",
        "需要什么食材",
        "番茄炒蛋的做法",
        "可乐鸡翅要放多少糖",
        "红烧肉需要哪些材料",
        "西红柿炒鸡蛋需要几个鸡蛋",
        "土豆丝怎么炒才脆",
    ],
)
def test_detail_route(question: str) -> None:
    decision = classify(question)
    assert decision.route == "detail" and decision.confident


@pytest.mark.parametrize("question", ["什么是川菜", "制作技巧", "西红柿的营养价值", "焯水的原理是什么"])
def test_general_route(question: str) -> None:
    assert classify(question).route == "general"


def test_dish_name_decides_ties_and_bare_names() -> None:
    assert classify("宫保鸡丁有哪些做法", dish_found=True).route == "detail"
    assert classify("有什么简单的鸡蛋做法").route == "list"
    assert classify("宫保鸡丁", dish_found=True).route == "detail"
    unsure = classify("今天心情不好")
    assert unsure.route == "general" and not unsure.confident


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("推荐几个素菜", {"category": "vegetable_dish"}),
        ("有什么荤菜", {"category": "meat_dish"}),
        ("今天喝什么汤", {"category": "soup"}),
        ("早餐吃什么", {"category": "breakfast"}),
        ("推荐甜品", {"category": "dessert"}),
        ("有什么饮品", {"category": "drink"}),
        ("推荐几道海鲜", {"category": "aquatic"}),
        ("主食有哪些", {"category": "staple"}),
        ("有什么调料", {"category": "condiment"}),
        ("有哪些半成品", {"category": "semi-finished"}),
        ("给我3个简单的菜", {"difficulty": {"lte": 2}}),
        ("适合新手的素菜", {"category": "vegetable_dish", "difficulty": {"lte": 2}}),
        ("有挑战的荤菜", {"category": "meat_dish", "difficulty": {"gte": 4}}),
        ("很难的菜", {"difficulty": {"gte": 4}}),
        ("不难的汤", {"category": "soup", "difficulty": {"lte": 2}}),
        ("三星以下的菜", {"difficulty": {"lte": 3}}),
        ("4星以上的荤菜", {"category": "meat_dish", "difficulty": {"gte": 4}}),
        ("素菜或者汤", {"category": {"in": ["vegetable_dish", "soup"]}}),
        ("汤圆怎么煮", {}),
        ("难吃的菜", {}),
    ],
)
def test_filters(question: str, expected: dict[str, object]) -> None:
    assert question_filters(question) == expected


def test_difficulty_and_categories_edge_cases() -> None:
    assert difficulty_filter("快手菜") == {"lte": 2}
    assert difficulty_filter("难度低一点") == {"lte": 2}
    assert difficulty_filter("难度高的") == {"gte": 4}
    assert question_categories("汤汁浓郁") == []


@pytest.mark.parametrize(
    ("question", "n"),
    [
        ("给我3个简单的菜", 3),
        ("推荐五道素菜", 5),
        ("来两道汤", 2),
        ("推荐几个素菜", 5),
        ("推荐十二道菜", 12),
        ("推荐100个菜", 20),
    ],
)
def test_wanted_count(question: str, n: int) -> None:
    assert wanted_count(question) == n


def test_list_query_keeps_content_words() -> None:
    assert "鸡蛋" in list_query("有什么用鸡蛋做的简单菜")
    assert list_query("推荐几个素菜") == ""


def test_expand_variants() -> None:
    variants = expand_variants("番茄炒蛋")
    assert variants[0] == "番茄炒蛋"
    assert "西红柿炒鸡蛋" in variants
    assert "马铃薯丝" in expand_variants("土豆丝")
    assert all("鸡鸡蛋" not in v for v in expand_variants("鸡蛋羹"))
    assert "皮鸡蛋" not in "".join(expand_variants("皮蛋豆腐"))


@given(st.text(max_size=20))
def test_expand_variants_never_fails(text: str) -> None:
    variants = expand_variants(text)
    assert variants[0] == text and len(variants) == len(set(variants)) and len(variants) <= 16


def test_dish_phrase() -> None:
    assert dish_phrase("番茄炒蛋怎么做？") == "番茄炒蛋"
    assert dish_phrase("请问可乐鸡翅需要什么食材") == "可乐鸡翅"


def _catalog() -> DishCatalog:
    names = {
        "vegetable_dish/西红柿炒鸡蛋": ("西红柿炒鸡蛋", 2),
        "soup/西红柿鸡蛋汤": ("西红柿鸡蛋汤", 2),
        "meat_dish/宫保鸡丁/宫保鸡丁": ("宫保鸡丁", 4),
        "meat_dish/红烧肉/简易红烧肉": ("简易红烧肉", 3),
        "meat_dish/红烧肉/南派红烧肉": ("南派红烧肉", 4),
        "vegetable_dish/酸辣土豆丝": ("酸辣土豆丝", 2),
        "condiment/葱油": ("葱油", 1),
        "staple/葱油拌面": ("葱油拌面", 2),
    }
    docs = [
        Document(id=i, text=f"# {n}的做法", title=f"{n}的做法", metadata={"name": n, "difficulty": d})
        for i, (n, d) in names.items()
    ]
    return DishCatalog.from_documents(docs, teach_tokenizer=False)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("番茄炒蛋怎么做", "西红柿炒鸡蛋"),
        ("番茄鸡蛋汤的做法", "西红柿鸡蛋汤"),
        ("宫爆鸡丁怎么做", "宫保鸡丁"),
        ("宫保鸡丁需要什么食材", "宫保鸡丁"),
        ("马铃薯丝怎么炒", "酸辣土豆丝"),
        ("葱油拌面怎么做", "葱油拌面"),
    ],
)
def test_catalog_match(question: str, expected: str) -> None:
    matches = _catalog().match(question)
    assert matches and matches[0].name == expected


def test_catalog_partial_name_matches_all_variants() -> None:
    names = {m.name for m in _catalog().match("红烧肉怎么做")}
    assert names == {"简易红烧肉", "南派红烧肉"}
    assert _catalog().match("今天天气怎么样") == []


def test_route_prompt_carries_the_question() -> None:
    from zhiwen.apps.recipes.prompts import route_messages

    messages = route_messages(" 推荐几个素菜 ")
    assert messages[0]["role"] == "system" and '"route"' in messages[0]["content"]
    assert messages[1]["content"] == "推荐几个素菜"
