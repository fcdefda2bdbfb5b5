"""Rule-based understanding of a home-buyer's question (seed 000, stage 1 and 2).

:func:`extract_rules` reads the five dimensions of seed 000 — price range, location, property
type, area, special requirements — plus rooms, elevator, decoration, floor, orientation, build
year and **negations** ("不要毛坯", "不要低楼层", "不要没电梯的", "远离高架") into a
:class:`Requirements`. :func:`assess` is the stage-2 quality check: how many dimensions were
found, which complex language patterns (要么…要么, 或者, 性价比, 别太贵) remain, and the four
complexity dimensions that give ``dynamic_k``. :func:`hard_filters` turns the explicit
constraints into a store filter, with named relaxation steps (:data:`RELAX_ORDER`).

Example::

    >>> req = extract_rules("浦东三林800万以内的两室，不要毛坯，要有电梯")
    >>> req.price_max, req.rooms_min, req.decoration_exclude, req.elevator
    (800.0, 2, ['毛坯'], True)
    >>> hard_filters(req)
    {'city': {'in': ['上海']}, 'bankuai': {'in': ['三林']}, 'price': {'lte': 800.0}, ...}
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import Any

from zhiwen.apps.listings.gazetteer import Gazetteer, Place, get_gazetteer

# The crawl is from 2019-06; "房龄10年以内" is measured from then, not from today.
REFERENCE_YEAR = 2019

# -- numbers -------------------------------------------------------------------------------------
_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "俩": 2, "三": 3, "四": 4, "五": 5, "六": 6,
              "七": 7, "八": 8, "九": 9}  # fmt: skip
_CN_UNITS = {"十": 10, "百": 100, "千": 1000}
# a Chinese numeral is converted only before a unit, so 七宝 / 三林 / 五角场 stay place names
_CN_NUM_RE = re.compile(
    r"(?<![\u4e00-\u9fff][零〇一二两俩三四五六七八九十百千])"
    r"([零〇一二两俩三四五六七八九十百千\d]*[零〇一二两俩三四五六七八九十百千][零〇一二两俩三四五六七八九十百千\d]*)"
    r"(?=\s*(?:万|亿|千|百|个亿|室|房|居|厅|卫|卧|平|㎡|层|楼|年|套|米|方|多|来|出头|左右|号线|间|个|到|至|-))"
)


def _cn_to_int(s: str) -> int | None:
    """``一千二百`` → 1200, ``两千`` → 2000, ``十五`` → 15, ``3千5`` → 3500 (mixed digits too)."""
    total, current, last_unit = 0, None, 1
    for ch in s:
        if ch.isdigit():
            current = (current or 0) * 10 + int(ch)
        elif ch in _CN_DIGITS:
            current = _CN_DIGITS[ch] if current is None else current * 10 + _CN_DIGITS[ch]
        elif ch in _CN_UNITS:
            unit = _CN_UNITS[ch]
            total += (1 if current is None else current) * unit
            current, last_unit = None, unit
        else:
            return None
    if current is not None:
        # "三千五" = 3500: a trailing digit after a unit is one unit lower
        total += current * (last_unit // 10) if last_unit >= 100 and current < 10 else current
    return total


def normalise_question(text: str) -> str:
    """NFKC (full-width digits), unify dashes and ㎡, Chinese numerals before units → digits."""
    t = unicodedata.normalize("NFKC", text)
    t = (
        t.replace("m2", "平")
        .replace("m²", "平")
        .replace("㎡", "平")
        .replace("平方米", "平")
        .replace("平米", "平")
    )
    t = re.sub(r"[—–－~～〜]", "-", t)
    t = re.sub(r"\s+", " ", t).strip()

    def conv(m: re.Match[str]) -> str:
        n = _cn_to_int(m.group(1))
        return m.group(1) if n is None else str(n)

    t = _CN_NUM_RE.sub(conv, t)
    # 1千万 / 2百万 after digit conversion: "1千" is not caught above when all digits
    t = re.sub(r"(\d+(?:\.\d+)?)\s*千\s*万", lambda m: f"{float(m.group(1)) * 1000:g}万", t)
    t = re.sub(r"(\d+(?:\.\d+)?)\s*百\s*万", lambda m: f"{float(m.group(1)) * 100:g}万", t)
    t = re.sub(r"(\d+(?:\.\d+)?)\s*个?\s*亿", lambda m: f"{float(m.group(1)) * 10000:g}万", t)
    t = re.sub(r"(\d+(?:\.\d+)?)\s*[wW](?![a-zA-Z])", r"\1万", t)
    return t


# -- negation scope ------------------------------------------------------------------------------
_CUE_RE = re.compile(
    r"不想要|不需要|不接受|不考虑|不喜欢|不能要|不能是|不要|不想|不能|不是|别要|别买|别|拒绝|排除|避开|远离|避免|讨厌|"
    r"非|除了|除去|去掉|想要|需要|希望|最好|必须|只要|要|而是|但是|但"
)
_NEG_CUES = frozenset(
    "不想要 不需要 不接受 不考虑 不喜欢 不能要 不能是 不要 不想 不能 不是 别要 别买 别 "  # noqa: SIM905
    "拒绝 排除 避开 远离 避免 讨厌 非 除了 除去 去掉".split()
)
# a clause boundary ends a negation's scope; so does 的 ("不要低楼层的两房": 两房 is wanted)
_CLAUSE_END = re.compile(r"[，,。；;！!？?\n的]|但是|不过|然后|另外|同时|而且|并且")


def is_negated(text: str, start: int, window: int = 12) -> bool:
    """True when the last cue before ``start`` in the same clause is a negative one."""
    lo = max(0, start - window)
    seg = text[lo:start]
    ends = list(_CLAUSE_END.finditer(seg))
    if ends:
        seg = seg[ends[-1].end() :]
    last = None
    for m in _CUE_RE.finditer(seg):
        last = m.group(0)
    return last in _NEG_CUES if last else False


# -- vocabulary ----------------------------------------------------------------------------------
# canonical special requirement → (question pattern, listing-title pattern)
SPECIALS: dict[str, tuple[str, str]] = {
    "学区": (
        r"学区|对口|名校|学校|上学|小学|初中|中学|学位|入学",
        r"学区|对口|名校|学校|小学|中学|入学|学位",
    ),
    "地铁": (r"地铁|轨交|轨道交通|\d+号线|近站|地铁站", r"地铁|轨交|号线|地铁站|双轨|近站"),
    "停车": (r"停车|车位|车库", r"车位|停车|车库"),
    "近公园": (r"公园|绿地|绿化", r"公园|绿地|绿化"),
    "满五唯一": (r"满五唯一|满5唯一|满五|满5年|唯一住房|税费少|税少", r"满五|满5|唯一|税费少|税少"),
    "满二": (r"满二|满两年|满2年", r"满二|满两年|满2|满五|满5"),
    "安静": (r"安静|清静|不吵|噪音小|静谧", r"安静|清静|不临街|静谧|中庭"),
    "采光": (r"采光|阳光|明亮|光线", r"采光|阳光|明亮|光线"),
    "户型方正": (r"方正|户型好|格局好|得房率", r"方正|户型好|格局|得房率|户型正"),
    "景观": (r"江景|湖景|河景|景观|视野", r"江景|湖景|河景|景观|视野"),
    "配套": (r"配套|商圈|商场|超市|医院|生活方便|购物", r"配套|商圈|商场|超市|医院|购物"),
    "拎包入住": (r"拎包入住|直接入住|即可入住", r"拎包|直接入住|即可入住|精装"),
    "婚房": (r"婚房", r"婚房"),
    "南北通透": (r"南北通透|南北通", r"南北通|南北"),
    "朝南": (r"朝南|南向|向南|坐北朝南|朝阳|双南|全南", r"朝南|南向|双南|全南"),
    "低总价": (
        r"低总价|总价低|上车盘|便宜|实惠|性价比|划算|别太贵|不要太贵|不太贵",
        r"低总价|总价低|急售|笋盘|捡漏|价格可谈|诚心",
    ),
}
# soft negations: canonical key → (question pattern, listing-title pattern)
NEGATIONS: dict[str, tuple[str, str]] = {
    "高架": (r"高架|立交", r"高架|立交"),
    "临街": (r"临街|沿街|马路边|大马路|主干道|吵闹|噪音|太吵|吵", r"临街|沿街|马路|主干道"),
    "顶楼": (r"顶楼|顶层", r"顶楼|顶层"),
    "公房": (r"公房|老公房|售后公房", r"公房"),
    "动迁房": (r"动迁房|动迁|回迁房|拆迁房", r"动迁|回迁|拆迁"),
    "铁路": (r"铁路|轻轨|火车", r"铁路|轻轨"),
    "商住": (r"商住|商用|公寓", r"商住|商用|公寓|酒店式"),
    "墓地": (r"墓地|坟", r"墓|坟"),
    "朝北": (r"朝北|北向|向北|全北", r"朝北|北向"),
}
PROPERTY_TYPES: dict[str, str] = {
    "独栋别墅": r"独栋|独幢",
    "联排别墅": r"联排",
    "叠拼别墅": r"叠拼|叠加",
    "双拼别墅": r"双拼",
    "别墅": r"别墅",
    "洋房": r"洋房",
    "公寓": r"公寓",
    "复式": r"复式|跃层|loft|LOFT",
    "大平层": r"大平层|平层",
}
VILLA_TYPES = ("独栋别墅", "联排别墅", "叠拼别墅", "双拼别墅", "别墅")
COMPLEX_PATTERNS: dict[str, str] = {
    "要么…要么": r"要么.+要么",
    "或者": r"或者|或是|还是|或",
    "性价比": r"性价比|划算|实惠|便宜|经济",
    "别太贵": r"别太贵|不要太贵|不太贵|贵一点|别太|不要太|不太",
    "模糊位置": r"市中心|交通便利|出行方便|不要太偏|偏远|郊区|繁华|核心区",
    "家庭需求": r"孩子|小孩|老人|父母|养老|改善|刚需|一家|三口|二胎|上班",
    "首付月供": r"首付|月供|贷款|公积金",
    "程度": r"最好|尽量|尽可能|稍微|大概|差不多|一点",
}
LOGIC_WORDS = re.compile(r"并且|而且|同时|或者|或是|要么|还是|以及|但是|但|不过|如果|除了|另外|或")
VAGUE_WORDS = re.compile(r"推荐|有什么|有哪些|有没有|看看|合适|适合|好的|不错|帮我找|随便|性价比|怎么样")
_OTHER_CITIES = (
    "北京 天津 重庆 南京 苏州 武汉 西安 长沙 郑州 厦门 青岛 宁波 无锡 合肥 济南 福州 东莞 佛山 昆明 大连 "
    "沈阳 哈尔滨 长春 南宁 贵阳 南昌 石家庄 太原 海口 三亚 珠海 惠州 中山 温州 嘉兴 常州 绍兴 香港 澳门 台北"
)
OTHER_CITIES = tuple(_OTHER_CITIES.split())

_NUM = r"(\d+(?:\.\d+)?)"


@dataclass(slots=True)
class Requirements:
    """What the buyer asked for. Prices in 万元, areas in ㎡. ``None`` / empty = not asked."""

    price_min: float | None = None
    price_max: float | None = None
    price_target: float | None = None  # "左右": the centre the user named
    unit_price_max: float | None = None  # 元/㎡
    unit_price_min: float | None = None
    cities: list[str] = field(default_factory=list)
    places: list[Place] = field(default_factory=list)  # districts / 板块 asked for
    exclude_places: list[Place] = field(default_factory=list)
    estates: list[str] = field(default_factory=list)  # 小区 keywords
    location_keywords: list[str] = field(default_factory=list)  # seed 000's location_keywords
    property_type: str | None = None
    area_min: float | None = None
    area_max: float | None = None
    rooms_min: int | None = None
    rooms_max: int | None = None
    halls: int | None = None
    elevator: bool | None = None
    decoration_in: list[str] = field(default_factory=list)
    decoration_exclude: list[str] = field(default_factory=list)
    floor_in: list[str] = field(default_factory=list)
    floor_exclude: list[str] = field(default_factory=list)
    build_year_min: int | None = None
    build_year_max: int | None = None
    facing_south: bool | None = None
    north_south: bool | None = None
    exclude_north: bool = False
    building_type_exclude: list[str] = field(default_factory=list)
    special: list[str] = field(default_factory=list)
    negations: list[str] = field(default_factory=list)  # soft: penalised in the re-score
    keywords: list[str] = field(default_factory=list)  # other words worth matching (号线, 路名)
    vague: list[str] = field(default_factory=list)
    unknown_city: str | None = None
    source: str = "rules"  # rules | rules+llm

    # -- views ---------------------------------------------------------------------------
    @property
    def districts(self) -> list[str]:
        return [p.district for p in self.places if p.kind == "district" and p.district]

    @property
    def bankuai(self) -> list[str]:
        return [b for p in self.places if p.kind == "bankuai" for b in p.bankuai]

    @property
    def has_price(self) -> bool:
        return self.price_min is not None or self.price_max is not None

    @property
    def has_area(self) -> bool:
        return self.area_min is not None or self.area_max is not None

    @property
    def has_rooms(self) -> bool:
        return self.rooms_min is not None or self.rooms_max is not None

    def price_text(self) -> str:
        lo, hi = self.price_min, self.price_max
        if lo is not None and hi is not None:
            return f"{lo:g}-{hi:g}万"
        if hi is not None:
            return f"0-{hi:g}万"
        if lo is not None:
            return f"{lo:g}万以上"
        return ""

    def area_text(self) -> str:
        lo, hi = self.area_min, self.area_max
        if lo is not None and hi is not None:
            return f"{lo:g}-{hi:g}㎡"
        if hi is not None:
            return f"{hi:g}㎡以下"
        if lo is not None:
            return f"{lo:g}㎡以上"
        return ""

    def rooms_text(self) -> str:
        lo, hi = self.rooms_min, self.rooms_max
        if lo is not None and hi is not None:
            return f"{lo}室" if lo == hi else f"{lo}-{hi}室"
        if lo is not None:
            return f"{lo}室及以上"
        if hi is not None:
            return f"{hi}室及以下"
        return ""

    def location_text(self) -> str:
        return "、".join(p.name for p in self.places)

    def dimensions(self) -> list[str]:
        """The seed's dimensions found (plus rooms/elevator/…): drives quality and dynamic_k."""
        dims = []
        if self.has_price or self.unit_price_max or self.unit_price_min:
            dims.append("price_range")
        if self.places or self.estates or self.location_keywords or self.exclude_places:
            dims.append("location")
        if self.property_type:
            dims.append("property_type")
        if self.has_area:
            dims.append("area")
        if self.has_rooms:
            dims.append("rooms")
        if (
            self.special
            or self.elevator is not None
            or self.decoration_in
            or self.facing_south
            or self.north_south
            or self.floor_in
            or self.build_year_min
        ):
            dims.append("special_requirements")
        if self.negations or self.decoration_exclude or self.floor_exclude or self.exclude_north:
            dims.append("negations")
        return dims

    def summary(self) -> dict[str, Any]:
        """JSON-friendly view (the API's ``requirements``)."""
        out: dict[str, Any] = {
            "price_range": self.price_text() or None,
            "location": self.location_text() or None,
            "cities": self.cities,
            "districts": self.districts,
            "bankuai": self.bankuai,
            "exclude_locations": [p.name for p in self.exclude_places],
            "estates": self.estates,
            "location_keywords": self.location_keywords,
            "property_type": self.property_type,
            "area": self.area_text() or None,
            "rooms": self.rooms_text() or None,
            "halls": self.halls,
            "elevator": self.elevator,
            "decoration": self.decoration_in,
            "exclude_decoration": self.decoration_exclude,
            "floor": self.floor_in,
            "exclude_floor": self.floor_exclude,
            "build_year_min": self.build_year_min,
            "build_year_max": self.build_year_max,
            "facing_south": self.facing_south,
            "north_south": self.north_south,
            "special_requirements": self.special,
            "negations": self.negations,
            "source": self.source,
        }
        return {k: v for k, v in out.items() if v not in (None, [], False)}

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["places"] = [asdict(p) for p in self.places]
        d["exclude_places"] = [asdict(p) for p in self.exclude_places]
        return d


