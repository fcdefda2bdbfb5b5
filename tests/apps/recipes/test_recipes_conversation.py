"""Recipes in a conversation: the dish stays the topic, 「那X呢」 switches it (issue #28)."""

from __future__ import annotations

from typing import Any

from zhiwen.appkit import AskRequest
from zhiwen.appkit.context import build_context
from zhiwen.apps.recipes import app
from zhiwen.config import Settings
from zhiwen.kb import KnowledgeBase


def _turns(*pairs: tuple[str, str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for question, answer in pairs:
        out += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    return out


def _ask(kb: KnowledgeBase, settings: Settings, question: str, history: list[dict[str, Any]]) -> Any:
    ctx = build_context(settings, llm=None)
    return app.ask(AskRequest(question=question, history=history, kb=kb.name), ctx)


def test_the_dish_stays_the_topic(recipes_kb: KnowledgeBase, recipes_settings: Settings) -> None:
    history = _turns(("红烧肉怎么做？", "……"))
    answer = _ask(recipes_kb, recipes_settings, "要炖多久？", history)
    assert answer.standalone_question.startswith("红烧肉")
    assert "红烧肉" in answer.citations[0].title


def test_a_new_dish_switches_the_topic(recipes_kb: KnowledgeBase, recipes_settings: Settings) -> None:
    history = _turns(("红烧肉怎么做？", "……"))
    answer = _ask(recipes_kb, recipes_settings, "那糖醋排骨呢？", history)
    assert "糖醋排骨" in answer.standalone_question and "红烧肉" not in answer.standalone_question
    assert "糖醋排骨" in answer.citations[0].title
    after = _ask(recipes_kb, recipes_settings, "需要哪些调料？", [*history, *_turns(("那糖醋排骨呢？", "…"))])
    assert after.standalone_question.startswith("糖醋排骨")


def test_a_standalone_question_passes_unchanged(
    recipes_kb: KnowledgeBase, recipes_settings: Settings
) -> None:
    history = _turns(("红烧肉怎么做？", "……"))
    answer = _ask(recipes_kb, recipes_settings, "宫保鸡丁怎么做？", history)
    assert answer.standalone_question == "宫保鸡丁怎么做？" and "宫保鸡丁" in answer.citations[0].title
