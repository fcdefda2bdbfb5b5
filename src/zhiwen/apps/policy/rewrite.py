"""Question rewrite for the specialist KBs: the LLM when configured, else deterministic.

The rewritten question searches the visa-free and airline KBs; the original one the general
KB. Offline, :func:`rule_rewrite` appends the canonical country names in both languages and
the policy terms of the intent (免签/visa-free, 机组人员/crew, 过境/transit …). With an LLM,
:func:`llm_rewrite` asks for JSON ``{"rewritten": "…"}`` within a timeout; the canonical
country names are added when the model left them out (a model is never trusted to keep them).
``other`` questions are never rewritten.

Example::

    >>> rule_rewrite("关于塞尔维亚的机组人员入出境，下列说法正确的有", "airline_visa_free")[:60]
    '关于塞尔维亚的机组人员入出境，下列说法正确的有（国家：塞尔维亚 Serbia；关键词：机组人员 crew、免签 visa'
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from zhiwen.errors import LLMError, LLMTimeout
from zhiwen.llm.bounded import bounded_call

from .countries import Country, Gazetteer, default_gazetteer
from .intent import HAINAN, TRANSIT

if TYPE_CHECKING:
    from zhiwen.llm.base import ChatModel, Message

log = logging.getLogger(__name__)

TERMS = {
    "visa_free": ("免签 visa-free", "入境 entry", "停留天数 days of stay"),
    "airline_visa_free": (
        "机组人员 crew",
        "免签 visa-free",
        "C字签证 C visa",
        "临时入境 temporary entry",
        "口岸 port",
    ),
    "both": ("免签 visa-free", "机组人员 crew", "入境 entry", "口岸 port"),
}
TRANSIT_TERM = "过境 transit"
HAINAN_TERM = "海南 Hainan"
# the visa pages are English and the statutes Chinese: a question's policy words in the other language
GLOSSARY: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), term)
    for pattern, term in (
        (r"240\s*小时|240[- ]hours?|10天|10 days", "240小时 240 hours 10 days"),
        (r"24\s*小时|24[- ]hours?", "24小时 24 hours"),
        (r"180\s*天|180[- ]days?", "180天 180-day period"),
        (r"累计|cumulative|in total", "累计 within any period"),
        (r"活动|范围|哪些地方|去哪|travel areas?|where can", "活动范围 permitted travel areas"),
        (r"省份|省|provinces?", "省份 provinces"),
        (r"口岸|\bports?\b", "口岸 ports"),
        (r"机场|airports?", "机场 airport"),
        (r"机票|联程|tickets?", "联程客票 interline tickets"),
        (r"护照|passports?", "护照 passport"),
        (r"有效期|valid", "有效期 valid"),
        (r"停留|待多久|stay", "停留 stay"),
        (r"离开|leave", "离开 leave"),
        (r"单方面|unilateral", "单方面免签 unilateral"),
        (r"互免|mutual", "互免签证 mutual"),
        (r"截止|到期|有效吗|still valid|until|expire", "截止日期 until end date"),
        (r"旅游|观光|touris[mt]", "旅游 tourism"),
        (r"商务|出差|business", "商务 business"),
        (r"探亲|访友|family", "探亲 family visits"),
        (r"工作|work", "工作 work"),
        (r"学习|留学|stud", "学习 study"),
        (r"居留|住宿|登记|regist", "居留登记 residence registration"),
        (r"签证|visa\b", "签证 visa"),
        (r"申报|declare", "申报 declare"),
        (r"机长|captain", "机长 captain"),
        (r"边防检查|边检|border (inspection|check)", "边防检查 border inspection"),
    )
)
MAX_REWRITE_CHARS = 400

REWRITE_SYSTEM = (
    "你是出入境政策检索助手。把用户问题改写成更适合检索“免签政策库”和“航司/机组条款库”的一句话问题：\n"
    "1. 国家写出中文和英文标准名称（如：塞尔维亚 Serbia、美国 United States）；\n"
    "2. 补全政策术语：免签/visa-free、机组人员/crew、过境/transit、停留天数、口岸等（与问题相关的才加）；\n"
    "3. 保留原问题的意思，不要回答问题，不要编造。\n"
    '只输出 JSON：{"rewritten": "改写后的问题"}'
)


class RewriteError(Exception):
    """The LLM rewrite failed; ``reason`` is a metric label (rewrite_timeout, …)."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Rewrite:
    text: str
    method: Literal["llm", "rules", "none"]
    countries: tuple[Country, ...] = ()


