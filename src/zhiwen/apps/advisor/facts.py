"""The user's facts (price, budget, down payment, loan, income, area, city …) from Chinese text.

Amounts may be written in digits or Chinese numerals, with or without units: 300万, 三百万,
两万, 2万元, 两万五, 1.5万, 3,000,000元. Amounts, their units and places are read by
:mod:`zhiwen.chinese`; this module only finds which fact each amount states. Facts accumulate
over a conversation: a later message overrides what it restates ("那如果首付150万呢？"
replaces 首付三成 and keeps the rest).

Every amount is read with its unit and its role: an amount followed by ㎡/平/年/%/成 is never
money (「95㎡ 480万」: 95㎡ is the area, 480万 the price), a loan amount is its own fact
(「贷款200万」 needs no total price), corrections restate one fact (「年限改成30年」,
「首付改成两成」, 「利率换成3.5%」, 「不是二套，是首套」), and :func:`facts_echo` states the facts
used, so a misreading is visible and can be corrected in the next turn.

Example::

    >>> f = extract_facts("总价300万，首付三成，贷款30年，利率3.1%，等额本息。我月收入2万")
    >>> f.price, f.down_payment_ratio, f.loan_years, f.rate, f.monthly_income, f.method
    (3000000.0, 0.3, 30, 3.1, 20000.0, 'equal_payment')
    >>> merge_facts(f, extract_facts("那如果首付150万呢？")).down_payment_ratio is None
    True
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, Field

from zhiwen.apps.advisor.fmt import wan
from zhiwen.chinese.numerals import NUMERALS as _CN
from zhiwen.chinese.numerals import read_number
from zhiwen.chinese.places import find_cities, find_districts
from zhiwen.chinese.quantities import (
    AREA_UNIT,
    MONEY,
    MONEY_WITH_UNIT,
    NUM_AR,
    NUM_CN,
    money_yuan,
    ratio_text,
    tenths,
)

# a correction restates one fact: 「年限改成30年」, 「首付改成两成」, 「利率换成3.5%」
_CHANGE = (
    r"改成|改为|改到|换成|换为|变成|变为|调整为|调整到|调整成|调成|调到|调为|降到|降为|降至|降低到|"
    r"提高到|提高至|提到|升到|升至|涨到|增加到|加到|减少到|减到|放宽到|缩短到|缩短为|延长到|延长至|延长为|改"
)
_FILL = (
    rf"(?:{_CHANGE}|是|为|有|约|大约|大概|在|差不多|能|可以|只有|付|交|按|是按|一共|总共|左右"
    r"|每月|一个月|[:：\s])*"
)


class UserFacts(BaseModel):
    """What the user told us about their purchase (amounts in 元, rate in %)."""

    price: float | None = Field(None, description="房屋总价（元）")
    budget: float | None = Field(None, description="购房预算（元）")
    down_payment: float | None = Field(None, description="首付金额（元）")
    down_payment_ratio: float | None = Field(None, description="首付比例")
    loan_amount: float | None = Field(None, description="贷款金额（元）")
    loan_years: int | None = Field(None, description="贷款年限")
    rate: float | None = Field(None, description="年利率（%）")
    method: str | None = Field(None, description="还款方式 equal_payment / equal_principal")
    monthly_income: float | None = Field(None, description="月收入（元）")
    monthly_payment: float | None = Field(None, description="用户给出的月供（元）")
    area: float | None = Field(None, description="面积（㎡）")
    rooms: int | None = Field(None, description="居室数")
    city: str | None = Field(None, description="城市")
    districts: list[str] = Field(default_factory=list, description="提到的区（按用户写法）")
    bankuai: list[str] = Field(default_factory=list, description="提到的板块")
    is_first_home: bool | None = Field(None, description="是否首套（家庭唯一住房）")
    home_number: int | None = Field(None, description="第几套住房")
    is_only_home: bool | None = Field(None, description="卖方满五唯一")
    house_age_years: int | None = Field(None, description="房产持有年限（年）")
    provident_fund: bool | None = Field(None, description="是否公积金贷款")

    @property
    def target_price(self) -> float | None:
        """The price to compute with: the stated price, else the budget."""
        return self.price if self.price is not None else self.budget

    def effective_price(self) -> float | None:
        """The price to compute with: stated (or the budget), else the loan plus the down payment."""
        if self.target_price is not None:
            return self.target_price
        if self.loan_amount is not None and self.down_payment is not None:
            return self.loan_amount + self.down_payment
        return None

    def effective_ratio(self) -> float | None:
        """首付比例 from the ratio, or from the amount (or the loan) and the price."""
        if self.down_payment_ratio is not None:
            return self.down_payment_ratio
        price = self.effective_price()
        if self.down_payment is not None and price:
            return min(self.down_payment / price, 1.0)
        if self.loan_amount is not None and price and self.loan_amount < price:
            return (price - self.loan_amount) / price
        return None

    def known(self) -> dict[str, Any]:
        return {k: v for k, v in self.model_dump().items() if v not in (None, [])}


def _first(pattern: str, text: str) -> re.Match[str] | None:
    return re.search(pattern, text)


def extract_facts(text: str) -> UserFacts:
    """Facts stated in one message (unstated fields stay None)."""
    t = re.sub(r"(?<=\d)[,，](?=\d{3})", "", text)
    f = UserFacts()
    for read in (
        _money_facts,
        _down_payment_facts,
        _loan_amount_facts,
        _loan_facts,
        _income_facts,
        _size_facts,
    ):
        read(t, f)
    _home_facts(t, f)
    _place_facts(t, f)
    _unlabelled_facts(t, f)
    if re.search(r"公积金(?:贷款|贷)|用公积金", t):
        f.provident_fund = True
    return f


_PRICE_WORDS = r"总价|房价|售价|成交价|总房款|房款|价格|报价|这套房子?|房子|买一套|挂牌价"
_HOME_WORDS = r"房子|房|住房|二手房|新房|两居|三居|一居|小区"


def _money_facts(t: str, f: UserFacts) -> None:
    """The price of the home and the budget."""
    m = _first(rf"(?:{_PRICE_WORDS})(?:{_CHANGE}|大概|大约|约|是|为|在|要|：|:|\s)*({MONEY})", t)
    if m is None:
        m = _first(rf"({MONEY_WITH_UNIT})\s*(?:元|块)?\s*(?:左右)?的?(?:{_HOME_WORDS})", t)
    if m:
        f.price = money_yuan(m.group(1), bare_unit=10_000)
    m = _first(rf"预算{_FILL}({MONEY})", t) or _first(rf"({MONEY})\s*(?:元|块)?\s*(?:的|左右的?)?预算", t)
    if m:
        f.budget = money_yuan(m.group(1), bare_unit=10_000)


def _down_payment_facts(t: str, f: UserFacts) -> None:
    """The down payment: a ratio (三成, 30%, 百分之三十) or an amount."""
    m = _first(rf"首付(?:款|比例)?{_FILL}({NUM_AR}|[{_CN}]+)\s*成", t)
    if m:
        f.down_payment_ratio = tenths(m.group(1))
    elif m := _first(rf"首付(?:款|比例)?{_FILL}(?:({NUM_AR})\s*[%％]|百分之({NUM_AR}|{NUM_CN}))", t):
        value = read_number(m.group(1) or m.group(2))
        f.down_payment_ratio = None if value is None else value / 100
    elif m := _first(rf"首付(?:款)?{_FILL}({MONEY})", t):
        f.down_payment = money_yuan(m.group(1), bare_unit=10_000)


def _loan_amount_facts(t: str, f: UserFacts) -> None:
    """The loan itself: 「贷款200万」, 「贷款额改成180万」, 「商贷150万」 (never 贷款30年)."""
    m = _first(
        rf"(?:贷款|商贷|公积金贷|组合贷|房贷|借|贷)(?:金额|总额|额度|额|款)?(?:需要|要)?{_FILL}({MONEY_WITH_UNIT})",
        t,
    )
    m = m or _first(rf"(?:贷款金额|贷款额|贷款总额){_FILL}({MONEY})", t)
    if m and (amount := money_yuan(m.group(1), bare_unit=10_000)) is not None and amount >= 10_000:
        f.loan_amount = amount


_YEARS = rf"({NUM_AR}|[{_CN}]+)\s*年"
# a bare 「30年」 is the loan term unless it is a date, a house's age or a span of time
_BARE_YEARS = (
    r"(?<![满龄有了住\d.])(\d{1,2}|[一二两三四五六七八九十]{1,3})\s*年"
    r"(?![期前后内以来代龄底初中末度月份纪级])"
)


def _loan_facts(t: str, f: UserFacts) -> None:
    """The loan's years, rate and repayment method."""
    m = _first(rf"(?:贷款|贷|按揭|还款|分期|期限|年限)(?:期限|年限)?{_FILL}{_YEARS}", t)
    m = m or _first(rf"{_YEARS}(?:期)?的?(?:贷款|按揭|商贷|公积金贷款|房贷|还清|等额)", t)
    if m and (years := read_number(m.group(1))) is not None and 1 <= years <= 50:
        f.loan_years = int(years)

    m = _first(rf"利率{_FILL}(?:({NUM_AR})\s*[%％]?|百分之({NUM_AR}|{NUM_CN})|({NUM_CN}))", t)
    m = m or _first(rf"({NUM_AR})\s*[%％]\s*的?(?:年)?利率", t)
    if m and (rate := read_number(next(g for g in m.groups() if g))) is not None and 0 <= rate < 30:
        f.rate = rate

    if "等额本金" in t:
        f.method = "equal_principal"
    elif "等额本息" in t:
        f.method = "equal_payment"


