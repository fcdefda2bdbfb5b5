"""What a question asks for: its content terms, the expected answer type, and finding that type in text.

The question word decides the type: 谁 → a person or organisation, 哪年/什么时候 → a date,
多少/几 → a number with its unit, 哪里 → a place, 哪部 → a work (《…》). Questions without a
question word (news-style "死亡人数", "宣誓仪式的时间") are typed by their head noun. Typed spans
are found with regular expressions (dates, numbers, 《titles》) and jieba part-of-speech tags
(nr person, ns place, nt organisation).

Example::

    >>> q = analyse_question("广茂铁路全长多少公里？")
    >>> q.answer_type, q.content
    ('number', '广茂铁路全长公里')
    >>> has_type("全长 364 公里。", "number", q)
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import rjieba

from zhiwen.chinese.numerals import NUMERALS

AnswerType = Literal["person", "date", "number", "place", "work"]
Shape = Literal["fact", "how", "why", "list", "define"]

# question words and fillers: removed from the question's content (never scored as evidence)
_QUESTION_WORDS = re.compile(
    r"什么时候|什么时间|什么地方|什么人|为什么|为何|怎么样|怎么|怎样|如何|多少|多久|多长|多大|多高|多远|多重|"
    r"哪一年|哪年|哪一天|哪天|哪里|哪儿|哪些|哪个|哪位|哪家|哪一|哪几|哪|谁|几|什么|啥|何时|何地|何处|"
    r"是否|有没有|能不能|可不可以|请问|吗|呢|呀|吧|么"
)
_END = r"(?:[是为]|有哪些|是哪[个支位部家])?\s*[？?]?\s*$"  # a head noun ends the question: "…的死亡人数"
# (type, question words, head nouns that end a question without one: "…的死亡人数"). Question
# words decide first: 特拉斯当了多久首相 asks for a duration (多久), not a person (…首相).
_TYPE_RULES: tuple[tuple[AnswerType, re.Pattern[str], re.Pattern[str]], ...] = (
    (
        "work",
        re.compile(r"哪部|哪本|哪首|什么(?:电影|电视剧|书|歌|作品)"),
        re.compile(r"(?:最佳影片|最佳电视剧|作品)" + _END),
    ),
    (
        "date",
        re.compile(r"哪一?年|哪一?天|几月|几号|几日|什么时候|什么时间|何时|哪个月"),
        re.compile(r"(?:时间|日期|年份)" + _END),
    ),
    (
        "person",
        re.compile(r"谁|哪位|什么人|哪个人|哪家|哪个(?:公司|组织|机构|团队|单位|球队|队|品牌|平台)|哪支"),
        re.compile(
            r"(?:作者|导演|编剧|主演|成员|冠军|亚军|季军|金牌|得主|创始人|发起人|主持人|负责人|总统|主席|首相|总理"
            r"|男主角|女主角|候选人)" + _END
        ),
    ),
    (
        "place",
        re.compile(r"哪里|哪儿|何处|何地|什么地方|在哪|哪个(?:城市|省|国家|地区|地方)|哪座|哪国|哪些国家"),
        re.compile(r"(?:地点|起点|终点|位置|举办地|举办国|首都|国家)" + _END),
    ),
    (
        "number",
        re.compile(r"多少|几[个次人名位种条家年天岁件项届万亿千百倍分块]|多大|多高|多长|多远|多重|多久|第几"),
        re.compile(
            r"(?:人数|数量|金额|票房|销量|总量|价格|比例|面积|高度|长度|增长率|占比|量|率|数|营收|收入|产量|点数"
            r"|震级|人次|席位|得分|比分|排名)" + _END
        ),
    ),
)
_SHAPES: tuple[tuple[Shape, re.Pattern[str]], ...] = (
    ("how", re.compile(r"怎么|怎样|如何|步骤|方法|流程")),
    ("why", re.compile(r"为什么|为何|原因")),
    ("list", re.compile(r"哪些|有几种|哪几|列举|包括什么|包含什么")),
    ("define", re.compile(r"是什么|什么是|指什么|含义|定义")),
)

# words that introduce the kind of answer a question asks for (别名 → 又称, 为什么 → 因为, …)
_CUES: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = (
    (re.compile(r"为什么|为何|原因|怎么会"), re.compile(r"因为|由于|因此|所以|原因|导致|为了|因而|以致|故")),
    (
        re.compile(r"别名|别称|又叫|又称|还叫|原名|本名|外号|绰号|全称|简称|英文名|学名|俗称|叫什么名字"),
        re.compile(
            r"又称|又名|别称|别名|俗名|俗称|简称|全称|原名|本名|也叫|亦称|学名|英语|英文|外号|绰号|称为|称作|名为"
        ),
    ),
    (re.compile(r"吃什么|食物|食性|为食|以什么"), re.compile(r"为食|捕食|食物|食性|觅食|摄食|吃")),
    (
        re.compile(r"是什么|什么是|指什么|含义|定义"),
        re.compile(r"是指|指的是|定义为|是一种|是一个|是一部|是一家|是一款|即"),
    ),
    (re.compile(r"怎么|怎样|如何|步骤|方法"), re.compile(r"通过|方法|步骤|首先|然后|使用|执行|命令|运行")),
    (re.compile(r"哪些|有几种|哪几|包括"), re.compile(r"包括|包含|分为|分成|有以下|、.+、")),
)

_CN_NUM = NUMERALS + "万亿"
_DATE = re.compile(
    rf"(?:\d{{1,4}}|[{_CN_NUM}]{{1,5}})\s*(?:年|月|日|号)|\d{{4}}[-/.]\d{{1,2}}(?:[-/.]\d{{1,2}})?|"
    r"(?:上|下|本|今|去|明|前|后)(?:午|年|月|周)|世纪|年代|周[一二三四五六日天]|星期[一二三四五六日天]|"
    r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?\s+\d{1,2}"
)
_UNITS = (
    "%|％|‰|个|人|名|位|次|元|美元|欧元|日元|港元|万|亿|千|百|吨|斤|公斤|千克|克|米|公里|千米|厘米|毫米|"
    "平方米|平方公里|平米|亩|公顷|岁|周岁|天|小时|分钟|秒|辆|台|架|艘|座|家|所|条|项|件|套|倍|度|分|票|场|"
    "届|层|户|块|股|只|头|匹|部|本|篇|例|枚|颗|升|毫升|瓦|千瓦|兆瓦|公分|英尺|英里|码|磅|盎司|卡|焦|"
    "GB|MB|TB|km|kg|cm|mm|mg|ml"
)
_NUMBER = re.compile(
    # a lone 一 is an article, not a count (一起, 一个, 一次)
    rf"(?:\d[\d,，.]*|[二两三四五六七八九十百千〇零][{_CN_NUM}]{{0,5}}|一[{_CN_NUM}]{{1,5}}|百分之[{_CN_NUM}]+)"
    rf"\s*(?:[万亿千百]\s*)?(?:{_UNITS})(?![年月日号])"
    r"|(?<![A-Za-z0-9_.])\d+(?:\.\d+)?(?![A-Za-z0-9_.年月日号时%％])"  # a bare number (阈值默认为0.5)
)
_YEAR = re.compile(r"(?:19|20)\d\d")
_WORK = re.compile(r"《[^》]{1,40}》|“[^”]{1,30}”")
_ORG_SUFFIX = re.compile(
    r"[\u4e00-\u9fffA-Za-z]{2,8}(?:公司|集团|大学|学院|协会|委员会|组织|银行|政府|研究院|研究所|俱乐部|工作室|乐队|球队)"
)
_PLACE_SUFFIX = re.compile(
    r"[\u4e00-\u9fff]{1,5}(?:省|市|县|区|镇|乡|村|州|岛|山|河|湖|江|港|机场|车站|广场|大厦|体育场|教堂|寺)"
)
_POS = {"person": ("nr", "nrt", "nrfg", "nt", "nz"), "place": ("ns",)}


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    content: str  # the question without question words and punctuation
    answer_type: AnswerType | None
    shape: Shape
    cues: tuple[re.Pattern[str], ...] = ()  # answer-introducing words to look for in the text


def analyse_question(text: str) -> Question:
    question = text.strip()
    answer_type: AnswerType | None = None
    for head_noun in (False, True):  # question words first, then head nouns
        answer_type = next(
            (kind for kind, words, nouns in _TYPE_RULES if (nouns if head_noun else words).search(question)),
            None,
        )
        if answer_type is not None:
            break
    shape: Shape = "fact"
    for name, pattern in _SHAPES:
        if pattern.search(question):
            shape = name
            break
    content = _QUESTION_WORDS.sub(" ", question)
    content = re.sub(r"[\s\W_]+", "", content)
    cues = tuple(cue for asks, cue in _CUES if asks.search(question))
    return Question(question, content, answer_type, shape, cues)


def has_cue(text: str, question: Question) -> bool:
    """Whether ``text`` holds a word that introduces the kind of answer asked for (又称, 因为 …)."""
    return any(cue.search(text) for cue in question.cues)


def typed_spans(text: str, answer_type: AnswerType) -> list[str]:
    """Spans of ``text`` that look like an answer of ``answer_type``."""
    if answer_type == "date":
        return [m.group(0) for m in _DATE.finditer(text)]
    if answer_type == "number":  # a bare year (2020—2022) is a date, not the count asked for
        return [m.group(0) for m in _NUMBER.finditer(text) if not _YEAR.fullmatch(m.group(0))]
    if answer_type == "work":
        return [m.group(0) for m in _WORK.finditer(text)]
    spans = [w for w, tag in rjieba.tag(text) if tag in _POS[answer_type]]
    suffix = _ORG_SUFFIX if answer_type == "person" else _PLACE_SUFFIX
    spans.extend(m.group(0) for m in suffix.finditer(text))
    return spans


def answer_spans(text: str, question: Question) -> list[str]:
    """Spans of the question's expected type in ``text`` that the question does not already name."""
    if question.answer_type is None:
        return []
    return [span for span in typed_spans(text, question.answer_type) if span not in question.text]


def has_type(text: str, answer_type: AnswerType | None, question: Question) -> bool:
    """Whether ``text`` holds a span of the expected type that the question does not already name."""
    if answer_type is None:
        return False
    return any(span not in question.text for span in typed_spans(text, answer_type))
