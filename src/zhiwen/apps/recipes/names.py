"""Dish-name matching for paraphrased questions (番茄炒蛋 → 西红柿炒鸡蛋).

The :class:`DishCatalog` holds every recipe of a KB (name, category, difficulty) and matches a
question against the names: the question's dish phrase is expanded with a small synonym map
(番茄↔西红柿, 蛋→鸡蛋, 土豆↔马铃薯, …), then names contained in the question win, then fuzzy
matches (rapidfuzz ratio ≥ 70). The same variants feed the retrieval query as expansion, and
the names are taught to the segmenter (``add_words``) so they stay whole.

Example::

    >>> catalog = DishCatalog.from_documents(docs)
    >>> [m.name for m in catalog.match("番茄炒蛋怎么做")]
    ['西红柿炒鸡蛋']
    >>> expand_variants("番茄炒蛋")
    ['番茄炒蛋', '西红柿炒蛋', '番茄炒鸡蛋', '西红柿炒鸡蛋']
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz

from zhiwen.cache import LRU
from zhiwen.conversation.vocabulary import Vocabulary, kb_vocabulary
from zhiwen.documents import Document
from zhiwen.text.tokenizer import add_words

log = logging.getLogger(__name__)

# groups of interchangeable words (each member may stand for every other one)
SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("西红柿", "番茄", "洋柿子"),
    ("土豆", "马铃薯", "洋芋"),
    ("红薯", "地瓜", "番薯"),
    ("包菜", "卷心菜", "圆白菜", "洋白菜", "高丽菜", "包心菜"),
    ("西兰花", "西蓝花", "绿花菜"),
    ("花菜", "菜花", "花椰菜"),
    ("茄子", "矮瓜"),
    ("青椒", "柿子椒", "甜椒"),
    ("香菜", "芫荽"),
    ("玉米", "苞米", "包谷"),
    ("空心菜", "通菜", "蕹菜"),
    ("豆角", "四季豆", "扁豆"),
    ("猪蹄", "猪脚", "猪手"),
    ("鸡翅", "鸡翼", "鸡翅膀"),
    ("馄饨", "云吞", "抄手"),
    ("水饺", "饺子"),
    ("汤圆", "元宵"),
    ("米饭", "白米饭", "大米饭"),
    ("米粥", "白粥", "稀饭"),
    ("宫保", "宫爆"),
    ("鱼香", "渔香"),
    ("可乐鸡翅", "可乐鸡翼"),
    ("蒸水蛋", "水蒸蛋"),
    ("牛腩", "牛肋条"),
    ("五花肉", "三层肉"),
    ("莴笋", "莴苣"),
    ("黄瓜", "青瓜"),
    ("木耳", "黑木耳"),
    ("娃娃菜", "小白菜"),
)
# one-way expansions: a bare 蛋 usually means 鸡蛋 (but not in 皮蛋/鸭蛋/蛋糕 …)
_BARE_EGG = re.compile(r"(?<![鸡鸭鹅鹌鹑皮咸卤茶松荷溏金滑水])蛋(?![糕挞黄白清液饼卷])")

_QUESTION_NOISE = re.compile(
    r"请问|请教|麻烦|我想(?:知道|学|做|吃)?|想(?:学|做|吃)|教(?:我|一下)?|告诉我|帮我|一下|详细|具体|正宗|家常"
    r"|怎么(?:做|炒|煮|烧|蒸|炖|煎|炸|拌|腌|弄|制作|准备|烤|卤|焖|煲|熬|调)(?:才)?(?:好吃|好喝)?|怎样(?:做|制作)"
    r"|如何(?:做|制作|烹饪|烧|炒|煮|蒸|炖|烤)?|咋做|的?做法|的?制作(?:方法|步骤|过程)?|步骤|教程|食谱|菜谱"
    r"|需要(?:什么|哪些|多少|准备)?|要(?:放|加|用)(?:什么|哪些|多少)?|用什么|放什么|放多少"
    r"|(?:什么|哪些)?(?:食材|原料|材料|配料|用料|调料)(?:有|是)?(?:什么|哪些)?"
    r"|有哪些|是什么|多少|多久|几分钟|火候|好吃|吗|呢|啊|呀|吧|了|的$"
    r"|[，。？！?!,.、:：\s\"“”'‘’（）()]"
)


def expand_variants(text: str, limit: int = 16) -> list[str]:
    """``text`` and its synonym rewrites (original first, at most ``limit``)."""
    variants = [text]
    for group in SYNONYM_GROUPS:
        present = [w for w in group if w in text]
        if not present:
            continue
        new: list[str] = []
        for v in variants:
            for src in present:
                if src not in v:
                    continue
                for dst in group:
                    if dst != src and not (src in dst and dst in v):
                        cand = v.replace(src, dst)
                        if cand not in variants and cand not in new:
                            new.append(cand)
        variants.extend(new)
        if len(variants) >= limit:
            return variants[:limit]
    egg = [_BARE_EGG.sub("鸡蛋", v) for v in variants if _BARE_EGG.search(v)]
    variants.extend(e for e in egg if e not in variants)
    return variants[:limit]


def dish_phrase(question: str) -> str:
    """The question without question words and punctuation (``番茄炒蛋怎么做？`` → ``番茄炒蛋``)."""
    return _QUESTION_NOISE.sub("", question)


@dataclass(frozen=True, slots=True)
class Dish:
    doc_id: str
    name: str
    category: str | None
    difficulty: int | None
    metadata: dict[str, Any]


@dataclass(frozen=True, slots=True)
class DishMatch:
    dish: Dish
    score: float  # 100 + len for a name inside the question, else the fuzzy ratio
    via: str  # "contains" | "fuzzy"

    @property
    def name(self) -> str:
        return self.dish.name


def _dish_name(doc: Document) -> str:
    name = doc.metadata.get("name")
    if isinstance(name, str) and name:
        return name
    title = doc.title or doc.id.rsplit("/", 1)[-1]
    return title.removesuffix("的做法")


class DishCatalog:
    """All recipes of a KB by name; matching is pure Python over a few hundred names."""

    def __init__(self, dishes: Sequence[Dish]) -> None:
        self.dishes = list(dishes)
        self.by_id = {d.doc_id: d for d in self.dishes}
        self._names = sorted({d.name for d in self.dishes}, key=len, reverse=True)
        self._by_name: dict[str, list[Dish]] = {}
        for d in self.dishes:
            self._by_name.setdefault(d.name, []).append(d)

    @classmethod
    def from_documents(cls, docs: Iterable[Document], *, teach_tokenizer: bool = True) -> DishCatalog:
        dishes = []
        for doc in docs:
            meta = dict(doc.metadata)
            diff = meta.get("difficulty")
            dishes.append(
                Dish(
                    doc_id=doc.id,
                    name=_dish_name(doc),
                    category=meta.get("category"),
                    difficulty=diff if isinstance(diff, int) and not isinstance(diff, bool) else None,
                    metadata=meta,
                )
            )
        catalog = cls(dishes)
        if teach_tokenizer:
            add_words(n for n in catalog._names if len(n) >= 2)
        return catalog

    def __len__(self) -> int:
        return len(self.dishes)

    @property
    def names(self) -> list[str]:
        return list(self._names)

    def match(self, question: str, *, limit: int = 3, min_ratio: float = 70.0) -> list[DishMatch]:
        """Dishes named by ``question`` (best first): contained names, then fuzzy matches."""
        phrase = dish_phrase(question)
        texts = expand_variants(question) + [v for v in expand_variants(phrase) if v]
        phrases = [v for v in expand_variants(phrase) if len(v) >= 2]
        best: dict[str, DishMatch] = {}
        found = self._contained(texts)
        for m in found if found else self._fuzzy(phrases, min_ratio):
            cur = best.get(m.dish.doc_id)
            if cur is None or m.score > cur.score:
                best[m.dish.doc_id] = m
        return _best_matches(list(best.values()), limit)

    def _contained(self, texts: list[str]) -> list[DishMatch]:
        """Dishes whose name (two characters or more) is in one of ``texts``."""
        return [
            DishMatch(dish, 100.0 + len(name), "contains")
            for name in self._names
            if len(name) >= 2 and any(name in t for t in texts)
            for dish in self._by_name[name]
        ]

    def _fuzzy(self, phrases: list[str], min_ratio: float) -> Iterator[DishMatch]:
        """Dishes whose name is like one of ``phrases`` (at least ``min_ratio``)."""
        if not phrases:
            return
        for name in self._names:
            score = max(fuzz.ratio(p, name) for p in phrases)
            # a short phrase inside a longer name (红烧肉 ⊂ 简易红烧肉) is a good partial match
            if any(len(p) >= 2 and p in name for p in phrases):
                score = max(score, 70.0 + 25.0 * max(len(p) for p in phrases if p in name) / len(name))
            if score >= min_ratio:
                for dish in self._by_name[name]:
                    yield DishMatch(dish, score, "fuzzy")

    def filter(self, predicate: Any) -> list[Dish]:
        return [d for d in self.dishes if predicate(d.metadata)]


def _best_matches(matches: list[DishMatch], limit: int) -> list[DishMatch]:
    """Best first, within 10 points of the best; names inside another contained name are
    shadowed (葱油 ⊂ 葱油拌面)."""
    ranked = sorted(matches, key=lambda m: (-m.score, len(m.name), m.dish.doc_id))
    if not ranked:
        return []
    if ranked[0].via == "contains":
        longest = [m for m in ranked if m.via == "contains"]
        ranked = [m for m in longest if not any(m.name != o.name and m.name in o.name for o in longest)]
    top = ranked[0].score
    return [m for m in ranked if m.score >= top - 10][:limit]


# -- one catalog per KB revision ---------------------------------------------------------------
#: keyed by KB (name and instance) and revision: a changed KB is a miss, its old entry ages out
_CACHE: LRU[DishCatalog] = LRU(16, "recipe_catalogs")


def _all_doc_ids(kb: Any) -> list[str]:
    for owner in (kb, getattr(kb, "store", None)):
        fn = getattr(owner, "doc_ids", None)
        if callable(fn):
            return sorted(fn())
    raise TypeError(f"cannot list the documents of {kb!r}")


def catalog_for(kb: Any) -> DishCatalog:
    """The KB's catalog, rebuilt when its revision changes."""
    try:
        revision = int(kb.revision)
    except Exception:
        revision = -1
    key = (str(getattr(kb, "name", id(kb))) + f"@{id(kb)}", revision)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    ids = _all_doc_ids(kb)
    docs: list[Document] = []
    for i in range(0, len(ids), 500):
        docs.extend(kb.get_parents(ids[i : i + 500]))
    catalog = DishCatalog.from_documents(docs)
    log.info("recipe catalog for %s: %d dishes", getattr(kb, "name", "?"), len(catalog))
    _CACHE.put(key, catalog)
    return catalog


_VOCABULARIES: LRU[Vocabulary] = LRU(16, "recipe_vocabularies")


def dish_vocabulary(kb: Any) -> Vocabulary:
    """The dishes of the KB as conversation entities (kind ``dish``), with the KB's titles."""
    key = (str(kb.name), int(kb.revision))
    cached = _VOCABULARIES.get(key)
    if cached is None:
        dishes = Vocabulary({d.name: "dish" for d in catalog_for(kb).dishes})
        cached = dishes | kb_vocabulary(kb)
        _VOCABULARIES.put(key, cached)
    return cached
