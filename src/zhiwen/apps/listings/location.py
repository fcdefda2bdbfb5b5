"""Where the buyer wants to live: cities, districts / 板块 (wanted or excluded), estates, keywords.

Place names are found with the :class:`~zhiwen.chinese.gazetteer.Gazetteer`; ambiguous
ones (龙华: a 上海 板块 and a 深圳 district) resolve with the cities named in the question or,
failing that, the cities the knowledge base holds (``kb_cities``). A negated mention
("不要浦东的") goes to ``exclude_places``. A city the gazetteer does not cover sets
``unknown_city``, so the service can answer honestly that it has no listings there.

Example::

    >>> from zhiwen.chinese.gazetteer import get_gazetteer
    >>> req = Requirements()
    >>> extract_location("浦东三林，不要闵行", req, get_gazetteer(), {"上海"})
    >>> req.bankuai, [p.name for p in req.exclude_places]
    (['三林'], ['闵行区'])
"""

from __future__ import annotations

import re

from zhiwen.apps.listings.negation import is_negated
from zhiwen.apps.listings.requirements import Requirements, add_unique
from zhiwen.apps.listings.vocabulary import OTHER_CITIES
from zhiwen.chinese.gazetteer import Gazetteer


def _cities(t: str, req: Requirements, explicit: set[str]) -> None:
    for c in sorted(explicit):
        add_unique(req.cities, c)
    if not explicit:
        req.unknown_city = next((other for other in OTHER_CITIES if other in t), None)


def _places(t: str, req: Requirements, gaz: Gazetteer, kb_cities: set[str] | None) -> None:
    mentions = gaz.find_mentions(t)
    explicit = {p.city for m in mentions for p in m.places if p.kind == "city"}
    _cities(t, req, explicit)
    context = explicit or (kb_cities or set())
    for m in mentions:
        places = [p for p in m.resolve(context) if p.kind != "city"]
        if not places or (m.weak and not context):
            continue
        if len(places) > 1 and not context:
            # ambiguous without a city: districts beat 板块 (龙华区 vs 徐汇·龙华 is rare)
            places = [p for p in places if p.kind == "district"] or places
        target = req.exclude_places if is_negated(t, m.start) else req.places
        target.extend(p for p in places if p not in target)
    if not req.cities:
        for p in req.places:  # a district/板块 implies its city
            add_unique(req.cities, p.city)
    # refine: "浦东三林" = 三林 (a 板块 inside a named district narrows the district)
    bk_districts = {(p.city, p.district) for p in req.places if p.kind == "bankuai"}
    req.places = [
        p for p in req.places if not (p.kind == "district" and (p.city, p.district) in bk_districts)
    ]


def _estates_and_keywords(t: str, req: Requirements) -> None:
    for mm in re.finditer(r"([\u4e00-\u9fffA-Za-z0-9]{2,10}?)(?:小区|花园小区)", t):
        name = re.sub(r"^(在|想|要|找|买|看|住|的|是|靠近|附近)+", "", mm.group(1))
        if len(name) >= 2 and not is_negated(t, mm.start()):
            add_unique(req.estates, name)
    for mm in re.finditer(r"[「“\"『]([^」”\"』]{2,12})[」”\"』]", t):
        add_unique(req.estates, mm.group(1))
    for mm in re.finditer(
        r"([\u4e00-\u9fff]{2,6}?(?:路|街|大道|广场|公园|地铁站|站))(?:附近|旁边|周边|一带|边上|沿线)", t
    ):
        add_unique(req.location_keywords, mm.group(1))
    if re.search(r"地铁|轨交", t):
        add_unique(req.location_keywords, "地铁")
    for m in re.finditer(r"(\d+)\s*号线", t):
        add_unique(req.keywords, f"{m.group(1)}号线")
        add_unique(req.location_keywords, f"{m.group(1)}号线")


def extract_location(t: str, req: Requirements, gaz: Gazetteer, kb_cities: set[str] | None) -> None:
    """Fill cities, places, excluded places, estates and location keywords."""
    _places(t, req, gaz, kb_cities)
    _estates_and_keywords(t, req)


__all__ = ["extract_location"]
