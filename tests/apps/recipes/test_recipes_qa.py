"""Recipe QA on the real HowToCook dishes: paraphrases, constrained lists, one LLM call, faults."""

from __future__ import annotations

import logging
import re
import time

import pytest
from prometheus_client import REGISTRY

from support.fake_openai import FakeOpenAI, Reply
from zhiwen.answer.events import collect_stream
from zhiwen.answer.extractive import extractive_note
from zhiwen.apps.recipes import answer_recipe, stream_recipe
from zhiwen.kb import KnowledgeBase
from zhiwen.llm import OpenAIChatClient

pytestmark = pytest.mark.shared_data

DETAIL = [
    ("番茄炒蛋怎么做", "西红柿炒鸡蛋"),
    ("宫爆鸡丁的做法", "宫保鸡丁"),
    ("番茄鸡蛋汤怎么煮", "西红柿鸡蛋汤"),
    ("马铃薯丝怎么炒", "酸辣土豆丝"),
    ("可乐鸡翼怎么做", "可乐鸡翅"),
    ("麻婆豆腐需要什么食材", "麻婆豆腐"),
    ("鱼香肉丝的制作步骤", "鱼香肉丝"),
    ("卷心菜怎么炒好吃", "手撕包菜"),
    ("怎么做红烧茄子", "红烧茄子"),
    ("水蒸蛋怎么做", "蒸水蛋"),
    ("番茄牛腩怎么炖", "西红柿牛腩"),
    ("蒜蓉西蓝花做法", "蒜蓉西兰花"),
    ("糖醋排骨需要哪些调料", "糖醋排骨"),
    ("回锅肉怎么做", "回锅肉"),
]

LISTS = [
    ("推荐几个简单的素菜", 5, "vegetable_dish", (1, 2)),
    ("给我3个难一点的荤菜", 3, "meat_dish", (4, 5)),
    ("今天喝什么汤", 5, "soup", (1, 5)),
    ("推荐两道早餐", 2, "breakfast", (1, 5)),
    ("有什么简单的甜品", 3, "dessert", (1, 2)),  # only 3 desserts have ≤ 2 stars
    ("推荐几道海鲜", 5, "aquatic", (1, 5)),
    ("来三个饮品", 3, "drink", (1, 5)),
    ("给我4个适合新手的菜", 4, None, (1, 2)),
]


