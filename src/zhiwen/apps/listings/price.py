"""Budget and unit price in a (normalised) question → ``price_*`` and ``unit_price_*``.

Every "N万" is read once, in context, by the first rule that claims it (rules run from the
most to the least specific). Total prices are in 万元; unit prices in 元/㎡ as the data has
them, so "单价6万以下" is ``unit_price_max = 60000``. Amounts after 首付 / 月供 / 税费 … are
not the budget and are skipped.

Approximate amounts — ``300万左右``, ``300万上下``, ``三百来万`` / ``300来万``, ``大概300万`` —
are read as the amount ±10 % (270–300–330), the same width as the re-score's over-budget
tolerance; ``500万出头`` is 500–550. Colloquial ranges arrive as digits from
:func:`~zhiwen.chinese.normalise.normalise_question` (两三百万 → 200-300万).

A total given in 元 (``预算8000000``, ``总价3000000元以内``: six digits or more, not a unit price)
is read as 万元 (800万, 300万以内) instead of being dropped; the understood conditions show it.

Example::

    >>> from zhiwen.chinese.normalise import normalise_question
    >>> req = Requirements()
    >>> extract_price(normalise_question("两三百万，单价6万以下"), req)
    >>> req.price_min, req.price_max, req.unit_price_max
    (200.0, 300.0, 60000.0)
"""

from __future__ import annotations

import re
from collections.abc import Callable

from zhiwen.apps.listings.requirements import Requirements
from zhiwen.chinese.numerals import NUM

APPROX = 0.10  # "左右" / "来" / "上下": ± this share of the amount
_SKIP_BEFORE = re.compile(
    r"(首付|月供|税费|税|贷款|公积金|单价|均价|每平|租金|月租|装修费|中介费)\s*[^，,。；;]{0,4}$"
)
_UP = r"(?:平均单价|单价|均价|每平方米?|每平米?|每平)"  # how a unit price is introduced
_UP_UNIT = r"(万|千|元|块)?"
_PER_AREA = r"(?:元|块)?\s*(?:/|每|一|1)\s*平(?:方|米)?"  # "6万/平", "6万一平"
_UPPER_WORDS = r"不超过|不超|不高于|不大于|最多|最高|顶多|至多|低于|少于|小于|不到|控制在|限制在|上限"
_LOWER_WORDS = r"不低于|不少于|至少|最少|最低|高于|超过|大于|起码"
_MAX_Q = frozenset(("以内", "以下", "之内", "内", "封顶"))
_MIN_Q = frozenset(("以上", "起", "往上"))

Spans = list[tuple[int, int]]
# a rule's handler sets fields from its match; False = "not mine after all" (the span stays free)
Handler = Callable[[re.Match[str], Requirements], bool]


def _approx(v: float) -> tuple[float, float]:
    return round(v * (1 - APPROX), 2), round(v * (1 + APPROX), 2)


# -- unit price (元/㎡) ------------------------------------------------------------------------
def _unit_value(amount: str, unit: str | None) -> float:
    v = float(amount)
    if unit == "万" or (unit is None and v < 100):  # "单价6" can only mean 6万元/㎡
        return v * 1e4
    if unit == "千":
        return v * 1e3
    return v


def _set_unit_bounds(req: Requirements, v: float, qualifier: str | None, pre: str | None) -> None:
    if qualifier in _MAX_Q or (pre and re.fullmatch(_UPPER_WORDS, pre)):
        req.unit_price_max = v
    elif qualifier in _MIN_Q or (pre and re.fullmatch(_LOWER_WORDS, pre)):
        req.unit_price_min = v
    elif qualifier == "出头":
        req.unit_price_min, req.unit_price_max = v, float(round(v * (1 + APPROX)))
    else:  # "单价6万左右", "单价6万的": about that much
        lo, hi = _approx(v)
        req.unit_price_min, req.unit_price_max = float(round(lo)), float(round(hi))


def _unit_range(m: re.Match[str], req: Requirements) -> bool:
    unit = m.group(4) or m.group(2)  # "单价5到6万": the unit after the second number covers both
    a, b = sorted((_unit_value(m.group(1), m.group(2) or unit), _unit_value(m.group(3), unit)))
    req.unit_price_min, req.unit_price_max = a, b
    return True


def _unit_single(m: re.Match[str], req: Requirements) -> bool:
    _set_unit_bounds(req, _unit_value(m.group(2), m.group(3)), m.group(4), m.group(1))
    return True


_QUAL = r"(以内|以下|之内|内|封顶|以上|起|往上|左右|上下|出头)?"
_BOUND_WORD = rf"({_UPPER_WORDS}|{_LOWER_WORDS})?"
UNIT_PRICE_RULES: list[tuple[re.Pattern[str], Handler]] = [
    (
        re.compile(rf"{_UP}\s*(?:要|在|是)?\s*{NUM}\s*{_UP_UNIT}\s*(?:-|到|至)\s*{NUM}\s*{_UP_UNIT}"),
        _unit_range,
    ),
    (re.compile(rf"{_UP}\s*(?:要|在|是)?\s*{_BOUND_WORD}\s*{NUM}\s*{_UP_UNIT}\s*{_QUAL}"), _unit_single),
    (re.compile(rf"{_BOUND_WORD}\s*{NUM}\s*{_UP_UNIT}\s*{_PER_AREA}\s*{_QUAL}"), _unit_single),
]


