"""Rule-based understanding of recipe questions: route, filters, how many dishes.

Routes: ``list`` (dish names / recommendations: 推荐几个素菜、有什么川菜、给我3个简单的菜),
``detail`` (how to cook one dish: 宫保鸡丁怎么做、制作步骤、需要什么食材), ``general``
(anything else: 什么是川菜、制作技巧、营养价值). Rules decide the clear cases; when they are
unsure (:attr:`RouteDecision.confident` is False) the app may ask the LLM.

Filters map words to HowToCook metadata: 素菜/荤菜/汤/早餐/甜品/饮品/水产/主食/调料/半成品 →
``category`` (folder names), 简单/新手/容易/快手 → ``difficulty ≤ 2``, 难/有挑战/复杂 →
``difficulty ≥ 4``, ``3星以下`` → ``≤ 3``. 简单/容易 also ask for the easiest first
(:func:`prefers_easiest`): ★ dishes before ★★ ones.

Example::

    >>> classify("推荐几个简单的素菜")
    RouteDecision(route='list', confident=True, reason='list words')
    >>> question_filters("推荐几个简单的素菜")
    {'category': 'vegetable_dish', 'difficulty': {'lte': 2}}
    >>> wanted_count("给我3个简单的菜")
    3
    >>> prefers_easiest("有什么容易做的荤菜"), prefers_easiest("2星以下的荤菜")
    (True, False)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from zhiwen.chinese.numerals import cn_to_int

CATEGORY_LABELS: dict[str, str] = {
    "vegetable_dish": "素菜",
    "meat_dish": "荤菜",
    "soup": "汤羹",
    "breakfast": "早餐",
    "dessert": "甜品",
    "drink": "饮品",
    "aquatic": "水产",
    "staple": "主食",
    "condiment": "调料",
    "semi-finished": "半成品",
}

# word patterns → category folder; checked in order, every match is kept (素菜或汤 → both)
_CATEGORY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("vegetable_dish", re.compile(r"素菜|素食|吃素|素的|全素|纯素|蔬菜")),
    ("meat_dish", re.compile(r"荤菜|肉菜|荤的|硬菜|肉类")),
    ("soup", re.compile(r"汤(?![圆汁底料面匙勺])|羹(?!匙)")),
    ("breakfast", re.compile(r"早餐|早饭|早点|早上吃|早上.{0,2}做")),
    ("dessert", re.compile(r"甜品|甜点|点心|甜食|糕点|下午茶")),
    ("drink", re.compile(r"饮品|饮料|喝的|鸡尾酒|调酒|特调|茶饮|果汁")),
    ("aquatic", re.compile(r"水产|海鲜|河鲜|鱼类|虾蟹")),
    ("staple", re.compile(r"主食|面食")),
    ("condiment", re.compile(r"调料|酱料|调味料|调味品|蘸料|酱汁")),
    ("semi-finished", re.compile(r"半成品|速冻|预制")),
)

_NUM = r"(\d+|[一二两三四五六七八九十]{1,3})"

_STARS = re.compile(_NUM + r"\s*(?:星|颗星|★)\s*(以下|以内|及以下|之内|以上|及以上)?")
_EASY = re.compile(
    r"不难|不复杂|不麻烦|难度(?:较|比较|很|最)?(?:低|小|不高)"
    r"|简单|新手|容易|快手|入门|零基础|懒人|好做|易做|省事|初学|小白"
)
_HARD = re.compile(
    r"(?<!不)(?:有挑战|复杂|高难度|进阶|功夫菜|大厨|难度(?:较|比较|很|最)?(?:高|大))"
    r"|(?<!不)难(?![吃度闻看受过])"
)

# -- routing patterns -------------------------------------------------------------------------
_DETAIL = re.compile(
    r"怎么(?:做|炒|煮|烧|蒸|炖|煎|炸|拌|腌|弄|制作|准备|烤|卤|焖|煲|熬|调)"
    r"|怎样(?:做|制作)|如何(?:做|制作|烹饪|烧|炒|煮|蒸|炖|烤)|咋做|做法|制作方法|制作步骤|制作过程"
    r"|步骤|工序|流程|教程|食谱"
    r"|需要(?:什么|哪些|多少|准备|几)|要(?:放|加|用)(?:什么|哪些|多少)|放(?:什么|多少|几)|加(?:多少|几)"
    r"|(?:什么|哪些)(?:食材|原料|材料|配料|用料|调料)|(?:食材|原料|材料|配料|用料)"
    r"|多少(?:克|毫升|g|ml|分钟)|多久|几分钟|火候"
)
_LIST = re.compile(
    r"推荐|有(?:什么|哪些|啥)|哪些|列(?:出|举)|来(?:几|点|一些)|吃什么|喝什么|做(?:什么|点什么)"
    r"|什么菜|菜单|清单|大全|菜谱有"
    + r"|(?:几|"
    + _NUM
    + r")\s*(?:个|道|款|样|种)(?=.{0,8}(?:菜|汤|品|点|饭|面|吃的|喝的|早餐|主食|料理|小吃|$))"
)
_GENERAL = re.compile(
    r"什么是|是什么|为什么|为何|区别|不同|技巧|窍门|诀窍|营养|热量|卡路里|怎么判断|如何判断|怎么保存|如何保存"
    r"|怎么挑|如何挑|原理|能不能|可以吗|好处|坏处|注意什么|注意事项"
)


@dataclass(frozen=True, slots=True)
class RouteDecision:
    route: str  # list | detail | general
    confident: bool
    reason: str


def classify(question: str, *, dish_found: bool = False) -> RouteDecision:
    """Rules: detail words vs list words (after removing detail phrases), dish names, general words."""
    q = question.strip()
    detail = bool(_DETAIL.search(q))
    residual = _DETAIL.sub("", q)
    is_list = bool(_LIST.search(residual))
    general = bool(_GENERAL.search(q))
    if is_list and detail:
        # "宫保鸡丁有哪些做法" names a dish → detail; "有什么简单的鸡蛋做法" does not → list
        return RouteDecision("detail" if dish_found else "list", True, "list and detail words")
    if is_list and general and not question_filters(q):
        # "焯水有什么技巧": 有什么 asks about a topic, not for dishes
        return RouteDecision("general", True, "general words")
    if is_list:
        return RouteDecision("list", True, "list words")
    if detail:
        return RouteDecision("detail", True, "detail words")
    if general:
        return RouteDecision("general", True, "general words")
    if dish_found:
        return RouteDecision("detail", True, "dish name")
    if question_filters(q):
        return RouteDecision("list", True, "category/difficulty words")
    return RouteDecision("general", False, "no rule matched")


def question_categories(question: str) -> list[str]:
    return [cat for cat, pat in _CATEGORY_PATTERNS if pat.search(question)]


def difficulty_filter(question: str) -> dict[str, int] | None:
    """``{"lte": 2}`` / ``{"gte": 4}`` / ``{"eq": 3}`` from the question, or None."""
    m = _STARS.search(question)
    if m:
        n = cn_to_int(m.group(1))
        if n is not None and 1 <= n <= 5:
            bound = m.group(2) or ""
            if "下" in bound or "内" in bound:
                return {"lte": n}
            if "上" in bound:
                return {"gte": n}
            return {"eq": n}
    if _EASY.search(question):
        return {"lte": 2}
    if _HARD.search(question):
        return {"gte": 4}
    return None


def prefers_easiest(question: str) -> bool:
    """简单/容易/新手 … without a star count: list ★ dishes before ★★ ones (a star count such as
    ``2星以下`` is a plain bound, listed by relevance)."""
    return bool(_EASY.search(question)) and not _STARS.search(question)


def question_filters(question: str) -> dict[str, Any]:
    """Metadata filters (the dict form of :mod:`zhiwen.store.filters`) implied by the question."""
    out: dict[str, Any] = {}
    cats = question_categories(question)
    if len(cats) == 1:
        out["category"] = cats[0]
    elif cats:
        out["category"] = {"in": cats}
    diff = difficulty_filter(question)
    if diff:
        out["difficulty"] = diff
    return out


def wanted_count(question: str, default: int = 5, maximum: int = 20) -> int:
    """How many dishes a list question asks for (``给我3个`` → 3, ``几个`` → ``default``)."""
    m = re.search(_NUM + r"\s*(?:个|道|款|样|种)", question)
    if m:
        n = cn_to_int(m.group(1))
        if n:
            return max(1, min(maximum, n))
    return default


_LIST_WORDS = re.compile(
    r"请|帮我|给我|推荐|有(?:什么|哪些|啥)|哪些|什么|列(?:出|举)|来(?:几|点|一些)|几(?:个|道|款|样|种)|一些"
    r"|吃|喝|做|菜谱|菜单|清单|大全|适合|可以|的|吗|呢|啊|吧|菜|道|个|款|样|种|今天|晚上|中午|早上|一下"
    r"|[，。？！?!,.、\s]|" + _NUM
)


def list_query(question: str) -> str:
    """The content words of a list question (``有什么用鸡蛋做的简单菜`` → ``用鸡蛋简单``)."""
    text = question
    for _, pat in _CATEGORY_PATTERNS:
        text = pat.sub(" ", text)
    text = _EASY.sub(" ", text)
    text = _HARD.sub(" ", text)
    text = _STARS.sub(" ", text)
    text = _LIST_WORDS.sub(" ", text)
    return " ".join(text.split())
