"""The user's facts (price, budget, down payment, loan, income, area, city …) from Chinese text.

Amounts may be written in digits or Chinese numerals, with or without units: 300万, 三百万,
两万, 2万元, 两万五, 1.5万, 3,000,000元. Numerals are read by ``cn2an``; this module only finds
where the amounts are and what they mean. Facts accumulate over a conversation: a later message
overrides what it restates ("那如果首付150万呢？" replaces 首付三成 and keeps the rest).

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

import cn2an
from pydantic import BaseModel, Field

from zhiwen.apps.advisor.places import find_cities, find_districts

_CN = "零〇一二两三四五六七八九十百千"
NUM_AR = r"\d+(?:\.\d+)?"
NUM_CN = rf"[{_CN}]+(?:点[零〇一二三四五六七八九]+)?"
# "两万五" / "2万5千" read the digit after 万 as the next place; "2万一个月" does not
_TAIL = r"(?:[零〇一二两三四五六七八九]|\d(?![\d.]))(?:千)?(?![个平套年月次间天号])"
AMOUNT = rf"(?:{NUM_AR}|{NUM_CN})(?:\s*(?:亿|万|w|W|千|k|K)(?:{_TAIL})?)?"
AMOUNT_WITH_UNIT = rf"(?:(?:{NUM_AR}|{NUM_CN})\s*(?:亿|万|w|W)(?:{_TAIL})?|\d{{5,}}(?:\.\d+)?)"
_UNITS = {"亿": 100_000_000, "万": 10_000, "千": 1_000}
_FILL = r"(?:是|为|有|约|大约|大概|在|差不多|能|可以|只有|付|交|按|是按|一共|总共|左右|每月|一个月|[:：\s])*"


def parse_number(text: str) -> float | None:
    """'300万' → 3e6, '两万五' → 25000, '3.1' → 3.1, '三点一' → 3.1; None when unreadable."""
    token = text.strip().replace(",", "").replace("，", "").replace(" ", "")
    token = token.replace("w", "万").replace("W", "万").replace("k", "千").replace("K", "千")
    if not token:
        return None
    try:
        return float(cn2an.cn2an(token, "smart"))
    except (ValueError, KeyError, TypeError, IndexError):
        pass
    m = re.fullmatch(r"(.+?)(亿|万|千)(.*)", token)
    if m is None:
        return None
    head = parse_number(m.group(1))
    if head is None:
        return None
    unit = _UNITS[m.group(2)]
    tail = parse_number(m.group(3)) if m.group(3) else 0.0
    return head * unit + (tail or 0.0) * unit / 10


def _money(token: str, *, bare_unit: int = 1) -> float | None:
    """An amount in 元; ``bare_unit`` scales small bare numbers (总价300 → 300万, 3000000 stays)."""
    value = parse_number(token)
    if value is None:
        return None
    has_unit = any(u in token for u in ("万", "亿", "千", "w", "W", "k", "K"))
    return value if has_unit or value >= 10_000 else value * bare_unit


class UserFacts(BaseModel):
    """What the user told us about their purchase (amounts in 元, rate in %)."""

    price: float | None = Field(None, description="房屋总价（元）")
    budget: float | None = Field(None, description="购房预算（元）")
    down_payment: float | None = Field(None, description="首付金额（元）")
    down_payment_ratio: float | None = Field(None, description="首付比例")
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

    def effective_ratio(self) -> float | None:
        """首付比例 from the ratio, or from the amount and the price."""
        if self.down_payment_ratio is not None:
            return self.down_payment_ratio
        price = self.target_price
        if self.down_payment is not None and price:
            return min(self.down_payment / price, 1.0)
        return None

    def known(self) -> dict[str, Any]:
        return {k: v for k, v in self.model_dump().items() if v not in (None, [])}


def _first(pattern: str, text: str) -> re.Match[str] | None:
    return re.search(pattern, text)


def _ratio_word(token: str) -> float | None:
    value = parse_number(token)
    return None if value is None else value / 10


def extract_facts(text: str) -> UserFacts:
    """Facts stated in one message (unstated fields stay None)."""
    t = re.sub(r"(?<=\d)[,，](?=\d{3})", "", text)
    f = UserFacts()
    for read in (_money_facts, _down_payment_facts, _loan_facts, _income_facts, _size_facts):
        read(t, f)
    _home_facts(t, f)
    _place_facts(t, f)
    if re.search(r"公积金(?:贷款|贷)|用公积金", t):
        f.provident_fund = True
    return f


def _money_facts(t: str, f: UserFacts) -> None:
    """The price of the home and the budget."""
    m = _first(
        rf"(?:总价|房价|售价|成交价|总房款|房款|价格|报价|这套房子?|房子|买一套|挂牌价)(?:大概|大约|约|是|为|在|要|：|:|\s)*({AMOUNT})",
        t,
    )
    if m is None:
        m = _first(
            rf"({AMOUNT_WITH_UNIT})\s*(?:元|块)?\s*(?:左右)?的?(?:房子|房|住房|二手房|新房|两居|三居|一居|小区)",
            t,
        )
    if m:
        f.price = _money(m.group(1), bare_unit=10_000)
    m = _first(rf"预算{_FILL}({AMOUNT})", t) or _first(rf"({AMOUNT})\s*(?:元|块)?\s*(?:的|左右的?)?预算", t)
    if m:
        f.budget = _money(m.group(1), bare_unit=10_000)


def _down_payment_facts(t: str, f: UserFacts) -> None:
    """The down payment: a ratio (三成, 30%, 百分之三十) or an amount."""
    m = _first(rf"首付(?:款|比例)?{_FILL}({NUM_AR}|[{_CN}]+)\s*成", t)
    if m:
        f.down_payment_ratio = _ratio_word(m.group(1))
    elif m := _first(rf"首付(?:款|比例)?{_FILL}(?:({NUM_AR})\s*%|百分之({NUM_AR}|{NUM_CN}))", t):
        value = parse_number(m.group(1) or m.group(2))
        f.down_payment_ratio = None if value is None else value / 100
    elif m := _first(rf"首付(?:款)?{_FILL}({AMOUNT})", t):
        f.down_payment = _money(m.group(1), bare_unit=10_000)


def _loan_facts(t: str, f: UserFacts) -> None:
    """The loan's years, rate and repayment method."""
    m = _first(rf"(?:贷款|贷|按揭|还款|分期|期限|年限)(?:期限|年限)?{_FILL}({NUM_AR}|[{_CN}]+)\s*年", t)
    m = m or _first(rf"({NUM_AR}|[{_CN}]+)\s*年(?:期)?的?(?:贷款|按揭|商贷|公积金贷款|房贷|还清|等额)", t)
    if m and (years := parse_number(m.group(1))) is not None and 1 <= years <= 50:
        f.loan_years = int(years)

    m = _first(rf"利率{_FILL}(?:({NUM_AR})\s*%?|百分之({NUM_AR}|{NUM_CN})|({NUM_CN}))", t)
    m = m or _first(rf"({NUM_AR})\s*%\s*的?(?:年)?利率", t)
    if m and (rate := parse_number(next(g for g in m.groups() if g))) is not None and 0 <= rate < 30:
        f.rate = rate

    if "等额本金" in t:
        f.method = "equal_principal"
    elif "等额本息" in t:
        f.method = "equal_payment"