def _add(lst: list[str], value: str) -> None:
    if value and value not in lst:
        lst.append(value)


# -- price ---------------------------------------------------------------------------------------
_PRICE_SKIP = re.compile(r"(首付|月供|税费|税|贷款|公积金|单价|租金|月租|装修费|中介费)\s*[^，,。；;]{0,4}$")


def _extract_price(t: str, req: Requirements) -> None:
    # single pass: every "N万" is read once, in context
    spans: list[tuple[int, int]] = []

    def used(a: int, b: int) -> bool:
        return any(a < y and x < b for x, y in spans)

    def price_context(start: int) -> bool:
        return not _PRICE_SKIP.search(t[max(0, start - 8) : start])

    # unit price: "单价5万以内", "单价6万-8万"
    for m in re.finditer(rf"单价\s*(?:在)?\s*{_NUM}\s*万?\s*(?:-|到|至)\s*{_NUM}\s*万", t):
        req.unit_price_min, req.unit_price_max = float(m.group(1)) * 1e4, float(m.group(2)) * 1e4
        spans.append(m.span())
    for m in re.finditer(
        rf"单价\s*(?:不超过|不高于|最多|低于|小于|在)?\s*{_NUM}\s*(万|元)?\s*(以内|以下|之内|内)?", t
    ):
        if used(*m.span()):
            continue
        v = float(m.group(1)) * (1e4 if (m.group(2) == "万" or float(m.group(1)) < 100) else 1)
        req.unit_price_max = v
        spans.append(m.span())

    # ranges: 800-1000万, 800万到1000万, 八百到一千万
    for m in re.finditer(rf"{_NUM}\s*(万)?\s*(?:-|到|至)\s*{_NUM}\s*万", t):
        if used(*m.span()) or not price_context(m.start()):
            continue
        a, b = sorted((float(m.group(1)), float(m.group(3))))
        req.price_min, req.price_max = a, b
        spans.append(m.span())
    approx = re.compile(
        rf"(?:预算|总价|价格|价位|价钱|售价)?\s*(?:在|是|为|大概|大约|约)?\s*{_NUM}\s*万\s*(左右|上下|附近|出头|浮动)"
    )
    for m in approx.finditer(t):
        if used(*m.span()) or not price_context(m.start()):
            continue
        v = float(m.group(1))
        req.price_target = v
        if m.group(2) == "出头":
            req.price_min, req.price_max = v, round(v * 1.1, 2)
        else:
            req.price_min, req.price_max = round(v * 0.9, 2), round(v * 1.1, 2)
        spans.append(m.span())
    upper_pre = re.compile(
        rf"(?:不超过|不超|不高于|不大于|最多|最高|顶多|至多|低于|少于|小于|不到|控制在|限制在|上限)\s*(?:总价|预算)?\s*{_NUM}\s*万"
    )
    for m in upper_pre.finditer(t):
        if not used(*m.span()) and price_context(m.start()):
            req.price_max = float(m.group(1))
            spans.append(m.span())
    lower_pre = re.compile(
        rf"(?<!不)(?:不低于|不少于|至少|最少|最低|高于|超过|大于|起码)\s*(?:总价|预算)?\s*{_NUM}\s*万"
    )
    for m in lower_pre.finditer(t):
        if not used(*m.span()) and price_context(m.start()):
            req.price_min = float(m.group(1))
            spans.append(m.span())
    post = re.compile(rf"{_NUM}\s*万\s*(以内|以下|之内|内|封顶|以上|起|往上|多|出头)")
    for m in post.finditer(t):
        if used(*m.span()) or not price_context(m.start()):
            continue
        v, q = float(m.group(1)), m.group(2)
        if q in ("以内", "以下", "之内", "内", "封顶"):
            req.price_max = v
        elif q == "多":
            req.price_min, req.price_max = v, round(v * 1.2, 2)
        else:
            req.price_min = v
        spans.append(m.span())
    # bare amounts: "预算900万", "总价300万", "手里有500万"
    bare = re.compile(
        rf"(预算|总价|价格|价位|手里有|手上有|只有|能出|出得起|买得起|总共)?\s*(?:在|是|为)?\s*{_NUM}\s*万"
    )
    for m in bare.finditer(t):
        if used(*m.span()) or not price_context(m.start()):
            continue
        v = float(m.group(2))
        if v < 10:  # "5万" alone is not a house price (a unit price or a fee)
            continue
        if m.group(1) in ("总价", "价格", "价位"):
            req.price_target = v
            req.price_min, req.price_max = round(v * 0.9, 2), round(v * 1.1, 2)
        else:
            req.price_max = v
        spans.append(m.span())
    if req.price_min is not None and req.price_max is not None and req.price_min > req.price_max:
        req.price_min, req.price_max = req.price_max, req.price_min


