"""The units of the calculators' inputs, and the guards that refuse a number given in another.

``rate`` is a percent (3.1 = 3.1 %), ``down_payment_ratio`` and ``agent_fee_rate`` fractions
(0.3 = 三成), prices and incomes 元, ``years`` years. A number that only makes sense in the other
unit is refused with a Chinese hint instead of being computed with (``--rate 0.031`` once gave
月供 5,860.58 for a 3.1 % loan). The guards sit in the argument models (:mod:`..tools`), so the
REST calculators, the CLI, the chat's tool calls and an LLM's tool calls all get them.

Where the line is drawn, and why nothing real is refused:

* rate: 0 < rate < 0.5 — no Chinese mortgage rate is under 0.5 % a year (LPR ≥ 3 %, 公积金 ≥ 2.1 %);
  0 stays allowed (an interest-free loan).
* a ratio ≥ 1 — a down payment of 100 % or more is no loan; 30 is 30 %.
* a price under 1 万元 — no home costs that; 300 is 300 万元.
* a monthly income or payment under 100 元 — 2 is 2 万元.
* years over 30 — the longest mortgage term; 360 is 360 months.

Example::

    >>> from pydantic import BaseModel, Field
    >>> class Args(BaseModel):
    ...     rate: PercentRate = Field(ge=0, le=24)
    >>> Args(rate=0.031)
    Traceback (most recent call last):
    pydantic_core._pydantic_core.ValidationError: 1 validation error for Args
    rate
      利率请按百分数填写，如 3.1 表示 3.1% [type=zhiwen_unit, input_value=0.031, input_type=float]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from zhiwen.validation import unit_guard

MIN_RATE_PERCENT = 0.5
MIN_PRICE_YUAN = 10_000.0
MIN_MONTHLY_YUAN = 100.0
MAX_YEARS = 30

RATE_HINT = "利率请按百分数填写，如 3.1 表示 3.1%"
DOWN_PAYMENT_HINT = "首付比例请按小数填写，如 0.3 表示三成"
AGENT_FEE_HINT = "中介费率请按小数填写，如 0.02 表示 2%"


def rate_hint(value: float) -> str | None:
    """A yearly rate in percent: 0.031 is a fraction someone meant as 3.1 %."""
    return RATE_HINT if 0 < value < MIN_RATE_PERCENT else None


def down_payment_hint(value: float) -> str | None:
    """A fraction: 30 (or 1.3) is a percent; ≥ 1 is never a down payment ratio."""
    return DOWN_PAYMENT_HINT if 1 <= value <= 100 else None


def agent_fee_hint(value: float) -> str | None:
    """A fraction at most 0.1: 2 is 2 %."""
    return AGENT_FEE_HINT if 0.1 < value <= 100 else None


def _yuan_hint(what: str, example: str, minimum: float) -> Callable[[float], str | None]:
    """In 元: a positive amount under ``minimum`` was given in 万元."""

    def hint(value: float) -> str | None:
        return f"{what}请按元填写，如 {example}" if 0 < value < minimum else None

    return hint


price_hint = _yuan_hint("房价", "300 万元填 3000000", MIN_PRICE_YUAN)
deal_price_hint = _yuan_hint("成交价", "300 万元填 3000000", MIN_PRICE_YUAN)
original_price_hint = _yuan_hint("原购入价", "200 万元填 2000000", MIN_PRICE_YUAN)
income_hint = _yuan_hint("月收入", "2 万元填 20000", MIN_MONTHLY_YUAN)
payment_hint = _yuan_hint("月供", "0.9 万元填 9000", MIN_MONTHLY_YUAN)


def years_hint(value: float) -> str | None:
    """Years, at most 30: 360 is months (= 30 years)."""
    if value <= MAX_YEARS:
        return None
    if value % 12 == 0 and value / 12 <= MAX_YEARS:
        years = int(value // 12)
        return f"贷款年限请按年填写，最长 {MAX_YEARS} 年；{value:g} 个月请填 {years}"
    return f"贷款年限请按年填写，最长 {MAX_YEARS} 年"


PercentRate = Annotated[float, unit_guard(rate_hint)]
DownPaymentRatio = Annotated[float, unit_guard(down_payment_hint)]
AgentFeeRate = Annotated[float, unit_guard(agent_fee_hint)]
HomePrice = Annotated[float, unit_guard(price_hint)]
DealPrice = Annotated[float, unit_guard(deal_price_hint)]
OriginalPrice = Annotated[float, unit_guard(original_price_hint)]
MonthlyIncome = Annotated[float, unit_guard(income_hint)]
MonthlyPayment = Annotated[float, unit_guard(payment_hint)]
LoanYears = Annotated[int, unit_guard(years_hint)]