def _income_facts(t: str, f: UserFacts) -> None:
    """The monthly income (a yearly one divided by 12) and the monthly payment."""
    m = _first(
        rf"(?:月收入|月薪|月工资|每月收入|每个月收入|每月到手|月到手|收入|工资|薪水|税后){_FILL}({AMOUNT})", t
    )
    if m:
        f.monthly_income = _money(m.group(1))
    if m := _first(rf"(?:年收入|年薪){_FILL}({AMOUNT})", t):
        income = _money(m.group(1))
        f.monthly_income = None if income is None else round(income / 12, 2)

    if m := _first(rf"月供{_FILL}({AMOUNT})", t):
        f.monthly_payment = _money(m.group(1))


def _size_facts(t: str, f: UserFacts) -> None:
    """The area and the number of rooms."""
    m = _first(
        rf"(?:面积|建面|套内)?{_FILL}({NUM_AR}|{NUM_CN})\s*(?:平方米|平米|平方|平|㎡|m2|m²|方)(?!台)", t
    )
    if m and (area := parse_number(m.group(1))) is not None and 5 <= area <= 2000:
        f.area = area

    if m := _first(r"([1-9]|[一二两三四五六])\s*(?:室|房|居)(?!价|贷|子|龄|产|屋|东|源)", t):
        rooms = parse_number(m.group(1))
        f.rooms = None if rooms is None else int(rooms)


def _home_facts(t: str, f: UserFacts) -> None:
    if re.search(r"首套|第一套|名下无房|刚需首|家庭唯一住房", t):
        f.is_first_home, f.home_number = True, 1
    elif re.search(r"二套|第二套|两套", t):
        f.is_first_home, f.home_number = False, 2
    elif re.search(r"三套|第三套", t):
        f.is_first_home, f.home_number = False, 3
    if re.search(r"满五唯一|满5唯一", t):
        f.is_only_home, f.house_age_years = True, 5
    elif re.search(r"满[二两2]年?|满两年", t):
        f.house_age_years = 2
    elif re.search(r"不满[二两2]年", t):
        f.house_age_years = 1
    if m := re.search(
        rf"(?:房龄|持有|产证|房本|购入|买了)(?:满|已|已经|有|是|为)?({NUM_AR}|[{_CN}]+)\s*年", t
    ):
        age = parse_number(m.group(1))
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


def merge_facts(old: UserFacts, new: UserFacts) -> UserFacts:
    """``old`` updated by what ``new`` states; an amount replaces a ratio and vice versa."""
    data = old.model_dump()
    for key, value in new.model_dump().items():
        if value not in (None, []):
            data[key] = value
    if new.down_payment is not None and new.down_payment_ratio is None:
        data["down_payment_ratio"] = None
    if new.down_payment_ratio is not None and new.down_payment is None:
        data["down_payment"] = None
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