def _income_facts(t: str, f: UserFacts) -> None:
    """The monthly income (a yearly one divided by 12) and the monthly payment."""
    m = _first(
        rf"(?:月收入|月薪|月工资|每月收入|每个月收入|每月到手|月到手|收入|工资|薪水|税后){_FILL}({MONEY})", t
    )
    if m:
        f.monthly_income = money_yuan(m.group(1))
    if m := _first(rf"(?:年收入|年薪){_FILL}({MONEY})", t):
        income = money_yuan(m.group(1))
        f.monthly_income = None if income is None else round(income / 12, 2)

    if m := _first(rf"月供{_FILL}({MONEY})", t):
        f.monthly_payment = money_yuan(m.group(1))


def _size_facts(t: str, f: UserFacts) -> None:
    """The area and the number of rooms."""
    m = _first(
        rf"(?:面积|建面|套内)?{_FILL}({NUM_AR}|{NUM_CN})\s*{AREA_UNIT}(?!台|均|时|常|案|式|面|便)",
        t,
    )
    if m and (area := read_number(m.group(1))) is not None and 5 <= area <= 2000:
        f.area = area

    if m := _first(r"([1-9]|[一二两三四五六])\s*(?:室|房|居)(?!价|贷|子|龄|产|屋|东|源)", t):
        rooms = read_number(m.group(1))
        f.rooms = None if rooms is None else int(rooms)


