"""The answer to a property search: ONE LLM call grounded in the listings shown, or a composed one.

Without an LLM, when the call fails, or when its reply fails the grounding check
(:mod:`zhiwen.answer.grounding`: a figure in neither the listings shown nor the question,
English, cut at ``max_tokens``) the answer is composed from the listings (:func:`.answer_text.compose_answer`)
and flagged ``llm_used: false`` with its reason. A composed answer that stands in for a failed
or refused reply is not cached (the next ask may reach the model).

Example::

    >>> reply = answer_listings(None, "浦东两房", req, props, total=57)     # doctest: +SKIP
    >>> reply.llm_used, reply.reason, reply.cacheable                        # doctest: +SKIP
    (False, 'no_llm', True)
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from zhiwen.answer.grounding import GROUNDING_REASONS, Grounding, check_answer, number_facts
from zhiwen.apps.listings.answer_text import ADVISER_PROMPT, compose_answer, listing_line
from zhiwen.apps.listings.describe import describe_requirements
from zhiwen.apps.listings.extract import Requirements
from zhiwen.errors import LLMError
from zhiwen.llm import llm_purpose
from zhiwen.llm.base import ChatModel
from zhiwen.metrics import EXTRACTIVE_ANSWERS, FALLBACKS

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Reply:
    """The answer's text, whether the model wrote it, whether it may be cached, and why not the model."""

    text: str
    llm_used: bool
    cacheable: bool
    reason: str | None  # None: the model's reply, shown


def _composed(
    question: str,
    req: Requirements,
    props: list[dict[str, Any]],
    note: str,
    total: int | None,
    reason: str,
    cacheable: bool,
) -> Reply:
    EXTRACTIVE_ANSWERS.labels(app="listings", reason=reason).inc()
    return Reply(compose_answer(question, req, props, note, total), False, cacheable, reason)


def answer_listings(
    llm: ChatModel | None,
    question: str,
    req: Requirements,
    props: list[dict[str, Any]],
    total: int | None = None,
) -> Reply:
    """The answer to ``question`` from the listings shown (see the module docstring)."""
    if llm is None:
        note = "（未配置大模型：以下回答由系统根据检索到的房源自动整理。）"
        return _composed(question, req, props, note, total, "no_llm", True)
    if not props:
        return _composed(question, req, props, "（没有检索到房源，未调用大模型。）", None, "no_results", True)
    try:
        verdict = _llm_answer(llm, question, req, props, total)
    except LLMError as exc:
        FALLBACKS.labels(kind="listings_answer_llm_error").inc()
        log.warning("listings: answer LLM failed (%s); composed answer", exc)
        note = f"（大模型暂时不可用（{exc.message}），以下回答由系统根据检索到的房源自动整理。）"
        return _composed(question, req, props, note, total, "llm_error", False)
    if verdict.reason is None:
        return Reply(verdict.text, True, True, None)
    reason = verdict.reason
    log.warning("listings: LLM answer not shown (%s %s)", reason, list(verdict.unsupported))
    why = GROUNDING_REASONS.get(reason, "大模型返回了空内容")
    return _composed(
        question, req, props, f"（{why}，以下回答由系统根据检索到的房源自动整理。）", total, reason, False
    )


def _llm_answer(
    llm: ChatModel, question: str, req: Requirements, props: list[dict[str, Any]], total: int | None
) -> Grounding:
    """The model's answer, checked: in Chinese, whole, every figure from the listings shown,
    the request or the question (the listings are cited as 第n套, so no ``[n]`` is required)."""
    understood = describe_requirements(req)
    listing_text = "\n".join(
        listing_line(i, p) + f"\n   匹配理由：{'；'.join(p['match_reasons'])}"
        for i, p in enumerate(props, start=1)
    )
    prompt = ADVISER_PROMPT.format(question=question, requirements=understood, listings=listing_text)
    if total is not None and total > len(props):
        shown = len(props)
        prompt += f"\n（符合全部条件的房源共 {total} 套，上面是匹配度最高的 {shown} 套，请说明这一点。）"
    with llm_purpose("listings_answer"):
        reply = llm.chat([{"role": "user", "content": prompt}])
    facts = number_facts(props, [question, understood, str(total or ""), listing_text])
    return check_answer(
        reply.content or "",
        sources=len(props),
        question=question,
        finish_reason=reply.finish_reason,
        cite=False,
        numbers=facts,
        instructions=[line for line in ADVISER_PROMPT.splitlines() if "{" not in line],
    )


__all__ = ["Reply", "answer_listings"]