# -- area ----------------------------------------------------------------------------------------
_AREA_UNIT = r"(?:平|方|坪)(?![层房台])"


def _extract_area(t: str, req: Requirements) -> None:
    spans: list[tuple[int, int]] = []

    def used(a: int, b: int) -> bool:
        return any(a < y and x < b for x, y in spans)

    for m in re.finditer(rf"{_NUM}\s*(?:{_AREA_UNIT})?\s*(?:-|到|至)\s*{_NUM}\s*{_AREA_UNIT}", t):
        a, b = sorted((float(m.group(1)), float(m.group(2))))
        req.area_min, req.area_max = a, b
        spans.append(m.span())
    for m in re.finditer(
        rf"(?<!不)(?:不小于|不低于|至少|最少|起码|大于|超过|不少于)\s*(?:面积)?\s*{_NUM}\s*{_AREA_UNIT}", t
    ):
        if not used(*m.span()):
            req.area_min = float(m.group(1))
            spans.append(m.span())
    for m in re.finditer(
        rf"(?:不超过|不大于|最多|小于|不到|低于|以内)\s*(?:面积)?\s*{_NUM}\s*{_AREA_UNIT}", t
    ):
        if not used(*m.span()):
            req.area_max = float(m.group(1))
            spans.append(m.span())
    for m in re.finditer(
        rf"(?:面积)?\s*{_NUM}\s*{_AREA_UNIT}\s*(?:米)?\s*(以上|以下|以内|之内|左右|上下|起|往上|多|出头|内)?",
        t,
    ):
        if used(*m.span()):
            continue
        v, q = float(m.group(1)), m.group(2)
        if v < 8 or v > 2000:
            continue
        if q in ("以上", "起", "往上"):
            req.area_min = v
        elif q in ("以下", "以内", "之内", "内"):
            req.area_max = v
        elif q in ("多", "出头"):
            req.area_min, req.area_max = v, round(v * 1.2, 1)
        else:
            req.area_min, req.area_max = round(v * 0.9, 1), round(v * 1.1, 1)
        spans.append(m.span())
    if re.search(r"面积(?:要)?大|大面积|宽敞|大户型|大房子|空间大", t) and not req.has_area:
        _add(req.vague, "面积大一些")
    if re.search(r"小户型|小面积|面积小", t) and not req.has_area:
        _add(req.vague, "面积小一些")