_HOME_KINDS = (
    (r"首套|第一套|名下无房|刚需首|家庭唯一住房", True, 1),
    (r"二套|第二套|两套", False, 2),
    (r"三套|第三套", False, 3),
)
_NEGATED_HOME = r"(?:不是|并非|不算|而非|非)(?:首套|第一套|二套|第二套|三套|第三套)"


def _home_kind(t: str) -> tuple[bool, int] | None:
    """首套 / 二套 / 三套 as last stated: 「不是二套，是首套」 and 「首套改成二套」 mean the latter."""
    kept = re.sub(_NEGATED_HOME, "，", t)
    found = [
        (m.start(), first, number)
        for pattern, first, number in _HOME_KINDS
        for m in re.finditer(pattern, kept)
    ]
    if found:
        _, first, number = max(found)
        return first, number
    negated = re.search(_NEGATED_HOME, t)
    if negated is None:
        return None
    return (False, 2) if re.search(r"首套|第一套", negated.group()) else (True, 1)


def _home_facts(t: str, f: UserFacts) -> None:
    if (kind := _home_kind(t)) is not None:
        f.is_first_home, f.home_number = kind
    if re.search(r"满五唯一|满5唯一", t):
        f.is_only_home, f.house_age_years = True, 5
    elif re.search(r"不满[二两2]年", t):
        f.house_age_years = 1
    elif re.search(r"满[二两2]年?|满两年", t):
        f.house_age_years = 2
    if m := re.search(
        rf"(?:房龄|持有|产证|房本|购入|买了)(?:满|已|已经|有|是|为)?({NUM_AR}|[{_CN}]+)\s*年", t
    ):
        age = read_number(m.group(1))
        if age is not None and 0 <= age <= 100:
            f.house_age_years = int(age)