def policy_terms(question: str, intent: str) -> list[str]:
    """The intent's terms, then transit / Hainan / glossary terms the question calls for."""
    terms = list(TERMS.get(intent, ()))
    if TRANSIT.search(question) and TRANSIT_TERM not in terms:
        terms.append(TRANSIT_TERM)
    if HAINAN.search(question):
        terms.append(HAINAN_TERM)
    for pattern, term in GLOSSARY:
        if pattern.search(question) and term not in terms:
            terms.append(term)
    return terms


def country_names(countries: tuple[Country, ...] | list[Country]) -> str:
    return "；".join(f"{c.zh} {c.en}" for c in countries)


def rule_rewrite(question: str, intent: str, gazetteer: Gazetteer | None = None) -> str:
    """The question + canonical country names (zh/en) + the intent's policy terms."""
    question = question.strip()
    if intent not in TERMS:
        return question
    countries = (gazetteer or default_gazetteer()).find(question)
    parts = []
    if countries:
        parts.append(f"国家：{country_names(countries)}")
    terms = policy_terms(question, intent)
    if terms:
        parts.append(f"关键词：{'、'.join(terms)}")
    return f"{question}（{'；'.join(parts)}）" if parts else question


def rewrite_messages(question: str, intent: str) -> list[Message]:
    return [
        {"role": "system", "content": REWRITE_SYSTEM},
        {"role": "user", "content": f"问题类型：{intent}\n问题：{question.strip()}"},
    ]


def _parse(reply: Any) -> str:
    text = reply.get("rewritten") or reply.get("question") if isinstance(reply, dict) else None
    if not isinstance(text, str) or not text.strip():
        raise RewriteError("rewrite_bad_output", f"no rewritten question in {reply!r:.120}")
    text = " ".join(text.split())
    if len(text) > MAX_REWRITE_CHARS:
        raise RewriteError("rewrite_bad_output", f"rewrite too long ({len(text)} chars)")
    return text


def llm_rewrite(
    question: str, intent: str, llm: ChatModel, *, timeout_s: float, gazetteer: Gazetteer | None = None
) -> str:
    """The LLM's rewrite (``RewriteError`` on timeout, error or unusable output)."""
    from zhiwen.llm import llm_purpose

    messages = rewrite_messages(question, intent)

    def call() -> Any:
        with llm_purpose("policy.rewrite"):
            return llm.chat_json(messages, temperature=0.0, timeout_s=timeout_s)

    try:
        reply = bounded_call(call, timeout_s=timeout_s)
    except TimeoutError as exc:
        raise RewriteError("rewrite_timeout") from exc
    except LLMTimeout as exc:
        raise RewriteError("rewrite_timeout", str(exc)) from exc
    except LLMError as exc:
        outcome = exc.data.get("outcome") if isinstance(exc.data, dict) else None
        reason = "rewrite_bad_output" if outcome in ("bad_json", "empty", "malformed") else "rewrite_error"
        raise RewriteError(reason, str(exc)) from exc
    except Exception as exc:
        log.warning("rewrite: LLM adapter raised %s", type(exc).__name__)
        raise RewriteError("rewrite_error", type(exc).__name__) from exc
    text = _parse(reply)
    missing = [
        c for c in (gazetteer or default_gazetteer()).find(question) if c.zh not in text or c.en not in text
    ]
    if missing:  # the canonical names are what the visa table is keyed by
        text = f"{text}（国家：{country_names(missing)}）"
    return text


def rewrite_question(
    question: str,
    intent: str,
    *,
    llm: ChatModel | None = None,
    timeout_s: float = 8.0,
    gazetteer: Gazetteer | None = None,
) -> Rewrite:
    """Rewrite for the specialist KBs; ``other`` questions come back unchanged (method ``none``)."""
    gaz = gazetteer or default_gazetteer()
    countries = tuple(gaz.find(question))
    if intent not in TERMS:
        return Rewrite(question.strip(), "none", countries)
    if llm is not None:
        return Rewrite(
            llm_rewrite(question, intent, llm, timeout_s=timeout_s, gazetteer=gaz), "llm", countries
        )
    return Rewrite(rule_rewrite(question, intent, gaz), "rules", countries)