# -- rooms ---------------------------------------------------------------------------------------
_ROOM_UNIT = r"(?:个?(?:室|房间|房(?![子源产价东龄型贷])|居室|居|卧室|卧))"


def _extract_rooms(t: str, req: Requirements) -> None:
    m = re.search(rf"(\d+)\s*{_ROOM_UNIT}?\s*(?:-|到|至|或|或者|、)\s*(\d+)\s*{_ROOM_UNIT}", t)
    if m and int(m.group(1)) <= 10 and int(m.group(2)) <= 10:
        a, b = sorted((int(m.group(1)), int(m.group(2))))
        req.rooms_min, req.rooms_max = a, b
        return
    m = re.search(rf"(?:至少|起码|最少)\s*(?:要)?\s*(\d+)\s*{_ROOM_UNIT}", t) or re.search(
        rf"(\d+)\s*{_ROOM_UNIT}\s*(?:室)?\s*(?:及以上|以上|或以上|起|往上|或更多)", t
    )
    if m and int(m.group(1)) <= 10:
        req.rooms_min = int(m.group(1))
        return
    m = re.search(rf"(\d+)\s*{_ROOM_UNIT}\s*(?:室)?\s*(?:及以下|以下|以内)", t)
    if m and int(m.group(1)) <= 10:
        req.rooms_max = int(m.group(1))
        return
    m = re.search(rf"(\d+)\s*{_ROOM_UNIT}(?:\s*(\d+)\s*厅)?", t)
    if m and 0 < int(m.group(1)) <= 10:
        if is_negated(t, m.start()):
            return
        n = int(m.group(1))
        req.rooms_min = req.rooms_max = n
        if m.group(2):
            req.halls = int(m.group(2))
        return
    if re.search(r"单身公寓|开间|一居", t):
        req.rooms_min = req.rooms_max = 1