# -- total price (万元) -------------------------------------------------------------------------
def _range(m: re.Match[str], req: Requirements) -> bool:
    lo, hi = sorted((float(m.group(1)), float(m.group(3))))
    req.price_min, req.price_max = lo, hi
    return True


def _around(m: re.Match[str], req: Requirements) -> bool:
    v = float(m.group(1))
    req.price_target = v
    if m.group(2) == "出头":
        req.price_min, req.price_max = v, round(v * (1 + APPROX), 2)
    else:  # 左右 / 上下 / 附近 / 浮动 / 的样子 / 来
        req.price_min, req.price_max = _approx(v)
    return True


def _upper(m: re.Match[str], req: Requirements) -> bool:
    req.price_max = float(m.group(1))
    return True


def _lower(m: re.Match[str], req: Requirements) -> bool:
    req.price_min = float(m.group(1))
    return True


def _qualified(m: re.Match[str], req: Requirements) -> bool:
    v, q = float(m.group(1)), m.group(2)
    if q in _MAX_Q:
        req.price_max = v
    elif q == "多":
        req.price_min, req.price_max = v, round(v * 1.2, 2)
    else:
        req.price_min = v
    return True


def _about(m: re.Match[str], req: Requirements) -> bool:
    v = float(m.group(1))
    req.price_target = v
    req.price_min, req.price_max = _approx(v)
    return True


def _bare(m: re.Match[str], req: Requirements) -> bool:
    v = float(m.group(2))
    if v < 10:  # "5万" alone is not a house price (a unit price or a fee)
        return False
    if m.group(1) in ("总价", "价格", "价位"):
        req.price_target = v
        req.price_min, req.price_max = _approx(v)
    else:  # "预算900万", "手里有500万": a ceiling
        req.price_max = v
    return True


_PREFIX = r"(?:预算|总价|价格|价位|价钱|售价)?\s*(?:在|是|为|大概|大约|约)?\s*"
_BARE_PREFIX = r"(预算|总价|价格|价位|手里有|手上有|只有|能出|出得起|买得起|总共)?\s*(?:在|是|为)?\s*"
PRICE_RULES: list[tuple[re.Pattern[str], Handler]] = [
    (re.compile(rf"{NUM}\s*(万)?\s*(?:-|到|至)\s*{NUM}\s*万"), _range),
    (re.compile(rf"{_PREFIX}{NUM}\s*(?:万\s*(左右|上下|附近|出头|浮动|的样子)|来\s*万)"), _around),
    (re.compile(rf"(?:{_UPPER_WORDS})\s*(?:总价|预算)?\s*{NUM}\s*万"), _upper),
    (re.compile(rf"(?<!不)(?:{_LOWER_WORDS})\s*(?:总价|预算)?\s*{NUM}\s*万"), _lower),
    (re.compile(rf"{NUM}\s*万\s*(以内|以下|之内|内|封顶|以上|起|往上|多|出头)"), _qualified),
    (re.compile(rf"(?:大概|大约|约|差不多|估计)\s*{NUM}\s*万"), _about),
    (re.compile(rf"{_BARE_PREFIX}{NUM}\s*万"), _bare),
]


# a total in 元: 6–9 digits (10万元 … 10亿元) that no 万 / area / per-area unit follows
_YUAN_TOTAL = re.compile(r"(?<![\d.])(\d{6,9})(?![\d.])\s*(?:元|块)?(?!\s*(?:万|亿|平|米|/|每|一平|1平))")
_UNIT_PRICE_BEFORE = re.compile(rf"{_UP}\s*[^，,。；;]{{0,6}}$")


def yuan_to_wan(t: str) -> str:
    """``预算8000000`` → ``预算800万``; unit prices (``单价120000``) stay in 元/㎡.

    >>> yuan_to_wan("总价3000000元以内，单价120000以下")
    '总价300万以内，单价120000以下'
    """

    def repl(m: re.Match[str]) -> str:
        if _UNIT_PRICE_BEFORE.search(t[max(0, m.start() - 10) : m.start()]):
            return m.group(0)
        return f"{int(m.group(1)) / 1e4:g}万"

    return _YUAN_TOTAL.sub(repl, t)


def _apply(
    t: str, req: Requirements, rules: list[tuple[re.Pattern[str], Handler]], spans: Spans, *, total: bool
) -> None:
    for pattern, handler in rules:
        for m in pattern.finditer(t):
            a, b = m.span()
            if any(a < y and x < b for x, y in spans):
                continue
            if total and _SKIP_BEFORE.search(t[max(0, a - 8) : a]):
                continue
            if handler(m, req):
                spans.append((a, b))


def extract_price(t: str, req: Requirements) -> None:
    """Fill the total price (万元) and unit price (元/㎡) fields from the normalised question."""
    spans: Spans = []
    t = yuan_to_wan(t)
    _apply(t, req, UNIT_PRICE_RULES, spans, total=False)
    _apply(t, req, PRICE_RULES, spans, total=True)
    if req.price_min is not None and req.price_max is not None and req.price_min > req.price_max:
        req.price_min, req.price_max = req.price_max, req.price_min
    if (
        req.unit_price_min is not None
        and req.unit_price_max is not None
        and req.unit_price_min > req.unit_price_max
    ):
        req.unit_price_min, req.unit_price_max = req.unit_price_max, req.unit_price_min


__all__ = ["APPROX", "PRICE_RULES", "UNIT_PRICE_RULES", "extract_price", "yuan_to_wan"]
