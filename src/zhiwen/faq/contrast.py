"""What makes a close question a different question: another number, the opposite polarity,
a name the entry question does not mention.

Dense and lexical similarity both score 「144小时过境免签是什么政策」 next to 「240小时过境免签
是什么政策？」, 「哪些财产可以抵押」 next to 「哪些财产不得抵押？」 and 「美国公民来中国可以免签吗」
next to the same question about France: they share every other word. These checks look at the
words that differ, and the matcher takes ``faq.contrast_penalty`` off a row's score for each one
that fires (the row stays a near miss for 「您是不是想问：」):

* **numbers** — both questions carry numbers (digits, or Chinese numerals before a unit: 满五、
  二套、三年) and not the same ones;
* **polarity** — one question is negated (不、没有、不得、禁止 …) and the other is not; the
  A-not-A question form (能不能、是不是、有没有) is not a negation;
* **opposite** — one says a word where the other says its opposite (:data:`OPPOSITES`: 入境 /
  出境, 导入 / 导出, 最高 / 最低 …);
* **names** — the question names a place or an organisation (the segmenter's tags) that the
  entry question does not contain;
* **order** — the names they share come in another order: the roles are swapped (中国公民去法国
  against 法国公民来中国, 北京到上海 against 上海到北京);

Example::

    >>> differences("144小时过境免签是什么政策", "240小时过境免签是什么政策？")
    ('numbers',)
    >>> differences("哪些财产可以抵押", "哪些财产不得抵押？")
    ('polarity',)
    >>> differences("外国人出境需要什么手续", "外国人入境需要什么手续？")
    ('opposite',)
    >>> differences("美国公民来中国可以免签吗", "法国公民来中国可以免签吗？")
    ('names',)
    >>> differences("中国公民去法国旅游免签吗", "法国公民来中国可以免签吗？")
    ('order',)
"""

from __future__ import annotations

import re

import rjieba

from zhiwen.faq.normalize import fold

_DIGITS = re.compile(r"\d+(?:\.\d+)?")
_CN_NUMBER = re.compile(r"[零一二两三四五六七八九十百千]+(?=[年个天周月日号小时套次岁成倍条层室唯手])")
_CN_VALUE = {
    "零": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
# 能不能, 是不是, 有没有, 可不可以: asking, not negating
_A_NOT_A = re.compile(r"(.)[不没]\1")
_NEGATIONS = frozenset(
    {
        "不", "没", "没有", "无", "未", "别", "勿", "非", "不得", "不准", "不能", "不可", "不可以", "不予",
        "禁止", "不要", "不用", "不需要", "无需", "无须", "不让", "不是", "不会", "不许", "无法", "不行",
    }
)  # fmt: skip
# the segmenter's tags of names: places, organisations, transliterated names (most foreign
# countries: 斯洛文尼亚); its plain person tag also fires on common words (许可), so a two-character
# word with it counts only for the order of names both questions share
_NAME_TAGS = frozenset({"ns", "nt", "nrt"})
_PERSON_TAGS = frozenset({"nr", "nz"})


# words that turn a question into its opposite when put for each other (入境 for 出境, 导出 for
# 导入): general antonyms of service FAQs, both written as they appear in questions
_OPPOSITE_WORDS = (
    "入境/出境 入境/离境 来华/离华 出国/回国 境内/境外 国内/国外 导入/导出 "
    "上传/下载 买/卖 购买/出售 买入/卖出 存入/取出 缴存/提取 收入/支出 "
    "增加/减少 提高/降低 上涨/下跌 升/降 最高/最低 最长/最短 最多/最少 "
    "最大/最小 以上/以下 之前/之后 好处/坏处 优点/缺点 优势/劣势 开启/关闭 "
    "打开/关闭 启用/停用 启用/禁用 允许/禁止 添加/删除 创建/删除 删除/恢复 "
    "登录/退出 加入/退出 一手/二手 新房/二手房 首套/二套 免征/减征 出租/承租 "
)
OPPOSITES: tuple[tuple[str, str], ...] = tuple(
    (a, b) for a, _, b in (pair.partition("/") for pair in _OPPOSITE_WORDS.split())
)


def _opposed(mine: str, theirs: str) -> bool:
    """One question says a word where the other says its opposite (and neither says both)."""
    for a, b in OPPOSITES:
        if (a in mine and b not in mine and b in theirs and a not in theirs) or (
            b in mine and a not in mine and a in theirs and b not in theirs
        ):
            return True
    return False


def numbers(text: str) -> frozenset[str]:
    """The numbers a question mentions, as digits (五 → 5; 十 and larger kept as written)."""
    folded = fold(text)
    found = set(_DIGITS.findall(folded))
    for run in _CN_NUMBER.findall(folded):
        found.add(str(_CN_VALUE[run]) if run in _CN_VALUE else run)
    return frozenset(found)


def negated(text: str) -> bool:
    """True when the question is negated an odd number of times."""
    bare = _A_NOT_A.sub(r"\1", fold(text))
    return sum(1 for word in rjieba.cut(bare, False) if word in _NEGATIONS) % 2 == 1


def names(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The question's names (two characters or more) in order, each once: those sure to be names,
    and every word tagged as one."""
    sure: list[str] = []
    tagged: list[str] = []
    for word, tag in rjieba.tag(fold(text)):
        if len(word) < 2 or (tag not in _NAME_TAGS and tag not in _PERSON_TAGS):
            continue
        tagged.append(word)
        if tag in _NAME_TAGS or len(word) > 2:
            sure.append(word)
    return tuple(dict.fromkeys(sure)), tuple(dict.fromkeys(tagged))


def _order_differs(mine: tuple[str, ...], theirs: tuple[str, ...]) -> bool:
    shared = [n for n in mine if n in theirs]
    return len(shared) > 1 and shared != [n for n in theirs if n in mine]


class QuestionFacts:
    """A question's numbers, polarity and names, worked out once and held against many rows."""

    __slots__ = ("folded", "names", "negated", "numbers", "tagged")

    def __init__(self, text: str) -> None:
        self.folded = fold(text)
        self.numbers = numbers(text)
        self.negated = negated(text)
        self.names, self.tagged = names(text)

    def differences(self, row: str, row_facts: QuestionFacts | None = None) -> tuple[str, ...]:
        other = row_facts or QuestionFacts(row)
        out: list[str] = []
        if self.numbers and other.numbers and self.numbers != other.numbers:
            out.append("numbers")
        if self.negated != other.negated:
            out.append("polarity")
        if _opposed(self.folded, other.folded):
            out.append("opposite")
        if any(name not in other.folded for name in self.names):
            out.append("names")
        elif _order_differs(self.tagged, other.tagged):
            out.append("order")
        return tuple(out)


def differences(question: str, row: str) -> tuple[str, ...]:
    """Which of numbers / polarity / names set ``question`` apart from the entry question ``row``."""
    return QuestionFacts(question).differences(row)