def metric(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.mark.parametrize(("question", "dish"), DETAIL)
def test_paraphrased_detail_in_top3(recipes_kb: KnowledgeBase, question: str, dish: str) -> None:
    ans = answer_recipe(recipes_kb, question, llm=None)
    assert ans.route == "detail"
    names = [s.metadata.get("name") for s in ans.citations[:3]]
    assert dish in names, names
    assert not ans.llm_used and ans.extractive_reason == "no_llm"
    assert ans.answer.startswith(extractive_note("no_llm"))
    assert "[1]" in ans.answer


def test_detail_extractive_has_ingredients_and_steps(recipes_kb: KnowledgeBase) -> None:
    ans = answer_recipe(recipes_kb, "番茄炒蛋怎么做", llm=None)
    assert ans.citations[0].metadata["name"] == "西红柿炒鸡蛋"
    assert "【必备原料和工具】" in ans.answer and "【操作】" in ans.answer
    assert "鸡蛋液" in ans.answer  # from the steps, verbatim
    assert len({s.id for s in ans.citations}) == len(ans.citations)  # one recipe appears once


@pytest.mark.parametrize(("question", "n", "category", "stars"), LISTS)
def test_constrained_lists(
    recipes_kb: KnowledgeBase, question: str, n: int, category: str | None, stars: tuple[int, int]
) -> None:
    ans = answer_recipe(recipes_kb, question, llm=None)
    assert ans.route == "list"
    assert len(ans.citations) == n
    names = [s.metadata["name"] for s in ans.citations]
    assert len(set(names)) == n
    for s in ans.citations:
        if category:
            assert s.metadata["category"] == category, (question, s.metadata)
        assert stars[0] <= s.metadata["difficulty"] <= stars[1], (question, s.metadata)
    for i, name in enumerate(names, 1):
        assert f"{name}（" in ans.answer and f"[{i}]" in ans.answer


def test_general_question_cites_passages(recipes_kb: KnowledgeBase) -> None:
    ans = answer_recipe(recipes_kb, "焯水有什么技巧", llm=None)
    assert ans.route == "general" and ans.citations
    assert re.search(r"\[\d\]", ans.answer) and not ans.llm_used  # the lead cites its source


def test_detail_costs_exactly_one_llm_call(
    recipes_kb: KnowledgeBase, llm: OpenAIChatClient, fake_llm: FakeOpenAI
) -> None:
    fake_llm.script(Reply("先把西红柿切块，再炒鸡蛋 [1]。"))
    before = metric("zhiwen_llm_calls_total", purpose="recipes.detail", outcome="ok")
    ans = answer_recipe(recipes_kb, "番茄炒蛋怎么做", llm=llm)
    assert fake_llm.calls == 1
    assert ans.llm_used and ans.answer == "先把西红柿切块，再炒鸡蛋 [1]。" and ans.extractive_reason is None
    assert ans.citations[0].metadata["name"] == "西红柿炒鸡蛋"
    prompt = fake_llm.requests[0]["messages"]
    assert prompt[0]["role"] == "system"
    user = prompt[1]["content"]
    assert user.startswith("Context:\n[1] 西红柿炒鸡蛋的做法") and "Question:\n番茄炒蛋怎么做" in user
    assert "Answer using only the context" in user and "鸡蛋液" in user
    assert metric("zhiwen_llm_calls_total", purpose="recipes.detail", outcome="ok") == before + 1


@pytest.mark.parametrize("question", ["推荐几个简单的素菜", "宫保鸡丁需要什么食材", "焯水有什么技巧"])
def test_clear_questions_cost_one_call(
    recipes_kb: KnowledgeBase, llm: OpenAIChatClient, fake_llm: FakeOpenAI, question: str
) -> None:
    fake_llm.script(Reply("好的 [1]"))  # cited: an uncited reply is not shown (#31)
    ans = answer_recipe(recipes_kb, question, llm=llm)
    assert ans.llm_used and fake_llm.calls == 1


def test_unsure_question_asks_llm_to_route(
    recipes_kb: KnowledgeBase, llm: OpenAIChatClient, fake_llm: FakeOpenAI
) -> None:
    fake_llm.script(Reply('{"route": "list"}'), Reply("推荐：1. … [1]"))
    ans = answer_recipe(recipes_kb, "今晚想吃点清淡的", llm=llm)
    assert fake_llm.calls == 2 and ans.route == "list" and ans.llm_used
    # a failing router falls back to the rules and still answers
    fake_llm.reset()
    fake_llm.script(Reply.fault("401"), Reply("好的 [1]"))
    ans = answer_recipe(recipes_kb, "今晚想吃点清淡的", llm=llm)
    assert ans.route == "general" and ans.llm_used


def extractive_total() -> float:
    return sum(
        s.value
        for m in REGISTRY.collect()
        if m.name == "zhiwen_extractive_answers"
        for s in m.samples
        if s.name.endswith("_total") and s.labels.get("app") == "recipes"
    )


FAULTS = ["hang", "500", "503", "429", "401", "404", "malformed", "empty", "drop"]


@pytest.mark.parametrize("fault", FAULTS)
def test_every_fault_ends_in_extractive_answer(
    recipes_kb: KnowledgeBase, fault: str, caplog: pytest.LogCaptureFixture
) -> None:
    with FakeOpenAI(default=Reply.fault(fault, delay_s=10)) as fake:
        client = OpenAIChatClient(base_url=fake.base_url, model="fake", timeout_s=1.0, max_retries=2)
        before = extractive_total()
        caplog.set_level(logging.WARNING)
        t0 = time.perf_counter()
        ans = answer_recipe(recipes_kb, "番茄炒蛋怎么做", llm=client)
        elapsed = time.perf_counter() - t0
        client.close()
    assert elapsed < 1.0 + 5.0, elapsed  # the configured timeout bounds the whole call (not the 10 s fault)
    assert not ans.llm_used and ans.extractive_reason not in (None, "no_llm")
    assert ans.answer.startswith(extractive_note(ans.extractive_reason or ""))
    assert "【操作】" in ans.answer and ans.citations[0].metadata["name"] == "西红柿炒鸡蛋"
    assert extractive_total() == before + 1
    assert any("extractively" in r.getMessage() for r in caplog.records)


def test_fault_metric_increments(
    recipes_kb: KnowledgeBase, llm: OpenAIChatClient, fake_llm: FakeOpenAI
) -> None:
    fake_llm.script(Reply.fault("401"))
    before = metric("zhiwen_extractive_answers_total", app="recipes", reason="auth")
    errors = metric("zhiwen_llm_errors_total", code="1002")
    ans = answer_recipe(recipes_kb, "宫保鸡丁怎么做", llm=llm)
    assert ans.extractive_reason == "auth"
    assert metric("zhiwen_extractive_answers_total", app="recipes", reason="auth") == before + 1
    assert metric("zhiwen_llm_errors_total", code="1002") == errors + 1


def test_stream_with_llm(recipes_kb: KnowledgeBase, llm: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(Reply("西红柿切块，鸡蛋打散 [1]。", chunk_chars=3))
    events = list(stream_recipe(recipes_kb, "番茄炒蛋怎么做", llm=llm))
    kinds = [e.type for e in events]
    assert kinds[0] == "sources" and kinds[-1] == "done" and kinds.count("delta") > 2
    assert events[-1].data["llm_used"] is True
    ans = collect_stream(iter(events))
    assert ans.answer == "西红柿切块，鸡蛋打散 [1]。" and fake_llm.calls == 1


@pytest.mark.parametrize("fault", ["broken_stream", "hang", "500", "empty"])
def test_stream_faults_end_extractive(
    recipes_kb: KnowledgeBase, llm: OpenAIChatClient, fake_llm: FakeOpenAI, fault: str
) -> None:
    fake_llm.default = Reply.fault(fault, delay_s=10)
    t0 = time.perf_counter()
    ans = collect_stream(stream_recipe(recipes_kb, "番茄炒蛋怎么做", llm=llm))
    assert time.perf_counter() - t0 < 6.0  # the 1 s timeout, not the 10 s fault
    assert not ans.llm_used and "摘自知识库" in ans.answer and "【操作】" in ans.answer


def test_stream_without_llm(recipes_kb: KnowledgeBase) -> None:
    events = list(stream_recipe(recipes_kb, "推荐几个简单的素菜", llm=None))
    assert events[0].type == "sources" and len(events[0].data["sources"]) == 5
    name, done = events[-1].type, events[-1].data
    assert name == "done" and done["llm_used"] is False and done["route"] == "list"
    assert done["extractive_reason"] == "no_llm" and done["params"]["top_k"] >= 5
    text = "".join(e.text for e in events)
    assert text.startswith(extractive_note("no_llm"))
