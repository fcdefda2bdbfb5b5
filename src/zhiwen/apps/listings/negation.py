"""Negation scope in a home-buyer's question: is this word wanted or excluded?

The last cue before a word in the same clause decides: 不要 / 远离 / 除了 … negate, 要 /
希望 / 但是 … affirm. A clause ends at punctuation, at 但是 / 不过 / 另外 …, and at 的
("不要低楼层的两房": 两房 is wanted).

Example::

    >>> t = "不要毛坯，要精装"
    >>> is_negated(t, t.index("毛坯")), is_negated(t, t.index("精装"))
    (True, False)
    >>> t = "一楼二楼都不要"
    >>> is_negated(t, 0), is_negated(t, 0, end=2)
    (False, True)
"""

from __future__ import annotations

import re

_CUE_RE = re.compile(
    r"不想要|不需要|不接受|不考虑|不喜欢|不能要|不能是|不要|不想|不能|不是|别要|别买|别|拒绝|排除|避开|远离|避免|讨厌|"
    r"非|除了|除去|去掉|想要|需要|希望|最好|必须|只要|要|而是|但是|但"
)
NEG_CUES = frozenset(
    "不想要 不需要 不接受 不考虑 不喜欢 不能要 不能是 不要 不想 不能 不是 别要 别买 别 "  # noqa: SIM905
    "拒绝 排除 避开 远离 避免 讨厌 非 除了 除去 去掉".split()
)
_CLAUSE_END = re.compile(r"[，,。；;！!？?\n的]|但是|不过|然后|另外|同时|而且|并且")


# a rejection that closes the clause after the word: "一楼二楼都不要", "毛坯不考虑。"
_CLAUSE_REST = re.compile(r"[^，,。；;！!？?\n]{0,8}")
_AFTER_NEG = re.compile(r"(?:不要|不考虑|不想要|不接受|免谈|排除|不行|不可以)了?\s*$")


def is_negated(text: str, start: int, window: int = 12, *, end: int | None = None) -> bool:
    """True when the last cue before ``start`` in the same clause is a negative one.

    With ``end`` (where the word ends), a rejection closing its short clause counts too
    ("顶楼不要。", "一楼二楼都不要"); "一楼不要太吵" is not one (the clause goes on).
    """
    if end is not None:
        rest = _CLAUSE_REST.match(text, end)
        clause_closed = rest is not None and (
            rest.end() == len(text) or text[rest.end()] in "，,。；;！!？?\n"
        )
        if clause_closed and rest is not None and _AFTER_NEG.search(rest.group(0)):
            return True
    lo = max(0, start - window)
    seg = text[lo:start]
    ends = list(_CLAUSE_END.finditer(seg))
    if ends:
        seg = seg[ends[-1].end() :]
    last = None
    for m in _CUE_RE.finditer(seg):
        last = m.group(0)
    return last in NEG_CUES if last else False


__all__ = ["NEG_CUES", "is_negated"]
