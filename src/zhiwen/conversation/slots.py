"""Slot follow-ups: a short follow-up that changes one part of the previous question keeps the rest.

After 「2021年四川省物理类金融学类最低分是多少？」, 「那2022年呢」 asks the same of 2022 and
「历史类的呢」 the same of 历史类: the follow-up names a new value of a slot the previous question
filled, and the previous question is asked again with that slot changed. A slot is:

* **a year** — 「2022年」「二〇二二年」 (Chinese digits read as Arabic) replaces the previous
  question's year;
* **a word with a kind suffix** — 「物理类」「河南省」「软件工程专业」「文法学院」: the word of the
  previous question that ends with the same suffix (類 of 科类, 省, 市, 专业, 学院 …) is replaced; of
  several, the one sharing the most characters with the new word, then the one of its length
  (「法学类」 replaces 「金融学类」, 「物理类」 replaces 「历史类」).

A follow-up with both (「那2022年河南省呢」) changes both. A follow-up whose new value has no slot in
the previous question is left to the other rules.

**Ordinals** — 「那第二个呢？」「第三个专业…」「最后一个」「倒数第二个」「上一个」「下一个」 — pick an
item of a list the conversation was about, never a name: :func:`ordinal_in` reads one (where it
points), :func:`listed_items` reads the items an answer enumerates (numbered or bulleted lines,
or one sentence's 「A、B和C」).

Example::

    >>> slot_followup("2021年四川省物理类金融学类最低分是多少？", "那2022年呢")
    ('2022年四川省物理类金融学类最低分是多少？', '2021年')
    >>> slot_followup("2021年四川省物理类金融学类最低分是多少？", "历史类的呢？")
    ('2021年四川省历史类金融学类最低分是多少？', '物理类')
    >>> ordinal_in("那第二个呢？"), ordinal_in("最后一道菜怎么做？").index
    (Ordinal(phrase='第二个', index=1, step=0), -1)
    >>> listed_items("学院设有软件工程、人工智能和网络空间安全等3个本科专业。[1]")
    ['软件工程', '人工智能', '网络空间安全']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from zhiwen.chinese.numerals import cn_to_int

#: a follow-up that only names new values: 「那2022年呢」「换成河南省呢」「物理类的呢？」
_FOLLOW = re.compile(
    r"^(?P<lead>那么|那|如果是|要是|换成|改成)?\s*(?P<x>[^？?！!。，,]{2,14}?)\s*(?:的话|的)?\s*"
    r"(?P<end>呢|怎么样|又是多少|是多少|多少)?[？?！!。.\s]*$"
)
_YEAR = re.compile(r"(?<!\d)((?:19|20)\d{2})(?!\d)\s*年?")
_CN_YEAR = re.compile(r"([一二][〇零一二三四五六七八九]{3})(?=年)")
_CN_DIGIT = {c: str(i) for i, c in enumerate("〇一二三四五六七八九")} | {"零": "0"}
#: the suffixes that give a word its kind (longest first: 自治区 before 区)
SUFFIXES = ("特别行政区", "自治区", "专业", "学院", "大学", "省", "市", "县", "区", "类", "批", "届", "级")
#: where a word of the previous question may start: its start, after a digit, 年 or punctuation
_BOUNDARY = re.compile(r"[\d\s年，,。？?！!、：:（）()]")
_CJK = re.compile(r"^[\u4e00-\u9fff]+$")
#: the longest word a slot takes
MAX_WORD = 10


def _arabic(text: str) -> str:
    return _CN_YEAR.sub(lambda m: "".join(_CN_DIGIT[c] for c in m.group(1)), text)


def _suffix(word: str) -> str:
    return next((s for s in SUFFIXES if word.endswith(s) and len(word) > len(s)), "")


def _word_starts(text: str, compound: bool) -> set[int]:
    """Where a word may start: after a boundary, or — unless the new word is a compound of
    kind words itself (「西岭大学计算机学院」) — after a word ending in a kind suffix."""
    starts = {0} | {m.end() for m in _BOUNDARY.finditer(text)}
    if not compound:
        for s in SUFFIXES:
            starts |= {m.end() for m in re.finditer(re.escape(s), text)}
    return starts


def _candidates(previous: str, suffix: str, compound: bool) -> list[tuple[int, int]]:
    """The (start, end) of every word of ``previous`` that ends with ``suffix``."""
    starts = _word_starts(previous, compound)
    out = []
    for m in re.finditer(re.escape(suffix), previous):
        end = m.end()
        begin = max((s for s in starts if s < m.start() and end - s <= MAX_WORD), default=None)
        if begin is not None and _CJK.match(previous[begin:end]):
            out.append((begin, end))
    return out


def _replace_word(previous: str, word: str) -> tuple[str, str] | None:
    suffix = _suffix(word)
    if not suffix or word in previous:
        return None  # no kind, or the value the previous question already has
    compound = any(s in word[: -len(suffix)] for s in SUFFIXES)
    spans = _candidates(previous, suffix, compound)
    if not spans:
        return None
    stem = set(word[: -len(suffix)])

    def fit(span: tuple[int, int]) -> tuple[int, int]:
        old = previous[span[0] : span[1]]
        return len(stem & set(old[: -len(suffix)])), -abs(len(old) - len(word))

    b, e = max(spans, key=fit)
    return previous[:b] + word + previous[e:], previous[b:e]


def _replace_year(previous: str, year: str) -> tuple[str, str] | None:
    m = _YEAR.search(previous)
    if m is None or m.group(1) == year:
        return None
    return previous[: m.start(1)] + year + previous[m.end(1) :], m.group(0)


def slot_followup(previous: str, followup: str) -> tuple[str, str] | None:
    """(the previous question with the follow-up's slots changed, what was replaced), or None
    when ``followup`` is not such a follow-up (see the module docstring)."""
    match = _FOLLOW.match(followup.strip())
    if match is None or not (match.group("lead") or match.group("end")):
        return None
    new = _arabic(match.group("x").strip())
    question, replaced = previous, []
    year = _YEAR.search(new)
    if year is not None:
        done = _replace_year(question, year.group(1))
        if done is None:
            return None
        question, old = done
        replaced.append(old)
        new = (new[: year.start()] + new[year.end() :]).strip()
    if new:
        done = _replace_word(question, new) if _CJK.match(new) else None
        if done is None:
            return None
        question, old = done
        replaced.append(old)
    return (question, "、".join(replaced)) if replaced else None


# -- ordinals -----------------------------------------------------------------------------------
#: the measure words of an item of a list (not 条/章/节/款: 「第十二条」 is a statute's article)
_MEASURE = "个项种类家所位道门座首点样"
_ORDINAL = re.compile(
    rf"(?P<back>倒数)?第(?P<n>[0-9一二两三四五六七八九十]{{1,3}})(?:[{_MEASURE}])"
    rf"|最后(?:一)?[{_MEASURE}]|最后那[{_MEASURE}]"
    rf"|(?P<rel>上|前|下|后)一[{_MEASURE}]"
)


@dataclass(frozen=True, slots=True)
class Ordinal:
    """Where an ordinal points: ``index`` into a list (0 the first, -1 the last), or ``step``
    from the item the conversation is on (-1 上一个, +1 下一个; then ``index`` is 0)."""

    phrase: str
    index: int = 0
    step: int = 0


def ordinal_in(text: str) -> Ordinal | None:
    """The first ordinal of ``text`` (第二个, 倒数第二个, 最后一个, 上一个, 下一个), if any."""
    m = _ORDINAL.search(text)
    if m is None:
        return None
    phrase = m.group()
    if m.group("rel"):
        return Ordinal(phrase, step=-1 if m.group("rel") in "上前" else 1)
    if m.group("n") is None:
        return Ordinal(phrase, index=-1)
    n = cn_to_int(m.group("n"))
    if not n:
        return None
    return Ordinal(phrase, index=-n if m.group("back") else n - 1)


#: a numbered or bulleted line: 「1. 」「2、」「（3）」「- 」「• 」 — not a reference 「- [1] 标题」
#: (an answer's list of sources) nor a **bold** heading
_BULLET = re.compile(
    r"^\s*(?:\d{1,2}\s*[.、．)）](?!\d)\s*|[（(]\d{1,2}[)）]\s*|[-*•·]\s+)(?!\[\d+\])(?P<item>\S.*)$"
)
#: where a line's item ends (its explanation starts) and what decorates it
_ITEM_END = re.compile(r"[：:，,。；;（(\[【]|\s[-—–]")
_DECORATION = re.compile(r"\*\*|__|\[\d+\]|[“”\"「」《》]")
#: the words before an inline list's first item (学院设有|A、B) and after its last (C|等3个专业)
_LIST_HEAD = re.compile(r".*(?:包括|包含|设有|开设|拥有|推荐|例如|比如|如|像|有|为|是|：|:)")
_LIST_TAIL = re.compile(r"(?:等|，|,|。|；).*$")
_LAST_JOIN = re.compile(r"和|及|与|以及")
#: an item longer than this is a sentence, not a name
MAX_ITEM_CHARS = 20


def _clean(item: str) -> str:
    return _DECORATION.sub("", item).strip()


def _bulleted(text: str) -> list[str]:
    items = []
    for line in text.splitlines():
        m = _BULLET.match(line)
        if m is not None:
            items.append(_clean(_ITEM_END.split(_clean(m.group("item")))[0]))
    return items


def _inline(text: str, of: str) -> list[str]:
    """The first 「A、B和C」 of ``text``'s sentences whose items read as names (the words around
    the list cut off): the answer's own sentence comes before its sources' excerpts; with
    ``of`` (第二个**专业**), the first of a sentence that names it (…等4个本科专业, not 核心课程包括…)."""
    found: list[list[str]] = []
    for sentence in re.split(r"[。；;！!？?\n]", _DECORATION.sub("", text)):
        parts = sentence.split("、")
        if len(parts) < 2:
            continue
        parts[0] = _LIST_HEAD.sub("", parts[0].split("，")[-1])
        last = _LIST_TAIL.sub("", parts[-1])
        parts[-1:] = [p for p in _LAST_JOIN.split(last, maxsplit=1)]
        items = [p.strip() for p in parts]
        if _names(items) and (not of or of in sentence):
            return items
        if _names(items):
            found.append(items)
    return found[0] if found else []


def _names(items: list[str]) -> bool:
    """Two or more items, none empty, a sentence, or a count or amount (4个系, 3.5万元)."""
    return len(items) >= 2 and all(i and len(i) <= MAX_ITEM_CHARS and not i[0].isdecimal() for i in items)


def listed_items(text: str, of: str = "") -> list[str]:
    """The items ``text`` enumerates, in order (bulleted lines first, else the first inline list
    of names, of ``of`` where one says so); nothing when it lists fewer than two or an item
    reads as no name."""
    items = _bulleted(text)
    if not _names(items):
        items = _inline(text, of)
    return items if _names(items) else []


__all__ = ["SUFFIXES", "Ordinal", "listed_items", "ordinal_in", "slot_followup"]
