"""Rule-based understanding of a home-buyer's question (stage 1: rules; stage 2: are they enough).

:func:`extract_rules` normalises the question (:mod:`.numerals`) and runs one extractor per
concern into a :class:`~.requirements.Requirements`:

=================  ==========================================================================
module             reads
=================  ==========================================================================
:mod:`.location`   cities, districts / 板块 (wanted or excluded), estates, location keywords
:mod:`.price`      total price (万元) and unit price (元/㎡): ranges, bounds, 左右 / 来 / 上下
:mod:`.layout`     area, rooms / halls, property type
:mod:`.floors`     floor bands (hard); exact floors 一楼 / 顶楼 are soft (the data has bands)
:mod:`.flags`      elevator, decoration, orientation, build year, building type (板楼 / 塔楼)
:mod:`.specials`   special requirements (学区, 地铁 …) and soft negations (远离高架 …)
=================  ==========================================================================

:func:`assess` (:mod:`.quality`) is the stage-2 check that decides on the LLM fallback and
``dynamic_k``; :func:`hard_filters` / :func:`relaxable_steps` (:mod:`.filters`) turn the explicit
constraints into a store filter. This module re-exports them all, so callers import from here.

Example::

    >>> req = extract_rules("浦东三林800万以内的两室，不要毛坯，要有电梯")
    >>> req.price_max, req.rooms_min, req.decoration_exclude, req.elevator
    (800.0, 2, ['毛坯'], True)
    >>> hard_filters(req)["bankuai"], hard_filters(req)["price"]
    ({'in': ['三林']}, {'lte': 800.0})
"""

from __future__ import annotations

from zhiwen.apps.listings.filters import RELAX_ORDER, hard_filters, relaxable_steps
from zhiwen.apps.listings.flags import extract_flags
from zhiwen.apps.listings.floors import extract_floors
from zhiwen.apps.listings.layout import extract_area, extract_property_type, extract_rooms
from zhiwen.apps.listings.location import extract_location
from zhiwen.apps.listings.negation import is_negated
from zhiwen.apps.listings.price import extract_price
from zhiwen.apps.listings.quality import COMPLEX_PATTERNS, LOGIC_WORDS, VAGUE_WORDS, Quality, assess
from zhiwen.apps.listings.requirements import Requirements
from zhiwen.apps.listings.specials import extract_specials
from zhiwen.apps.listings.vocabulary import (
    AVOIDABLE_FLOORS,
    BUILDING_TYPES,
    NEGATIONS,
    OTHER_CITIES,
    PROPERTY_TYPES,
    REFERENCE_YEAR,
    SPECIALS,
    VILLA_TYPES,
)
from zhiwen.chinese.gazetteer import Gazetteer, get_gazetteer
from zhiwen.chinese.normalise import normalise_question


def extract_rules(
    question: str, *, gazetteer: Gazetteer | None = None, kb_cities: set[str] | None = None
) -> Requirements:
    """Stage 1: regular expressions and vocabularies, no model, ~0.1 ms.

    ``kb_cities``: the cities the knowledge base holds; they resolve ambiguous names (龙华) and
    allow common-word 板块 (中原, 万里) when the question names no city.
    """
    t = normalise_question(question)
    req = Requirements()
    extract_location(t, req, gazetteer or get_gazetteer(), kb_cities)
    extract_price(t, req)
    extract_area(t, req)
    extract_rooms(t, req)
    extract_flags(t, req)
    extract_floors(t, req)
    extract_property_type(t, req)
    extract_specials(t, req)
    req.vague.extend(w for w in dict.fromkeys(VAGUE_WORDS.findall(t)) if w not in req.vague)
    return req


__all__ = [
    "AVOIDABLE_FLOORS",
    "BUILDING_TYPES",
    "COMPLEX_PATTERNS",
    "LOGIC_WORDS",
    "NEGATIONS",
    "OTHER_CITIES",
    "PROPERTY_TYPES",
    "REFERENCE_YEAR",
    "RELAX_ORDER",
    "SPECIALS",
    "VAGUE_WORDS",
    "VILLA_TYPES",
    "Quality",
    "Requirements",
    "assess",
    "extract_rules",
    "hard_filters",
    "is_negated",
    "normalise_question",
    "relaxable_steps",
]
