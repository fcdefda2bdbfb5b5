"""What a question says about a table: which rows of the retrieved ones, which columns, which table.

The retrieved row chunks carry their cells (:mod:`zhiwen.ingest.model`); :func:`rows_from_hits`
reads them back as :class:`RowRef`. A question names a column by a part of its header path
(「物理类」「最低」 of 「理工/物理类 最低」, or a common English header's Chinese word: 单价 →
unit_price), a row by a cell of it (the key column's value first: 「金融学类」), and the table
by its names (「2023年」「四川省」 in 「2023年四川省录取分数线」).

Example::

    >>> column_score("理工/物理类 最低", "2023年四川省物理类金融学类最低分是多少？")
    5.0
    >>> context_score("2023年四川省录取分数线", "2023年四川省物理类金融学类最低分是多少？") > 0
    True
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from zhiwen.documents import ParentHit

_YEAR = re.compile(r"(?<!\d)((?:19|20)\d{2})(?!\d)")
#: a year in Chinese digits (二〇二三年, 二零二一年): read as 2023, 2021
_CN_YEAR = re.compile(r"([一二][〇零一二三四五六七八九]{3})(?=年)")
_CN_DIGIT = {c: str(i) for i, c in enumerate("〇一二三四五六七八九")} | {"零": "0"}
#: what heads a row's label in a statistical table: 「一、收入合计」「（二）」「其中：财政拨款」
_ROW_PREFIX = re.compile(
    r"^(?:[一二三四五六七八九十]+[、.．]|[（(][一二三四五六七八九十\d]+[）)]|\d+[.、．]|其中[：:]?)+"
)
_PARTS = re.compile(r"[/\s（）()·_\-:：,，、|]+")
_PUNCT = re.compile(r"[\s，。？！、；：“”‘’（）()《》\[\]{}<>,.?!;:'\"]+")
#: common header words of spreadsheets in English, by the Chinese a question uses
GLOSSARY: dict[str, tuple[str, ...]] = {
    "单价": ("unit_price", "unit price", "price per"),
    "总价": ("total_price", "total price"),
    "价格": ("price", "cost"),
    "售价": ("price",),
    "面积": ("area", "size"),
    "小区": ("xiaoqu", "estate", "community"),
    "装修": ("decoration",),
    "朝向": ("orientation",),
    "户型": ("room", "layout"),
    "电梯": ("elevator",),
    "楼层": ("floor", "flood"),
    "位置": ("location",),
    "板块": ("location",),
    "国家": ("country",),
    "大洲": ("continent",),
    "洲": ("continent",),
    "免签": ("visa-free", "visa free"),
    "天数": ("days",),
    "政策": ("policies", "policy"),
    "日期": ("date",),
    "名称": ("name", "title"),
    "数量": ("count", "quantity", "number"),
    "关注": ("follow",),
    # the new gaokao's 科类 are the old ones renamed: a site keeps both names across years
    "物理": ("理工",),
    "历史": ("文史",),
    "理工": ("物理",),
    "文史": ("历史",),
    "带看": ("look",),
}


@lru_cache(maxsize=65536)  # the question and the cells of every retrieved row, again and again
def norm(text: str) -> str:
    """Lower case, full-width folded, spaces and punctuation out: what matching compares."""
    return _PUNCT.sub("", unicodedata.normalize("NFKC", text).lower())


def arabic_years(text: str) -> str:
    """Years written in Chinese digits as Arabic ones: 「二〇二二年」 → 「2022年」."""
    return _CN_YEAR.sub(lambda m: "".join(_CN_DIGIT[c] for c in m.group(1)), text)


def row_label(value: str) -> str:
    """A row's label without the numbering a statistical table gives it: 「一、收入合计」 → 「收入合计」,
    「其中：财政拨款收入」 → 「财政拨款收入」."""
    return _ROW_PREFIX.sub("", value.strip()).strip()


def header_parts(column: str) -> list[str]:
    """The words of a header path: 「理工/物理类 最低」 → ['理工', '物理类', '最低']. A part of one
    character beside longer ones is a unit (「学费（元/年）」 → 学费), not a word a question names."""
    parts = [p for p in _PARTS.split(unicodedata.normalize("NFKC", column).lower()) if p]
    parts = [p for p in parts if len(p) >= 2 or not p.isascii()]
    words = [p for p in parts if len(p) >= 2]
    return words if words else parts


@lru_cache(maxsize=8192)  # every retrieved row of a table asks it of the same columns
def column_score(column: str, question: str) -> float:
    """How clearly ``question`` names ``column``: the characters of its header parts it says
    (a part ending in 类/分 also counts without it), plus Chinese words of English headers."""
    q = norm(question)
    score = 0.0
    for part in header_parts(column):
        p = norm(part)
        if not p:
            continue
        if p in q:
            score += len(p)
        elif len(p) >= 3 and p[-1] in "类分额数价" and p[:-1] in q:
            score += len(p) - 1
        elif len(p) >= 3 and not p.isascii() and p[:2] in q:
            score += 1.5  # 「上市日期」 asked as 「什么时候上市」
    lowered = column.lower()
    for word, english in GLOSSARY.items():
        if word in question and any(e in lowered for e in english):
            score += len(word)
    return score


def years(text: str) -> list[str]:
    return _YEAR.findall(text)


def context_score(label: str, question: str) -> float:
    """How well a table's names fit the question: the years it says (another year: a penalty)
    and the other words they share (a province, a product line)."""
    score = 0.0
    q_years, l_years = set(years(question)), set(years(label))
    if q_years and l_years:
        score += 3.0 if q_years & l_years else -4.0
    rest_q, rest_l = norm(_YEAR.sub("", question)), norm(_YEAR.sub("", label))
    grams = {rest_l[i : i + 2] for i in range(len(rest_l) - 1)}
    score += 0.5 * sum(1 for g in grams if g in rest_q)
    return score


#: characters of function words (在, 的, 年 of 「2021年在江西省」): a pair with one names nothing
_FUNCTION_CHARS = frozenset("的在年了和与及是为之其对从于")


def _label_grams(label: str) -> set[str]:
    rest = norm(_YEAR.sub("", label))
    grams = {rest[i : i + 2] for i in range(len(rest) - 1)}
    return {g for g in grams if not _FUNCTION_CHARS & set(g)}


def header_words(columns: Iterable[str]) -> str:
    """A table's header as words to compare names with: each part also with 分/类 after it, as
    a question says it (「最低」 asked as 「最低分」; see :func:`column_score`)."""
    parts = [p for c in columns for p in header_parts(c)]
    return " ".join(f"{p} {p}分 {p}类" for p in parts)


#: a province-level place: 「河南省」「西藏自治区」「香港特别行政区」 (with what stands before it;
#: not the 省 of 省控线, 省会, 省内 …)
_PLACE = re.compile(
    r"(?:[\u4e00-\u9fff]{2,3}省|[\u4e00-\u9fff]{2,8}?(?:自治区|特别行政区))(?![控会份级内外直委厅属])"
)


def _places(text: str) -> list[str]:
    return _PLACE.findall(_YEAR.sub(" ", text))


def names_other_place(label: str, question: str) -> bool:
    """The question names a province (「西藏自治区」) the table's names lack while they name one of
    their own (「2023年广东省…」): another table's, even when no retrieved table has it. A word
    read with what stands before it (「在河南省」) counts when its tail (「河南省」) is in the names."""
    own = _places(label)
    if not own:
        return False
    for place in _places(question):
        tails = {place[i:] for i in range(len(place) - 2)}
        if not any(t in label for t in tails):
            return True
    return False


def names_other_table(label: str, question: str, labels: Iterable[str], own: str = "") -> bool:
    """Whether ``question`` names another table than ``label``: another year, or words (a
    province) that another retrieved table's names have and this one's lack. ``own``: more
    text of this table (its header) whose words are no sign of another table (「最低」 of its
    「最低分」 column is not the other table's 「录取最低分」)."""
    q_years, l_years = set(years(question)), set(years(label))
    if q_years and l_years and not q_years & l_years:
        return True
    if names_other_place(label, question):
        return True
    q = norm(_YEAR.sub("", question))
    mine = _label_grams(label) | _label_grams(own)
    named = {g for other in labels if other != label for g in _label_grams(other) if g in q}
    return bool(named - mine)


@dataclass(frozen=True, slots=True)
class RowRef:
    """One retrieved row: its table, number, cells (for the columns its chunk holds) and rank."""

    table_id: str
    table_hash: str
    title: str
    doc_id: str
    row: int
    columns: tuple[str, ...]
    types: tuple[str, ...]
    values: tuple[str, ...]
    key_column: str
    rank: int
    score: float
    source: str = ""
    page: int | None = None
    sheet: str = ""
    table_rows: int = 0

    @property
    def key_value(self) -> str:
        return self.values[self.columns.index(self.key_column)] if self.key_column in self.columns else ""


def rows_from_hits(parents: Sequence[ParentHit]) -> list[RowRef]:
    """Every row of the retrieved row chunks, best chunk first (parents in their order)."""
    out: list[RowRef] = []
    rank = 0
    for parent in parents:
        for hit in sorted(parent.matched_chunks, key=lambda h: -h.score):
            meta = hit.chunk.metadata
            if "table" not in meta or "cells" not in meta:
                continue
            out.extend(_rows(meta, rank, hit.score, parent.document.id))
            rank += 1
    return out


def _rows(meta: dict[str, Any], rank: int, score: float, doc_id: str) -> Iterable[RowRef]:
    columns = tuple(str(c) for c in meta.get("columns") or [])
    types = tuple(str(t) for t in meta.get("types") or [])
    first = int(meta.get("row") or 1)
    for n, cells in enumerate(meta.get("cells") or []):
        yield RowRef(
            table_id=str(meta["table"]),
            table_hash=str(meta.get("table_hash") or ""),
            title=str(meta.get("table_title") or ""),
            doc_id=doc_id,
            row=first + n,
            columns=columns,
            types=types,
            values=tuple(str(v) for v in cells),
            key_column=str(meta.get("key_column") or (columns[0] if columns else "")),
            rank=rank,
            score=float(score),
            source=str(meta.get("source") or ""),
            page=meta.get("page") if isinstance(meta.get("page"), int) else None,
            sheet=str(meta.get("sheet") or ""),
            table_rows=int(meta.get("table_rows") or 0),
        )


def value_match(value: str, question: str) -> float:
    """How strongly ``question`` names a cell's ``value`` (0: not at all): its text, or its label
    without numbering (「一、收入合计」 named as 「收入合计」)."""
    q = norm(question)
    label = row_label(value) if _ROW_PREFIX.match(value) else value
    for text in (value, label) if label != value else (value,):
        v = norm(text)
        if len(v) >= 2 and not v.isdigit() and v in q:
            return float(len(v))
    return 0.0


def year_match(value: str, question: str) -> float:
    """A year cell (「2022」 of a 年份 column) named as a year (「2022年」): rows keyed by year."""
    v = value.strip().removesuffix("年")
    return 4.0 if _YEAR.fullmatch(v) and v in years(question) else 0.0


def subject_of(question: str) -> str:
    """The question without its question words: 「2023年…最低分是多少？」 → 「2023年…最低分」."""
    text = question.strip().rstrip("？?。.! ！")
    text = re.sub(r"(是多少|为多少|有多少|是几|是什么|是哪个|是哪些|多少|几)$", "", text)
    text = re.sub(r"^(请问|请告诉我|我想知道)", "", text)
    return text.strip("，, ") or question.strip()
