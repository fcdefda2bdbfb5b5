"""Follow-ups in a property search: the constraints of a conversation, merged turn by turn.

Each user turn is read with the app's own parser (:func:`~.extract.extract_rules`) into a
:class:`Turn`; :func:`merge` folds it into what the earlier turns asked for. The rules:

* **Slots.** Every constraint belongs to one slot (:data:`SLOTS`): 预算 (price), 单价, 区域
  (districts / 板块 / 小区), 户型 (rooms, halls), 面积, 类型, 电梯, 装修, 楼层, 房龄, 朝向, 楼型.
* **Add.** A slot the conversation has not set yet is taken from the turn: 「要南北通透的」.
* **Replace.** A slot the turn sets replaces that slot, whole: 「预算放宽到700万」 (0-800万 →
  0-700万), 「换成普陀」 (浦东 → 普陀), 「换成三房」. With 也 / 或者 / 加上 (「普陀也可以」) a
  place is added beside the earlier ones instead.
* **Wishes accumulate.** Special requirements (学区, 地铁 …), soft negations (不要一楼, 远离高架),
  excluded places (不要闵行) and keywords are unions over the turns. Asking for a place again
  lifts its exclusion; excluding a place the conversation wanted drops it.
* **Remove.** A slot word with 不限 / 无所谓 / 不要求 / 随便 / 都行 / 去掉 … lifts the slot:
  「不限楼层了」, 「不要求朝向了」, 「预算不限」, 「电梯无所谓」. A wish or an exclusion is lifted
  the same way by its own word: 「不要求学区了」, 「一楼也行」, 「毛坯也可以」. The clause that lifts
  something is cut from the turn before it is parsed, so 「电梯无所谓」 never reads as 要电梯.
* **Start fresh.** 「重新找」, 「换个需求」, 「从头开始」 … drop everything before; so does a turn
  that moves to another city and states a search of its own (two slots or more besides the
  place: 「杭州西湖300万的三房」). A move to another city alone (「那杭州呢」, 「换成杭州」) keeps
  the other constraints and drops the places (they belong to the old city).

Merging is idempotent (a turn merged twice changes nothing more) and a first turn merged into
nothing is the turn itself, so a single question is understood exactly as before.

Example::

    >>> history = ["上海浦东800万以内的两房，不要低楼层", "要南北通透的"]
    >>> d = understand("预算放宽到700万", history)
    >>> d.standalone
    '上海浦东新区 700万以内 2室 南北通透 不要低楼层'
    >>> understand("不限楼层了，换成普陀", [*history, "预算放宽到700万"]).standalone
    '上海普陀区 700万以内 2室 南北通透'
    >>> d = understand("重新找，杭州西湖区300万", history)   # a new search, answered as asked
    >>> d.fresh, d.merged.price_text(), d.merged.rooms_text(), d.standalone
    (True, '0-300万', '', '重新找，杭州西湖区300万')
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from zhiwen.apps.listings.extract import extract_rules, normalise_question
from zhiwen.apps.listings.requirements import Requirements
from zhiwen.apps.listings.vocabulary import AVOIDABLE_FLOORS, BUILDING_TYPES, NEGATIONS, SPECIALS
from zhiwen.chinese.gazetteer import Place


@dataclass(frozen=True, slots=True)
class Slot:
    """One kind of constraint: the fields it owns, the words that name it, and the words it puts
    into the shared lists (special, keywords, negations) that go with it when it changes."""

    name: str
    fields: tuple[str, ...]
    words: str  # a regex naming the slot in 「不限X」 / 「X无所谓」
    label: str
    owns: tuple[str, ...] = ()


SLOTS: tuple[Slot, ...] = (
    Slot("price", ("price_min", "price_max", "price_target"), r"预算|总价|价格|价位|价钱", "预算"),
    Slot("unit_price", ("unit_price_min", "unit_price_max"), r"单价", "单价"),
    Slot("place", ("places", "estates"), r"区域|位置|地段|地点|板块|片区|哪个区|小区", "区域"),
    Slot("rooms", ("rooms_min", "rooms_max", "halls"), r"户型|几室|几房|几居|居室|房间数", "户型"),
    Slot("area", ("area_min", "area_max"), r"面积|大小|平米|平方", "面积"),
    Slot("property_type", ("property_type",), r"房屋类型|物业类型|类型", "类型"),
    Slot("elevator", ("elevator",), r"电梯", "电梯"),
    Slot("decoration", ("decoration_in", "decoration_exclude"), r"装修", "装修"),
    Slot("floor", ("floor_in", "floor_exclude"), r"楼层|几楼", "楼层", tuple(AVOIDABLE_FLOORS)),
    Slot("build_year", ("build_year_min", "build_year_max"), r"房龄|楼龄|年代|年份|新旧", "房龄"),
    Slot(
        "orientation",
        ("facing_south", "north_south", "exclude_north"),
        r"朝向|南北通透|朝南",
        "朝向",
        ("朝南", "南北通透", "朝北"),
    ),
    Slot(
        "building_type",
        ("building_type", "building_type_exclude"),
        r"楼型|建筑类型|板楼|塔楼",
        "楼型",
        tuple(BUILDING_TYPES),
    ),
)
SLOT_BY_NAME = {s.name: s for s in SLOTS}
#: lists that accumulate over the turns
SHARED_LISTS = ("special", "negations", "keywords", "location_keywords")

_LIFT_BEFORE = r"不限|不限制|无所谓|不要求|没要求|不讲究|不挑|不在乎|随便|去掉|取消|放开|不用管"
_LIFT_AFTER = r"不限|无所谓|随便|都行|都可以|不要求了|没要求|不讲究|不重要|不挑|不用管了?"
_TAIL = r"(?:方面|上|的要求|要求|条件|限制|的)?(?:就|也|都|倒是)?"


def _slot_lift(words: str) -> re.Pattern[str]:
    return re.compile(
        rf"(?:{_LIFT_BEFORE})了?(?:的|对)?(?:{words}){_TAIL}了?|(?:{words}){_TAIL}(?:{_LIFT_AFTER})了?"
    )


_SLOT_LIFTS = tuple((s.name, _slot_lift(s.words)) for s in SLOTS)

# a wish lifted by its own word (「不要求学区了」), an exclusion allowed again (「一楼也行」)
_WISH_BEFORE = r"不要求|不需要|不用|不必|不一定要?|无所谓|不在乎|不讲究|去掉|取消"
_WISH_AFTER = r"无所谓|不要求了|不需要了|不重要了?|没关系|不用了|不是必须的?|随便"
_ALLOW_BEFORE = r"不介意|可以接受|能接受|接受"
_ALLOW_AFTER = r"也行|也可以|也没关系|没关系|无所谓|能接受|可以接受|都行"


def _word_lift(pattern: str, before: str, after: str) -> re.Pattern[str]:
    return re.compile(
        rf"(?:{before})(?:有|近|靠近|是|在)?(?:{pattern})[^，,。；;！!？?]{{0,3}}?了?|"
        rf"(?:{pattern})(?:[^，,。；;！!？?]{{0,4}}?)(?:{after})了?"
    )


_WISH_LIFTS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (canon, _word_lift(q, _WISH_BEFORE, _WISH_AFTER)) for canon, (q, _) in SPECIALS.items()
)
_EXCLUSION_WORDS: dict[str, str] = {
    **{canon: q for canon, (q, _) in NEGATIONS.items()},
    "毛坯": r"毛坯",
    "低楼层": r"低楼层|低层",
    "高楼层": r"高楼层|高层",
    "中楼层": r"中楼层|中层",
    **BUILDING_TYPES,
}
_ALLOW_LIFTS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (canon, _word_lift(q, _ALLOW_BEFORE, _ALLOW_AFTER)) for canon, q in _EXCLUSION_WORDS.items()
)

_RESET = re.compile(
    r"重新找|重新搜|重新来|重新开始|从头(?:开始|来|找)?|换个需求|换一个需求|换个条件|换一批条件|"
    r"清空条件|新的需求|另外一个需求|不按刚才|忽略之前|忘掉之前"
)
_WIDEN = re.compile(r"也(?:行|可以|考虑|看看|要)|或者|或是|加上|还有|再加|以及|再看看")


@dataclass(slots=True)
class Turn:
    """One user turn: what it asks for, the slots and words it lifts, whether it starts over."""

    text: str
    req: Requirements
    cleared: frozenset[str] = frozenset()  # slot names (SLOTS) the turn lifts
    lifted: frozenset[str] = frozenset()  # wishes / exclusions the turn lifts (学区, 一楼, 毛坯 …)
    fresh: bool = False  # 重新找 / 换个需求
    widen: bool = False  # 也 / 或者: places are added, not replaced

    def sets(self, slot: Slot) -> bool:
        return slot_set(self.req, slot)


def _default(name: str) -> Any:
    return getattr(_EMPTY, name)


_EMPTY = Requirements()


def slot_set(req: Requirements, slot: Slot) -> bool:
    """Whether ``req`` says anything about ``slot``."""
    return any(getattr(req, f) != _default(f) for f in slot.fields)


def _cut(text: str, patterns: Sequence[tuple[str, re.Pattern[str]]]) -> tuple[str, set[str]]:
    """``text`` without the clauses that lift something, and the names they lift."""
    found: set[str] = set()
    for name, pattern in patterns:
        if pattern.search(text):
            found.add(name)
            text = pattern.sub("，", text)
    return text, found


def read_turn(text: str, *, kb_cities: set[str] | None = None) -> Turn:
    """One user turn, parsed after its lifting clauses are cut out."""
    t = normalise_question(text)
    fresh = bool(_RESET.search(t))
    t = _RESET.sub("，", t)
    t, cleared = _cut(t, _SLOT_LIFTS)
    t, wishes = _cut(t, _WISH_LIFTS)
    t, allowed = _cut(t, _ALLOW_LIFTS)
    req = extract_rules(t, kb_cities=kb_cities)
    return Turn(
        text=text,
        req=req,
        cleared=frozenset(cleared),
        lifted=frozenset(wishes | allowed),
        fresh=fresh,
        widen=bool(req.places and _WIDEN.search(t)),
    )


# -- merging ---------------------------------------------------------------------------------
def _union(a: list[Any], b: list[Any]) -> list[Any]:
    out = list(a)
    for x in b:
        if x not in out:
            out.append(x)
    return out


def _city_of(req: Requirements) -> tuple[frozenset[str], str | None]:
    return frozenset(req.cities), req.unknown_city


def city_changed(base: Requirements, turn: Requirements) -> bool:
    """The turn moves to another city (a named one, or one implied by its districts)."""
    if not (base.cities or base.unknown_city):
        return False
    if turn.unknown_city:
        return turn.unknown_city != base.unknown_city
    return bool(turn.cities) and frozenset(turn.cities) != frozenset(base.cities)


def starts_fresh(base: Requirements, turn: Turn) -> bool:
    """重新找 / 换个需求, or another city with a search of its own (two slots besides the place)."""
    if turn.fresh:
        return True
    if not city_changed(base, turn.req):
        return False
    return sum(turn.sets(s) for s in SLOTS if s.name != "place") >= 2


def _clear(req: Requirements, slot: Slot) -> None:
    for f in slot.fields:
        setattr(req, f, copy.deepcopy(_default(f)))
    for name in SHARED_LISTS:
        setattr(req, name, [w for w in getattr(req, name) if w not in slot.owns])


def _take(out: Requirements, turn: Turn, slot: Slot) -> None:
    """The turn's values of ``slot`` replace the conversation's (places: added with 也/或者)."""
    if slot.name == "place" and turn.widen:
        # 「浦东也可以」 after a search of the whole city only lifts 浦东's exclusion
        out.places = _union(out.places, turn.req.places) if out.places else []
        out.estates = _union(out.estates, turn.req.estates)
        return
    _clear(out, slot)
    for f in slot.fields:
        setattr(out, f, copy.deepcopy(getattr(turn.req, f)))


def _move_city(out: Requirements, turn: Requirements) -> None:
    """Another city: its name replaces the old one; places and place words of the old go."""
    out.cities = list(turn.cities)
    out.unknown_city = turn.unknown_city
    _clear(out, SLOT_BY_NAME["place"])
    out.exclude_places = []
    out.keywords = [k for k in out.keywords if not k.endswith("号线")]
    out.location_keywords = [k for k in out.location_keywords if k in out.special]


def _shared(out: Requirements, turn: Turn) -> None:
    """Wishes, soft negations, keywords and exclusions accumulate; lifted words go."""
    for name in SHARED_LISTS:
        merged = _union(getattr(out, name), getattr(turn.req, name))
        setattr(out, name, [w for w in merged if w not in turn.lifted])
    for name in ("decoration_exclude", "floor_exclude", "building_type_exclude"):
        setattr(out, name, [w for w in getattr(out, name) if w not in turn.lifted])
    if "朝北" in turn.lifted:
        out.exclude_north = False
    _places_against_exclusions(out, turn.req)


def _places_against_exclusions(out: Requirements, turn: Requirements) -> None:
    wanted: list[Place] = list(turn.places)
    out.exclude_places = [p for p in _union(out.exclude_places, turn.exclude_places) if p not in wanted]
    out.places = [p for p in out.places if p not in turn.exclude_places]


def merge(base: Requirements | None, turn: Turn) -> Requirements:
    """What the conversation asks for after ``turn`` (see the module's rules)."""
    if base is None or starts_fresh(base, turn):
        out = Requirements()
        base = out
    else:
        out = copy.deepcopy(base)
    if city_changed(base, turn.req):
        _move_city(out, turn.req)
    elif turn.req.cities and not out.cities:
        out.cities = list(turn.req.cities)
    elif turn.req.unknown_city:
        out.unknown_city = turn.req.unknown_city
    for slot in SLOTS:
        if slot.name in turn.cleared:
            _clear(out, slot)
        elif turn.sets(slot):
            _take(out, turn, slot)
    if "place" in turn.cleared:
        out.exclude_places = []
    _shared(out, turn)
    out.vague = list(turn.req.vague)
    out.source = turn.req.source
    return out


# -- the merged request as one sentence -------------------------------------------------------
def _price_words(req: Requirements) -> list[str]:
    lo, hi, target = req.price_min, req.price_max, req.price_target
    if target is not None and lo is not None and hi is not None:
        return [f"{target:g}万左右"]
    if lo is not None and hi is not None:
        return [f"{lo:g}-{hi:g}万"]
    if hi is not None:
        return [f"{hi:g}万以内"]
    return [f"{lo:g}万以上"] if lo is not None else []


def _rooms_words(req: Requirements) -> list[str]:
    text = req.rooms_text().replace("及以上", "以上").replace("及以下", "以下")
    if text and req.halls is not None:
        text += f"{req.halls}厅"
    return [text] if text else []


def _where_words(req: Requirements) -> list[str]:
    city = "、".join(req.cities) or (req.unknown_city or "")
    where = city + "、".join(p.name for p in req.places)
    words = [where] if where else []
    words += [f"{e}小区" for e in req.estates]
    words += [f"不要{p.name}" for p in req.exclude_places]
    return words


def _home_words(req: Requirements) -> list[str]:
    words = _price_words(req)
    if req.has_unit_price:
        words.append(req.unit_price_text().replace("元/㎡", ""))
    words += _rooms_words(req)
    if req.has_area:
        words.append(req.area_text())
    if req.property_type:
        words.append(req.property_type)
    return words


def _building_words(req: Requirements) -> list[str]:
    words = [] if req.elevator is None else ["有电梯" if req.elevator else "无电梯"]
    words += req.decoration_in + [f"不要{d}" for d in req.decoration_exclude]
    words += req.floor_in + [f"不要{f}" for f in req.floor_exclude]
    words += req.building_type + [f"不要{b}" for b in req.building_type_exclude]
    if req.build_year_min:
        words.append(f"{req.build_year_min}年以后建成")
    if req.build_year_max:
        words.append(f"{req.build_year_max}年以前建成")
    return words


def _wish_words(req: Requirements) -> list[str]:
    words = ["南北通透"] if req.north_south else ["朝南"] if req.facing_south else []
    words += [s for s in req.special if s not in ("朝南", "南北通透")]
    words += [k for k in req.location_keywords if k not in req.special]
    return words + [f"不要{n}" for n in req.negations]


SENTENCE_PARTS: tuple[Callable[[Requirements], list[str]], ...] = (
    _where_words,
    _home_words,
    _building_words,
    _wish_words,
)


def sentence(req: Requirements) -> str:
    """The request as one search sentence: 「上海普陀区 700万以内 2室 南北通透」; what is not
    wanted comes last (「不要X」 would otherwise read as governing the words after it)."""
    words = [w for part in SENTENCE_PARTS for w in part(req) if w]
    return " ".join(sorted(words, key=lambda w: w.startswith("不要")))


# -- the merged constraints, flat (the response's ``merged_constraints``) ------------------------
def _short(district: str) -> str:
    """浦东新区 → 浦东, 普陀区 → 普陀, 天府新区 → 天府 (as buyers say them)."""
    return re.sub(r"(新区|区)$", "", district) or district


def _num(x: float | None) -> float | int | None:
    return int(x) if x is not None and float(x).is_integer() else x


def _range(out: dict[str, Any], name: str, lo: float | None, hi: float | None) -> None:
    if lo is not None and lo == hi:
        out[name] = _num(lo)
        return
    out[f"min_{name}"], out[f"max_{name}"] = _num(lo), _num(hi)


def _where_constraints(req: Requirements, out: dict[str, Any]) -> None:
    out["city"] = req.cities[0] if len(req.cities) == 1 else req.unknown_city
    districts = [_short(d) for d in req.districts]
    out["district"] = districts[0] if len(districts) == 1 else None
    out["districts"] = districts
    out["bankuai"] = req.bankuai
    out["exclude_districts"] = [_short(p.district) for p in req.exclude_places if p.district]
    out["estates"] = req.estates


def _home_constraints(req: Requirements, out: dict[str, Any]) -> None:
    out["min_price_wan"], out["max_price_wan"] = _num(req.price_min), _num(req.price_max)
    out["price_around_wan"] = _num(req.price_target)
    out["min_unit_price"], out["max_unit_price"] = _num(req.unit_price_min), _num(req.unit_price_max)
    _range(out, "rooms", req.rooms_min, req.rooms_max)
    out["halls"] = req.halls
    out["min_area"], out["max_area"] = _num(req.area_min), _num(req.area_max)
    out["property_type"] = req.property_type


def _building_constraints(req: Requirements, out: dict[str, Any]) -> None:
    out["elevator"] = req.elevator
    out["decoration"], out["exclude_decoration"] = req.decoration_in, req.decoration_exclude
    out["floor"], out["exclude_floor"] = req.floor_in, req.floor_exclude
    out["building_type"], out["exclude_building_type"] = req.building_type, req.building_type_exclude
    out["min_build_year"], out["max_build_year"] = req.build_year_min, req.build_year_max
    out["orientation"] = "南北通透" if req.north_south else "朝南" if req.facing_south else None
    out["special"] = [w for w in req.special if w not in ("朝南", "南北通透")]
    out["avoid"] = req.negations


CONSTRAINT_PARTS = (_where_constraints, _home_constraints, _building_constraints)


def constraints(req: Requirements) -> dict[str, Any]:
    """The request as flat, typed constraints; only what was asked (no None, no empty list).

    >>> constraints(understand("换成普陀", ["上海浦东800万以内的两房", "要南北通透的"]).merged)
    {'city': '上海', 'district': '普陀', 'districts': ['普陀'], 'max_price_wan': 800, 'rooms': 2,
     'orientation': '南北通透'}
    """
    out: dict[str, Any] = {}
    for part in CONSTRAINT_PARTS:
        part(req, out)
    return {k: v for k, v in out.items() if v is not None and v != []}


# -- a conversation ----------------------------------------------------------------------------
def _changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, list[str]]:
    keys = [k for k in dict.fromkeys([*before, *after]) if k != "source"]
    return {
        "added": [k for k in keys if k in after and k not in before],
        "replaced": [k for k in keys if k in after and k in before and after[k] != before[k]],
        "removed": [k for k in keys if k in before and k not in after],
    }


