"""简单/容易 prefer ★ and then ★★ (#30): 「简单的素菜」 once listed only ★★ dishes while six ★
vegetable dishes exist. Checked against the real HowToCook catalog, whatever the ranking."""

from __future__ import annotations

from collections import Counter

import pytest

from zhiwen.apps.recipes import answer_recipe
from zhiwen.apps.recipes.routing import prefers_easiest
from zhiwen.kb import KnowledgeBase

pytestmark = pytest.mark.shared_data


@pytest.fixture(scope="module")
def stars(recipes_kb: KnowledgeBase) -> Counter[tuple[str, int]]:
    """How many dishes each (category, difficulty) has in the data."""
    docs = recipes_kb.get_parents(sorted(recipes_kb.store.doc_ids()))
    return Counter((str(d.metadata.get("category")), int(d.metadata.get("difficulty") or 0)) for d in docs)


@pytest.mark.parametrize(
    ("question", "category"),
    [
        ("简单的素菜", "vegetable_dish"),
        ("有什么容易做的荤菜", "meat_dish"),
        ("推荐几个简单的水产", "aquatic"),
        ("有哪些简单的主食", "staple"),
        ("推荐5道不难的早餐", "breakfast"),
        ("有什么适合新手的荤菜", "meat_dish"),
        ("简单的汤", "soup"),
    ],
)
def test_easy_lists_the_one_star_dishes_first(
    recipes_kb: KnowledgeBase, stars: Counter[tuple[str, int]], question: str, category: str
) -> None:
    ans = answer_recipe(recipes_kb, question, llm=None)
    listed = [(c.metadata["category"], c.metadata["difficulty"]) for c in ans.citations]
    assert ans.route == "list" and listed and all(cat == category for cat, _ in listed)
    difficulties = [d for _, d in listed]
    assert difficulties == sorted(difficulties) and max(difficulties) <= 2, listed
    # as many ★ dishes as exist (up to the number listed), then ★★
    assert difficulties.count(1) == min(len(listed), stars[(category, 1)]), (listed, stars[(category, 1)])


def test_content_words_keep_relevance_and_put_the_easiest_first(recipes_kb: KnowledgeBase) -> None:
    ans = answer_recipe(recipes_kb, "有什么用鸡蛋做的简单菜", llm=None)
    names = [str(c.metadata["name"]) for c in ans.citations]
    difficulties = [c.metadata["difficulty"] for c in ans.citations]
    assert difficulties == sorted(difficulties) and difficulties[0] == 1, (names, difficulties)
    assert sum("蛋" in n for n in names) >= len(names) - 1, names


def test_a_star_count_is_a_bound_not_a_preference(recipes_kb: KnowledgeBase) -> None:
    ans = answer_recipe(recipes_kb, "推荐几个2星以下的素菜", llm=None)
    assert ans.citations and all(c.metadata["difficulty"] <= 2 for c in ans.citations)


@pytest.mark.parametrize(
    ("question", "easiest"),
    [
        ("简单的素菜", True),
        ("有什么容易做的荤菜", True),
        ("新手能做的早餐", True),
        ("不难的汤", True),
        ("2星以下的素菜", False),
        ("有挑战的荤菜", False),
        ("推荐几个素菜", False),
    ],
)
def test_prefers_easiest(question: str, easiest: bool) -> None:
    assert prefers_easiest(question) is easiest
