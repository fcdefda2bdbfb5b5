"""Stage 2 of understanding a question: is the rule extraction good enough, and how many listings to retrieve?

:func:`assess` counts the dimensions found, the complex language patterns left over (要么…要么,
或者, 性价比, 别太贵 …), logic words, length and vagueness. Complex questions (and long ones
with few dimensions, or unknown negations) are flagged ``needs_llm``; the same four signals
give ``dynamic_k``, the number of candidates each retrieval branch returns.

Example::

    >>> from zhiwen.apps.listings.extract import extract_rules
    >>> q = "要么在静安区要么在徐汇区，最好靠近地铁"
    >>> quality = assess(q, extract_rules(q))
    >>> quality.needs_llm, quality.complex_patterns[:1], 10 <= quality.dynamic_k <= 60
    (True, ['要么…要么'], True)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from zhiwen.apps.listings.requirements import Requirements
from zhiwen.apps.listings.vocabulary import NEGATIONS
from zhiwen.chinese.normalise import normalise_question

COMPLEX_PATTERNS: dict[str, str] = {
    "要么…要么": r"要么.+要么",
    "或者": r"或者|或是|还是|或",
    "性价比": r"性价比|划算|实惠|便宜|经济",
    "别太贵": r"别太贵|不要太贵|不太贵|贵一点|别太|不要太|不太",
    "模糊位置": r"市中心|交通便利|出行方便|不要太偏|偏远|郊区|繁华|核心区",
    "家庭需求": r"孩子|小孩|老人|父母|养老|改善|刚需|一家|三口|二胎|上班",
    "首付月供": r"首付|月供|贷款|公积金",
    "程度": r"最好|尽量|尽可能|稍微|大概|差不多|一点",
}
LOGIC_WORDS = re.compile(r"并且|而且|同时|或者|或是|要么|还是|以及|但是|但|不过|如果|除了|另外|或")
VAGUE_WORDS = re.compile(r"推荐|有什么|有哪些|有没有|看看|合适|适合|好的|不错|帮我找|随便|性价比|怎么样")


@dataclass(slots=True)
class Quality:
    """Is the rule result good enough, or should the LLM look too?"""

    dimensions: list[str]
    complex_patterns: list[str]
    logic_words: int
    length: int
    vagueness: int
    complexity: float  # 0..1
    needs_llm: bool
    dynamic_k: int
    reasons: list[str] = field(default_factory=list)


def _reasons(dims: list[str], patterns: list[str], length: int, req: Requirements) -> list[str]:
    reasons: list[str] = []
    if patterns:
        reasons.append("复杂语言模式: " + "、".join(patterns))
    if length > 30 and len(dims) < 2:
        reasons.append("问题较长但提取到的条件很少")
    if not dims:
        reasons.append("规则未提取到任何条件")
    unknown_neg = [n for n in req.negations if n not in NEGATIONS and n != "别墅"]
    if unknown_neg:
        reasons.append("未识别的否定条件: " + "、".join(unknown_neg))
    return reasons


def assess(question: str, req: Requirements, *, base_k: int = 10, max_k: int = 60) -> Quality:
    """Quality of the rule extraction and the four complexity dimensions → ``dynamic_k``."""
    t = normalise_question(question)
    dims = req.dimensions()
    patterns = [name for name, pat in COMPLEX_PATTERNS.items() if re.search(pat, t)]
    logic = len(LOGIC_WORDS.findall(t))
    vague = len(VAGUE_WORDS.findall(t)) + len(req.vague)
    length = len(t)
    reasons = _reasons(dims, patterns, length, req)
    complexity = min(
        1.0,
        0.12 * len(dims)
        + 0.12 * min(logic, 3)
        + min(length, 120) / 400
        + 0.1 * min(vague, 3)
        + 0.1 * len(patterns),
    )
    k = base_k + 4 * len(dims) + 5 * min(logic, 4) + min(length // 15, 8) + 5 * min(vague, 3)
    return Quality(
        dimensions=dims,
        complex_patterns=patterns,
        logic_words=logic,
        length=length,
        vagueness=vague,
        complexity=round(complexity, 3),
        needs_llm=bool(reasons) and length >= 4,
        dynamic_k=max(base_k, min(max_k, k)),
        reasons=reasons,
    )


__all__ = ["COMPLEX_PATTERNS", "LOGIC_WORDS", "VAGUE_WORDS", "Quality", "assess"]