def _place_facts(t: str, f: UserFacts) -> None:
    cities = find_cities(t)
    mentions = find_districts(t, city=cities[0] if cities else None)
    if cities:
        f.city = cities[0]
    elif mentions:
        f.city = mentions[0].city
    mentions = [m for m in mentions if f.city is None or m.city == f.city]
    f.districts = [m.surface for m in mentions if m.bankuai is None]
    f.bankuai = [m.bankuai for m in mentions if m.bankuai is not None]


_NOT_RATE_WORDS = r"首付|税|中介|收入|比例|占|涨|跌|降价"
_OTHER_MONEY_WORDS = (
    r"首付|收入|工资|月薪|年薪|薪水|月供|贷|借|预算|税|利息|中介|存款|积蓄|还款|租金|手里|现金|公积金|余额"
)


def _unlabelled_facts(t: str, f: UserFacts) -> None:
    """What a follow-up states without its keyword: 「那30年呢？」 (years), 「3.5%呢」 (rate), and
    a lone price 「95㎡ 480万」 (an amount of 10万 or more that no other fact claims)."""
    if f.loan_years is None and f.house_age_years is None:
        m = _first(_BARE_YEARS, t)
        if m and (years := read_number(m.group(1))) is not None and 1 <= years <= 30:
            f.loan_years = int(years)
    if f.rate is None:
        for m in re.finditer(rf"(?<![\d.])({NUM_AR})\s*[%％]", t):
            before = re.split(r"[，,、；;。！!？?]", t[: m.start()])[-1]  # the clause it is in
            rate = read_number(m.group(1))
            if rate is not None and 0.5 <= rate <= 10 and not re.search(_NOT_RATE_WORDS, before):
                f.rate = rate
                break
    if f.price is None and f.budget is None and f.loan_amount is None:
        for m in re.finditer(MONEY_WITH_UNIT, t):
            before = t[max(0, m.start() - 6) : m.start()]
            amount = money_yuan(m.group())
            if amount is not None and amount >= 100_000 and not re.search(_OTHER_MONEY_WORDS, before):
                f.price = amount
                return


# 首付 (amount or ratio) and the loan amount say the same thing: a follow-up restating one of
# them replaces the others (「首付改成两成」 after 「贷款200万」 drops the loan amount)
_SPLIT = ("down_payment", "down_payment_ratio", "loan_amount")


def merge_facts(old: UserFacts, new: UserFacts) -> UserFacts:
    """``old`` updated by what ``new`` states; an amount replaces a ratio and vice versa."""
    data = old.model_dump()
    for key, value in new.model_dump().items():
        if value not in (None, []):
            data[key] = value
    stated = [k for k in _SPLIT if getattr(new, k) is not None]
    if stated:
        for key in _SPLIT:
            if key not in stated:
                data[key] = None
    if new.city and new.city != old.city and not (new.districts or new.bankuai):
        data["districts"], data["bankuai"] = [], []
    return UserFacts.model_validate(data)


