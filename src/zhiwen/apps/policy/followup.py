"""Follow-ups in a policy conversation: the app's follow-up hook and the intent a follow-up keeps.

* **The hook** (:func:`follow_up`): the condenser with every country's names, so 「那西班牙呢？」
  puts Spain in the slot of the earlier question's country and 「需要什么材料？」 takes the
  conversation's country as its subject; it carries the conversation's last question
  (``carried["previous"]``).
* **The intent** (:func:`conversation_intent`): a follow-up that names no policy intent of its own
  keeps the intent of that previous question (「需要什么材料？」 after a visa-free question is a
  visa-free question too).

Example::

    >>> found = follow_up("那西班牙呢？", [{"role": "user", "content": "中国公民去泰国需要签证吗？"}], ctx)
    >>> found.question, found.carried["previous"]
    ('中国公民去西班牙需要签证吗？', '中国公民去泰国需要签证吗？')
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from zhiwen.appkit.app import AppContext
from zhiwen.conversation.model import Standalone, user_questions
from zhiwen.conversation.service import condensed
from zhiwen.conversation.vocabulary import Vocabulary
from zhiwen.understand.classify import Classification

from .countries import default_gazetteer
from .intent import classify
from .kbconfig import SPECIALIST_INTENTS
from .settings import PolicySettings

log = logging.getLogger("zhiwen.apps.policy")


@lru_cache(maxsize=1)
def country_vocabulary() -> Vocabulary:
    """Every name of every country (kind ``country``): a follow-up's 「那西班牙呢」 swaps one."""
    return Vocabulary({name: "country" for c in default_gazetteer() for name in c.names})


def follow_up(question: str, history: Sequence[Mapping[str, Any]], ctx: AppContext) -> Standalone:
    """The app's follow-up hook: the condenser with every country's names (「那西班牙呢？」 swaps
    the country), carrying the conversation's last question (``carried["previous"]``), whose
    intent a follow-up that names none keeps."""
    found = condensed(history, question, ctx, country_vocabulary())
    earlier = user_questions(history)
    return replace(found, carried={**found.carried, "previous": earlier[-1]}) if earlier else found


def conversation_intent(
    question: str, previous: str | None, ctx: AppContext, settings: PolicySettings
) -> tuple[Classification, str | None]:
    """The question's intent; a follow-up that names none (「需要什么材料？」) keeps the intent
    of the conversation's ``previous`` question."""
    classification, fallback = classify(question, ctx, settings)
    if classification.label != "other" or fallback or not previous:
        return classification, fallback
    before, _ = classify(previous, ctx, settings)
    if before.label in SPECIALIST_INTENTS:
        log.info("[智能路由] 追问沿用上一轮的意图: %s", before.label)
        return replace(before, method="conversation"), None
    return classification, fallback