@dataclass(slots=True)
class Dialogue:
    """A question understood in its conversation."""

    question: str
    turn: Turn
    base: Requirements | None  # what the earlier turns asked for (None: no earlier turn)
    merged: Requirements
    turns: int = 1
    changes: dict[str, list[str]] = field(default_factory=dict)
    earlier: tuple[str, ...] = ()  # the earlier user turns it was understood after

    @property
    def follow_up(self) -> bool:
        """The earlier turns changed what this one asks for (the merged request differs)."""
        return (
            self.base is not None
            and not starts_fresh(self.base, self.turn)
            and (
                self.merged.summary() != self.turn.req.summary() or bool(self.turn.cleared | self.turn.lifted)
            )
        )

    @property
    def fresh(self) -> bool:
        return self.base is not None and starts_fresh(self.base, self.turn)

    @property
    def standalone(self) -> str:
        """The merged request as one sentence (the question itself when nothing was carried)."""
        return sentence(self.merged) or self.question if self.follow_up else self.question

    def to_dict(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "follow_up": self.follow_up,
            "fresh_start": self.fresh,
            **self.changes,
        }


def understand(
    question: str,
    earlier: Sequence[str] = (),
    *,
    kb_cities: set[str] | None = None,
    base: Requirements | None = None,
) -> Dialogue:
    """``question`` after the ``earlier`` user turns (oldest first), or after a stored ``base``."""
    if base is None:
        for text in earlier:
            base = merge(base, read_turn(text, kb_cities=kb_cities))
    turn = read_turn(question, kb_cities=kb_cities)
    if base is None:
        # a first question: exactly what the parser reads (nothing to lift it from)
        return Dialogue(question, turn, None, extract_rules(question, kb_cities=kb_cities))
    merged = merge(base, turn)
    return Dialogue(
        question,
        turn,
        base,
        merged,
        turns=len(earlier) + 1,
        changes=_changes(base.summary(), merged.summary()),
        earlier=tuple(earlier),
    )


def requirements_from_dict(data: dict[str, Any]) -> Requirements:
    """:meth:`Requirements.to_dict` read back (a session's stored state)."""
    names = {f.name for f in fields(Requirements)}
    req = Requirements(**{k: copy.deepcopy(v) for k, v in data.items() if k in names})
    req.places = [Place(**{**p, "bankuai": tuple(p.get("bankuai") or ())}) for p in data.get("places", [])]
    req.exclude_places = [
        Place(**{**p, "bankuai": tuple(p.get("bankuai") or ())}) for p in data.get("exclude_places", [])
    ]
    return req


__all__ = [
    "SLOTS",
    "Dialogue",
    "Slot",
    "Turn",
    "constraints",
    "merge",
    "read_turn",
    "requirements_from_dict",
    "sentence",
    "understand",
]