# -- flags ---------------------------------------------------------------------------------------
def _extract_flags(t: str, req: Requirements) -> None:
    # elevator: double negations first
    if re.search(
        r"(不要|不想要|不考虑|别|拒绝)\s*(没有?|无|不带)\s*电梯|(不要|不考虑|不想要|拒绝|别)\s*(步梯|楼梯房|爬楼)",
        t,
    ):
        req.elevator = True
    elif re.search(r"(没有?|无|不带|不需要|不要|不用)\s*电梯(也|都)?(行|可以|没关系|无所谓)", t):
        req.elevator = None
    elif re.search(r"不要\s*电梯|不需要\s*电梯|步梯房|无电梯|没电梯|不带电梯", t):
        req.elevator = bool(re.search(r"(不要|拒绝|别)\s*(无|没)", t))
    elif re.search(r"电梯", t):
        req.elevator = True

    # decoration
    for m in re.finditer(
        r"精装修?|豪装|豪华装修|装修好|好装修|简装修?|毛坯房?|清水房?|有装修|带装修|已装修|装修过", t
    ):
        word = m.group(0)
        neg = is_negated(t, m.start())
        canon = (
            "精装"
            if word.startswith(("精装", "豪装", "豪华", "装修好", "好装修"))
            else "简装"
            if word.startswith("简装")
            else "毛坯"
            if word.startswith(("毛坯", "清水"))
            else "有装修"
        )
        if canon == "有装修":
            _add(req.decoration_exclude if not neg else req.decoration_in, "毛坯")
        elif neg:
            _add(req.decoration_exclude, canon)
        else:
            _add(req.decoration_in, canon)
    req.decoration_in = [d for d in req.decoration_in if d not in req.decoration_exclude]

    # floors
    if re.search(r"中高楼层|中高层|中高区", t):
        req.floor_in = ["中楼层", "高楼层"]
        t = re.sub(r"中高楼层|中高层|中高区", " ", t)
    if re.search(r"中低楼层|中低层|中低区", t):
        req.floor_in = ["低楼层", "中楼层"]
        t = re.sub(r"中低楼层|中低层|中低区", " ", t)
    if re.search(r"楼层(?:不要|别|不能|不想)太?(?:低|矮)|(?:不要|别)太?低(?:的)?楼层", t):
        _add(req.floor_exclude, "低楼层")
    if re.search(r"楼层(?:不要|别|不能|不想)太?高|(?:不要|别)太?高(?:的)?楼层", t):
        _add(req.floor_exclude, "高楼层")
    for m in re.finditer(
        r"(低楼层|中楼层|中间楼层|中层|高楼层|高层|底楼|底层|一楼|1楼|一层|1层|二楼|2楼)", t
    ):
        word = m.group(1)
        if word in ("高层",) and re.search(r"高层(住宅|建筑|小区)", t[m.start() :]):
            continue
        level = (
            "低楼层"
            if word in ("低楼层", "底楼", "底层", "一楼", "1楼", "一层", "1层", "二楼", "2楼")
            else "中楼层"
            if word in ("中楼层", "中间楼层", "中层")
            else "高楼层"
        )
        if is_negated(t, m.start()):
            _add(req.floor_exclude, level)
        else:
            _add(req.floor_in, level)
    req.floor_in = [f for f in req.floor_in if f not in req.floor_exclude]

    # orientation
    ns = re.search(r"南北通透|南北通|南北向|南北朝向", t)
    if ns and not is_negated(t, ns.start()):
        req.north_south = True
    for m in re.finditer(r"朝南|南向|向南|坐北朝南|双南|全南", t):
        if not is_negated(t, m.start()):
            req.facing_south = True
    for m in re.finditer(r"朝北|北向|向北|全北", t):
        if is_negated(t, m.start()) or re.search(
            r"朝南", t[m.start() - 2 : m.start()] if m.start() >= 2 else ""
        ):
            req.exclude_north = True

    # build year
    ym = re.search(r"(\d{4})\s*年\s*(?:以后|之后|后|以来|以上)", t)
    if ym and 1950 < int(ym.group(1)) <= REFERENCE_YEAR + 1:
        req.build_year_min = int(ym.group(1))
    ym = re.search(r"(\d{4})\s*年\s*(?:以前|之前|前)", t)
    if ym and 1950 < int(ym.group(1)) <= REFERENCE_YEAR + 1:
        req.build_year_max = int(ym.group(1))
    ym = re.search(
        r"(?:房龄|楼龄)\s*(?:不超过|在|小于|低于)?\s*(\d+)\s*年\s*(?:以内|以下|之内|内)?", t
    ) or re.search(r"(\d+)\s*年\s*(?:以内|之内|内)的?(?:房子|房龄|新房|次新)", t)
    if ym and 0 < int(ym.group(1)) < 80:
        req.build_year_min = REFERENCE_YEAR - int(ym.group(1))
    if re.search(r"次新房?|新小区|新一点|房龄新|新房子|较新", t) and req.build_year_min is None:
        req.build_year_min = 2010 if "次新" in t else 2005
    for m in re.finditer(r"老房子?|老破小|老小区|老旧|房龄(太)?(老|大)|旧房", t):
        if is_negated(t, m.start()) and req.build_year_min is None:
            req.build_year_min = 2000

    # building type (only exclusions are hard)
    for m in re.finditer(r"塔楼|板楼", t):
        if is_negated(t, m.start()):
            _add(req.building_type_exclude, m.group(0))
        else:
            _add(req.keywords, m.group(0))

    # property type
    for canon, pat in PROPERTY_TYPES.items():
        pm = re.search(pat, t)
        if pm:
            if is_negated(t, pm.start()):
                if canon in VILLA_TYPES:
                    _add(req.negations, "别墅")
                else:
                    _add(req.negations, canon)
            elif req.property_type is None:
                req.property_type = canon

    # special requirements and soft negations
    for canon, (qpat, _) in SPECIALS.items():
        for m in re.finditer(qpat, t):
            if is_negated(t, m.start()):
                if canon == "朝南":
                    continue
                if canon == "低总价":  # "不要太贵" is a price wish, not a negation
                    _add(req.special, canon)
                continue
            _add(req.special, canon)
            break
    if "朝南" in req.special:
        req.facing_south = True
    if "南北通透" in req.special and req.north_south is None:
        req.north_south = True
    for canon, (qpat, _) in NEGATIONS.items():
        for m in re.finditer(qpat, t):
            explicit_neg = is_negated(t, m.start())
            # "吵", "噪音" are negative by themselves; "顶楼" needs a cue
            inherently_bad = canon in ("临街",) and m.group(0) in ("吵闹", "噪音", "太吵", "吵")
            if explicit_neg or inherently_bad:
                if canon == "朝北":
                    req.exclude_north = True
                if canon == "顶楼":
                    # the data only says 低/中/高楼层: excluding 高楼层 is the only way to be sure
                    _add(req.floor_exclude, "高楼层")
                _add(req.negations, canon)
                break
    if req.floor_in == ["高楼层"] and "顶楼" in req.negations and "高楼层" in req.floor_exclude:
        req.floor_exclude.remove("高楼层")  # "高楼层但不要顶楼": the penalty is all we can do
    req.floor_in = [f for f in req.floor_in if f not in req.floor_exclude]
    for m in re.finditer(r"(\d+)\s*号线", t):
        _add(req.keywords, f"{m.group(1)}号线")
        _add(req.location_keywords, f"{m.group(1)}号线")
        _add(req.special, "地铁")
    # generic "不要X" the vocabularies missed: keep the word as a soft negation
    for m in re.finditer(r"(?:不要|远离|避开|不考虑|拒绝)\s*([\u4e00-\u9fff]{2,4}?)(?:的|，|,|。|$|\s)", t):
        word = m.group(1)
        known = any(re.search(p, word) for p, _ in NEGATIONS.values()) or any(
            re.search(p, word) for p, _ in SPECIALS.values()
        )
        if get_gazetteer().find_mentions(word):  # a place: handled as an excluded location
            continue
        if not known and not re.search(
            r"电梯|毛坯|简装|精装|楼层|一楼|底楼|顶楼|朝北|北向|太贵|太远|太偏|太小|太大|太老|老房", word
        ):
            _add(req.negations, word)