def facts_from_messages(messages: Iterable[Mapping[str, Any]], base: UserFacts | None = None) -> UserFacts:
    """Facts from every user message of a conversation, later ones overriding earlier ones."""
    facts = base or UserFacts()
    for message in messages:
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            facts = merge_facts(facts, extract_facts(message["content"]))
    return facts


# -- the echo: the facts used, stated back at the top of every answer -----------------------------
_HOME_NAMES = {1: "首套", 2: "二套", 3: "三套"}
_COMPUTING = (
    "price", "budget", "down_payment", "down_payment_ratio", "loan_amount", "loan_years", "rate",
    "monthly_income", "monthly_payment", "area", "is_first_home", "house_age_years",
)  # fmt: skip


def _money_text(value: float) -> str:
    """万元 for whole hundreds (2万元, 1.5万元), else 元 to the cent (8,500元)."""
    if value >= 10_000 and round(value) % 100 == 0:
        return wan(value)
    return f"{value:,.2f}".rstrip("0").rstrip(".") + "元"


def _price_parts(f: UserFacts) -> list[str]:
    if f.price is not None:
        return [f"总价{wan(f.price)}"]
    if f.budget is not None:
        return [f"预算{wan(f.budget)}"]
    return []


def _down_parts(f: UserFacts) -> list[str]:
    price = f.effective_price()
    if f.down_payment_ratio is not None:
        amount = f"（{wan(price * f.down_payment_ratio)}）" if price else ""
        return [f"首付{ratio_text(f.down_payment_ratio)}{amount}"]
    if f.down_payment is not None:
        return [f"首付{wan(f.down_payment)}"]
    return []


def _loan_parts(f: UserFacts) -> list[str]:
    parts = [f"贷款额{wan(f.loan_amount)}"] if f.loan_amount is not None else []
    if f.loan_years is not None:
        parts.append(f"贷款{f.loan_years}年")
    if f.rate is not None:
        parts.append(f"利率{f.rate:g}%")
    if f.provident_fund:
        parts.append("公积金贷款")
    if f.method is not None:
        parts.append("等额本金" if f.method == "equal_principal" else "等额本息")
    return parts


def _home_parts(f: UserFacts) -> list[str]:
    parts = [f"{f.area:g}㎡"] if f.area is not None else []
    if f.home_number is not None:
        parts.append(_HOME_NAMES.get(f.home_number, f"第{f.home_number}套"))
    elif f.is_first_home is not None:
        parts.append("首套" if f.is_first_home else "非首套")
    if f.is_only_home:
        parts.append("满五唯一")
    elif f.house_age_years is not None:
        parts.append(f"房产持有{f.house_age_years}年")
    return parts


def _income_parts(f: UserFacts) -> list[str]:
    parts = [f"月收入{_money_text(f.monthly_income)}"] if f.monthly_income is not None else []
    if f.monthly_payment is not None:
        parts.append(f"月供{_money_text(f.monthly_payment)}")
    return parts


def facts_echo(facts: UserFacts) -> str | None:
    """The facts used, as one line for the top of an answer (None when nothing was stated)::

    >>> facts_echo(extract_facts("总价480万，首付两成，贷款30年，利率3.1%，95㎡，首套"))
    '按总价480万元、首付两成（96万元）、贷款30年、利率3.1%、95㎡、首套计算：'
    """
    if all(getattr(facts, k) is None for k in _COMPUTING):
        return None
    parts = [facts.city] if facts.city else []
    for read in (_price_parts, _down_parts, _loan_parts, _home_parts, _income_parts):
        parts += read(facts)
    return f"按{'、'.join(parts)}计算："
