"""The LLM as a writer of role messages, held to the numbers of the tools and the user.

:func:`write_message` asks the LLM (one call) to rewrite a role's templated message in its
own words; every number in the reply must match a tool result, the user's input or the
template (:mod:`zhiwen.chinese.number_check`), and the template's key (bold) figures must stay.
On a mismatch, a dropped key figure, an empty reply or an LLM error,
the templated message is used and the reason logged. Without an LLM the template is used as is.

What a small real model does (#31, Gemma 3 270M) is cleaned or refused before the number check:
a closed ``<think>…</think>`` block is dropped (an unclosed one: ``think_unclosed``); a reply in
English to a Chinese user (``not_chinese``) or JSON/code instead of prose (``not_prose``) falls
back to the template, visibly, like any other mismatch. So does what the bench showed slipping
through a number check it passes: the prompt echoed back (``prompt_echo``), one line said over
and over (``repetitive``), a reply cut at ``max_tokens`` (``truncated``) and a rewrite of a
template full of figures that states none of them (``no_figures``).

Example::

    >>> written = write_message(llm, role, template, results=[loan], user_texts=["总价300万…"])
    >>> written.text, written.llm_used, written.fallback_reason
    ('按您的条件，月供约8,967元…', True, None)
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from zhiwen.apps.advisor.roles import Role
from zhiwen.chinese.number_check import (
    TRIVIAL_MAX,
    NumberCheck,
    allowed_numbers,
    check_numbers,
    extract_numbers,
    missing_key_numbers,
)
from zhiwen.errors import LLMError
from zhiwen.llm import error_outcome, llm_purpose
from zhiwen.llm.base import ChatModel

log = logging.getLogger(__name__)

_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_CJK = re.compile(r"[\u4e00-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")
REPEATS = 3  # a line said this often is a small model looping, not a message
MIN_SHARE = 0.2  # an LLM message shorter than this share of the template is not a rewrite
_RULES = (
    "写作要求：用简洁自然的中文回答，不超过350字；保留参考稿中的关键数字、规则来源和日期；"
    "只能使用参考稿、工具结果或用户提供的数字，不得新增、估算或改动任何数字；不要使用代码块。"
)


@dataclass(slots=True)
class Written:
    text: str
    llm_used: bool = False
    fallback_reason: str | None = None  # no_llm | number_mismatch | empty | timeout | error …
    number_check: NumberCheck | None = None
    llm_calls: int = 0

    def meta(self) -> dict[str, Any]:
        return {
            "llm_used": self.llm_used,
            "fallback_reason": self.fallback_reason,
            "number_check": None if self.number_check is None else self.number_check.to_dict(),
        }


def write_message(
    llm: ChatModel | None,
    role: Role,
    template: str,
    *,
    results: Sequence[Any],
    user_texts: Sequence[str],
    question: str = "",
    instruction: str = "",
    purpose: str = "advisor.role",
) -> Written:
    """The LLM's version of ``template`` when it passes the number check, else ``template``."""
    if llm is None:
        return Written(template, fallback_reason="no_llm")
    payload = json.dumps(list(results), ensure_ascii=False, default=str)[:6000]
    messages = [
        {"role": "system", "content": f"{role.prompt}\n{_RULES}"},
        {
            "role": "user",
            "content": f"用户问题：{question}\n{instruction}\n工具结果（JSON）：{payload}\n"
            f"参考稿：\n{template}\n\n请以{role.name}的身份改写参考稿。",
        },
    ]
    try:
        with llm_purpose(purpose):
            reply = llm.chat(messages)
    except LLMError as exc:
        reason = error_outcome(exc)
        log.warning("advisor: %s message by LLM failed (%s); using the template", role.key, reason)
        return Written(template, fallback_reason=reason, llm_calls=1)
    except Exception:  # a broken adapter must not take the answer down
        log.exception("advisor: LLM adapter raised for %s", role.key)
        return Written(template, fallback_reason="error", llm_calls=1)
    text = strip_think(reply.content or "")
    problem = reply_problem(text) or rewrite_problem(text, template, role, reply.finish_reason)
    if problem is not None:
        log.warning("advisor: %s LLM message unusable (%s); using the template", role.key, problem)
        return Written(template, fallback_reason=problem, llm_calls=1)
    # Only the template's and the user's figures: the template is the tools' results as the role
    # states them, so a tool number under another label (a listing's price as the 月供) is refused.
    check = check_numbers(text, allowed_numbers([], [*user_texts, template]))
    missing = missing_key_numbers(text, template)
    if check.ok and missing:
        log.warning(
            "advisor: %s LLM message drops key figures (%s); using the template", role.key, ", ".join(missing)
        )
        return Written(template, fallback_reason="missing_key_numbers", number_check=check, llm_calls=1)
    if not check.ok:
        log.warning(
            "advisor: %s LLM message has numbers no tool or user gave (%s); using the template",
            role.key,
            ", ".join(check.unsupported[:5]),
        )
        return Written(template, fallback_reason="number_mismatch", number_check=check, llm_calls=1)
    if len(text) < MIN_SHARE * len(template):  # "好的。" is no answer to a table of figures
        log.warning("advisor: %s LLM message too short (%d chars); using the template", role.key, len(text))
        return Written(template, fallback_reason="too_short", number_check=check, llm_calls=1)
    if significant_numbers(template) and not significant_numbers(text):  # a loop, an aside: no rewrite
        log.warning("advisor: %s LLM message states none of the template's figures; using it", role.key)
        return Written(template, fallback_reason="no_figures", number_check=check, llm_calls=1)
    return Written(text, llm_used=True, number_check=check, llm_calls=1)


def strip_think(text: str) -> str:
    """``text`` without closed ``<think>…</think>`` blocks (an unclosed one stays, to be refused).

    >>> strip_think("<think>算一下</think>月供约8,967元。")
    '月供约8,967元。'
    """
    return _THINK.sub("", text).strip()


def rewrite_problem(text: str, template: str, role: Role, finish_reason: str | None) -> str | None:
    """Why a prose reply is still no rewrite of ``template``: cut at max_tokens, the role's prompt
    echoed (Gemma 3 270M began 「你是购房顾问团队中的财务顾问…」) or a line repeated three times
    or more."""
    if finish_reason == "length":
        return "truncated"
    if text.startswith("你是") or role.prompt[:16] in text or _RULES[:16] in text:
        return "prompt_echo"
    lines = [ln.strip() for ln in text.splitlines() if len(ln.strip()) >= 6]
    if lines and max(lines.count(ln) for ln in lines) >= REPEATS:
        return "repetitive"
    return None


def significant_numbers(text: str) -> list[str]:
    """The figures of ``text`` beyond list markers and small counts."""
    return [n.raw for n in extract_numbers(text) if n.unit is not None or n.decimals or n.value > TRIVIAL_MAX]


def reply_problem(text: str) -> str | None:
    """Why a role message the LLM wrote cannot be shown, or None: empty, a reasoning block never
    closed, JSON or code instead of prose, or not Chinese (the product speaks Chinese).

    >>> reply_problem('{"label": "visa_free", "confidence": 0.9}'), reply_problem("Your payment is 8967.")
    ('not_prose', 'not_chinese')
    """
    if not text:
        return "empty"
    if "<think>" in text.lower() or "</think>" in text.lower():
        return "think_unclosed"
    if text[0] in "{[" or text.startswith("```"):
        return "not_prose"
    if len(_LATIN.findall(text)) > len(_CJK.findall(text)):
        return "not_chinese"
    return None