def _extract_location(t: str, req: Requirements, gaz: Gazetteer, kb_cities: set[str] | None) -> None:
    mentions = gaz.find_mentions(t)
    explicit_cities = {p.city for m in mentions for p in m.places if p.kind == "city"}
    for c in explicit_cities:
        _add(req.cities, c)
    for other in OTHER_CITIES:
        if other in t and not explicit_cities:
            req.unknown_city = other
            break
    context = explicit_cities or (kb_cities or set())
    for m in mentions:
        places = [p for p in m.resolve(context) if p.kind != "city"]
        if not places:
            continue
        if m.weak and not context:
            continue
        if len(places) > 1 and not context:
            # ambiguous without a city: districts beat 板块 (龙华区 vs 徐汇·龙华 is rare)
            places = [p for p in places if p.kind == "district"] or places
        target = req.exclude_places if is_negated(t, m.start) else req.places
        for p in places:
            if p not in target:
                target.append(p)
    if not req.cities:
        # a district/板块 implies its city
        for p in req.places:
            _add(req.cities, p.city)
    # refine: "浦东三林" = 三林 (a 板块 inside a named district narrows the district)
    bk_districts = {(p.city, p.district) for p in req.places if p.kind == "bankuai"}
    req.places = [
        p for p in req.places if not (p.kind == "district" and (p.city, p.district) in bk_districts)
    ]
    # estates and location keywords
    for mm in re.finditer(r"([\u4e00-\u9fffA-Za-z0-9]{2,10}?)(?:小区|花园小区)", t):
        name = re.sub(r"^(在|想|要|找|买|看|住|的|是|靠近|附近)+", "", mm.group(1))
        if len(name) >= 2 and not is_negated(t, mm.start()):
            _add(req.estates, name)
    for mm in re.finditer(r"[「“\"『]([^」”\"』]{2,12})[」”\"』]", t):
        _add(req.estates, mm.group(1))
    for mm in re.finditer(
        r"([\u4e00-\u9fff]{2,6}?(?:路|街|大道|广场|公园|地铁站|站))(?:附近|旁边|周边|一带|边上|沿线)", t
    ):
        _add(req.location_keywords, mm.group(1))
    if re.search(r"地铁|轨交", t):
        _add(req.location_keywords, "地铁")


