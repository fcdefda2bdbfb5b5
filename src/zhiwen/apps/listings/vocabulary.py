"""The words the listings extractor knows: special requirements, soft negations, types, cities.

Each special requirement and soft negation maps a canonical name to two patterns: how a buyer
asks for it (question) and how an agent's listing title says it (title). The title side is what
:mod:`~zhiwen.apps.listings.scoring` checks, because the title is the data's only free text.

Example::

    >>> import re
    >>> question_pattern, title_pattern = SPECIALS["地铁"]
    >>> bool(re.search(title_pattern, "近地铁11号线 精装两房"))
    True
"""

from __future__ import annotations

# The crawl is from 2019-06; "房龄10年以内" is measured from then, not from today.
REFERENCE_YEAR = 2019

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
    "顶楼": (r"顶楼|顶层|最高层", r"顶楼|顶层"),
    "一楼": (r"(?<![\d-])1\s*(?:-\s*2\s*)?[楼层]|一楼|底楼|底层|首层", r"一楼|(?<!\d)1楼|底楼|底层|首层"),
    "公房": (r"公房|老公房|售后公房", r"公房"),
    "动迁房": (r"动迁房|动迁|回迁房|拆迁房", r"动迁|回迁|拆迁"),
    "铁路": (r"铁路|轻轨|火车", r"铁路|轻轨"),
    "商住": (r"商住|商用|公寓", r"商住|商用|公寓|酒店式"),
    "墓地": (r"墓地|坟", r"墓|坟"),
    "朝北": (r"朝北|北向|向北|全北", r"朝北|北向"),
}
# exact floors the data cannot check (it has only 低/中/高楼层 + total floors) → the band they lie in
AVOIDABLE_FLOORS: dict[str, str] = {"一楼": "低楼层", "顶楼": "高楼层"}
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
# building types as the data spells them (the ``flood`` column) → how a buyer says them
BUILDING_TYPES: dict[str, str] = {
    "板塔结合": r"板塔结合|板塔混合|板塔",
    "板楼": r"板楼|板式楼?",
    "塔楼": r"塔楼|塔式楼?",
}
_OTHER_CITIES = (
    "北京 天津 重庆 南京 苏州 武汉 西安 长沙 郑州 厦门 青岛 宁波 无锡 合肥 济南 福州 东莞 佛山 昆明 大连 "
    "沈阳 哈尔滨 长春 南宁 贵阳 南昌 石家庄 太原 海口 三亚 珠海 惠州 中山 温州 嘉兴 常州 绍兴 香港 澳门 台北"
)
OTHER_CITIES = tuple(_OTHER_CITIES.split())

__all__ = [
    "AVOIDABLE_FLOORS",
    "BUILDING_TYPES",
    "NEGATIONS",
    "OTHER_CITIES",
    "PROPERTY_TYPES",
    "REFERENCE_YEAR",
    "SPECIALS",
    "VILLA_TYPES",
]