def extract_rules(
    question: str, *, gazetteer: Gazetteer | None = None, kb_cities: set[str] | None = None
) -> Requirements:
    """Stage 1: regular expressions and vocabularies, no model, ~0.1 ms.

    ``kb_cities``: the cities the knowledge base holds; they resolve ambiguous names (龙华) and
    allow common-word 板块 (中原, 万里) when the question names no city.
    """
    gaz = gazetteer or get_gazetteer()
    t = normalise_question(question)
    req = Requirements()
    _extract_location(t, req, gaz, kb_cities)
    _extract_price(t, req)
    _extract_area(t, req)
    _extract_rooms(t, req)
    _extract_flags(t, req)
    for w in VAGUE_WORDS.findall(t):
        _add(req.vague, w)
    return req


# -- stage 2: quality check and complexity ------------------------------------------------------
@dataclass(slots=True)
class Quality:
    """Seed 000 stage 2: is the rule result good enough, or should the LLM look too?"""

    dimensions: list[str]
    complex_patterns: list[str]
    logic_words: int
    length: int
    vagueness: int
    complexity: float  # 0..1
    needs_llm: bool
    dynamic_k: int
    reasons: list[str] = field(default_factory=list)


def assess(question: str, req: Requirements, *, base_k: int = 10, max_k: int = 60) -> Quality:
    """Quality of the rule extraction and the four complexity dimensions → ``dynamic_k``."""
    t = normalise_question(question)
    dims = req.dimensions()
    patterns = [name for name, pat in COMPLEX_PATTERNS.items() if re.search(pat, t)]
    logic = len(LOGIC_WORDS.findall(t))
    vague = len(VAGUE_WORDS.findall(t)) + len(req.vague)
    length = len(t)
    reasons: list[str] = []
    if patterns:
        reasons.append("复杂语言模式: " + "、".join(patterns))
    if length > 30 and len(dims) < 2:
        reasons.append("问题较长但提取到的条件很少")
    if not dims:
        reasons.append("规则未提取到任何条件")
    unknown_neg = [n for n in req.negations if n not in NEGATIONS and n != "别墅"]
    if unknown_neg:
        reasons.append("未识别的否定条件: " + "、".join(unknown_neg))
    complexity = min(
        1.0,
        0.12 * len(dims)
        + 0.12 * min(logic, 3)
        + min(length, 120) / 400
        + 0.1 * min(vague, 3)
        + 0.1 * len(patterns),
    )
    needs_llm = bool(reasons) and length >= 4
    k = base_k + 4 * len(dims) + 5 * min(logic, 4) + min(length // 15, 8) + 5 * min(vague, 3)
    return Quality(
        dimensions=dims,
        complex_patterns=patterns,
        logic_words=logic,
        length=length,
        vagueness=vague,
        complexity=round(complexity, 3),
        needs_llm=needs_llm,
        dynamic_k=max(base_k, min(max_k, k)),
        reasons=reasons,
    )


# -- hard constraints → store filters -----------------------------------------------------------
# Relaxation order when too few listings satisfy every constraint (the least important first);
# cities, districts and explicit exclusions of places are never relaxed.
RELAX_ORDER: tuple[tuple[str, str], ...] = (
    ("area", "面积条件"),
    ("orientation", "朝向条件"),
    ("build_year", "房龄条件"),
    ("price", "价格条件(放宽10%)"),
    ("bankuai", "板块条件(保留所在区)"),
    ("decoration", "装修条件"),
    ("floor", "楼层条件"),
    ("rooms", "户型条件"),
    ("elevator", "电梯条件"),
    ("property_type", "房屋类型"),
)


def hard_filters(
    req: Requirements, relaxed: frozenset[str] | set[str] = frozenset(), *, tolerance: float = 0.10
) -> dict[str, Any]:
    """The explicit constraints as a filter dict (see :mod:`zhiwen.store.filters`)."""
    f: dict[str, Any] = {}
    if req.cities:
        f["city"] = {"in": list(req.cities)}
    if req.unknown_city and not req.cities:
        f["city"] = {"in": [req.unknown_city]}
    bankuai = req.bankuai
    districts = req.districts
    if bankuai and "bankuai" not in relaxed:
        # districts named beside 板块 of other districts: expand to their 板块 (OR across both)
        gaz = get_gazetteer()
        names = list(bankuai)
        for p in req.places:
            if p.kind == "district" and p.district:
                names.extend(gaz.bankuai(p.city, p.district))
        f["bankuai"] = {"in": sorted(set(names))}
    elif bankuai or districts:
        all_d = list(districts) + [p.district for p in req.places if p.kind == "bankuai" and p.district]
        if all_d:
            f["district"] = {"in": sorted(set(all_d))}
    ex_d = [p.district for p in req.exclude_places if p.kind == "district" and p.district]
    ex_b = [b for p in req.exclude_places if p.kind == "bankuai" for b in p.bankuai]
    if ex_d:
        f.setdefault("district", {})["nin"] = sorted(set(ex_d))
    if ex_b:
        f.setdefault("bankuai", {})["nin"] = sorted(set(ex_b))
    # price is widened by the tolerance when relaxed, never dropped
    widen = 1.0 + tolerance if "price" in relaxed else 1.0
    if req.price_min is not None or req.price_max is not None:
        cond: dict[str, float] = {}
        if req.price_min is not None:
            cond["gte"] = round(req.price_min / widen, 2)
        if req.price_max is not None:
            cond["lte"] = round(req.price_max * widen, 2)
        f["price"] = cond
    if req.unit_price_max is not None or req.unit_price_min is not None:
        cond = {}
        if req.unit_price_min is not None:
            cond["gte"] = req.unit_price_min / widen
        if req.unit_price_max is not None:
            cond["lte"] = req.unit_price_max * widen
        f["unit_price"] = cond
    if req.has_area and "area" not in relaxed:
        cond = {}
        if req.area_min is not None:
            cond["gte"] = req.area_min
        if req.area_max is not None:
            cond["lte"] = req.area_max
        f["area"] = cond
    if req.has_rooms and "rooms" not in relaxed:
        if req.rooms_min is not None and req.rooms_min == req.rooms_max:
            f["rooms"] = req.rooms_min
        else:
            cond = {}
            if req.rooms_min is not None:
                cond["gte"] = req.rooms_min
            if req.rooms_max is not None:
                cond["lte"] = req.rooms_max
            f["rooms"] = cond
        if req.halls is not None:
            f["halls"] = req.halls
    if req.elevator is not None and "elevator" not in relaxed:
        f["elevator"] = req.elevator
    if "decoration" not in relaxed and req.decoration_in:
        f["decoration"] = {"in": list(req.decoration_in)}
    if req.decoration_exclude:
        f.setdefault("decoration", {})
        if "in" not in f["decoration"]:
            f["decoration"]["nin"] = list(req.decoration_exclude)
    if "floor" not in relaxed:
        if req.floor_in:
            f["floor_level"] = {"in": list(req.floor_in)}
        elif req.floor_exclude:
            f["floor_level"] = {"nin": list(req.floor_exclude)}
    if "orientation" not in relaxed:
        if req.north_south:
            f["north_south"] = True
        elif req.facing_south:
            f["facing_south"] = True
    if req.exclude_north:
        f["north_only"] = False
    has_year = req.build_year_min is not None or req.build_year_max is not None
    if "build_year" not in relaxed and has_year:
        cond = {}
        if req.build_year_min is not None:
            cond["gte"] = req.build_year_min
        if req.build_year_max is not None:
            cond["lte"] = req.build_year_max
        f["build_year"] = cond
    if req.building_type_exclude:
        f["building_type"] = {"nin": list(req.building_type_exclude)}
    if "property_type" not in relaxed and req.property_type in VILLA_TYPES:
        if req.property_type == "别墅":
            f["is_villa"] = True
        else:
            f["property_type"] = req.property_type
    if "别墅" in req.negations:
        f["is_villa"] = False
    return {k: v for k, v in f.items() if v != {}}


def relaxable_steps(req: Requirements) -> list[tuple[str, str]]:
    """The steps of :data:`RELAX_ORDER` that would change this request's filter."""
    have = {
        "area": req.has_area,
        "orientation": bool(req.north_south or req.facing_south),
        "build_year": req.build_year_min is not None or req.build_year_max is not None,
        "price": req.has_price or req.unit_price_max is not None or req.unit_price_min is not None,
        "bankuai": bool(req.bankuai),
        "decoration": bool(req.decoration_in),
        "floor": bool(req.floor_in or req.floor_exclude),
        "rooms": req.has_rooms,
        "elevator": req.elevator is not None,
        "property_type": req.property_type in VILLA_TYPES,
    }
    return [(k, label) for k, label in RELAX_ORDER if have[k]]
