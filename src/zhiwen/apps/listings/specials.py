"""Special requirements (学区, 地铁, 满五唯一 …) and soft negations (远离高架, 不要顶楼 …).

A special requirement counts when it is named and not negated ("不要太贵" is still the wish
低总价). A soft negation counts when a negative cue governs it ("不要临街", "远离高架"); 吵 /
噪音 are negative by themselves. Soft negations never filter: the re-score ranks listings that
hit them lower. That is also how exact floors are handled ("不要一楼", "不要顶楼"): the data
cannot tell them apart inside a 低/高楼层 band (see :mod:`~zhiwen.apps.listings.floors`).
Any other "不要X" the vocabularies miss is kept as a soft negation word.

Example::

    >>> req = Requirements()
    >>> extract_specials("近地铁，满五唯一，不要顶楼，远离高架", req)
    >>> req.special, req.negations
    (['地铁', '满五唯一'], ['高架', '顶楼'])
"""

from __future__ import annotations

import re

from zhiwen.apps.listings.negation import is_negated
from zhiwen.apps.listings.requirements import Requirements, add_unique
from zhiwen.apps.listings.vocabulary import BUILDING_TYPES, NEGATIONS, SPECIALS
from zhiwen.chinese.gazetteer import get_gazetteer

_INHERENTLY_BAD = {"临街": ("吵闹", "噪音", "太吵", "吵")}  # negative without a cue
# words other extractors own (hard constraints or wishes), never a generic soft negation
_OWNED_ELSEWHERE = re.compile(
    r"电梯|毛坯|简装|精装|楼层|一楼|底楼|底层|首层|顶楼|顶层|朝北|北向|太贵|太远|太偏|太小|太大|太老|老房"
)
_GENERIC_NEG = re.compile(r"(?:不要|远离|避开|不考虑|拒绝)\s*([\u4e00-\u9fff]{2,4}?)(?:的|，|,|。|$|\s)")
_KNOWN_PATTERNS = (
    [q for q, _ in NEGATIONS.values()] + [q for q, _ in SPECIALS.values()] + list(BUILDING_TYPES.values())
)


def _wanted(t: str, canon: str, pattern: str) -> bool:
    for m in re.finditer(pattern, t):
        if not is_negated(t, m.start()):
            return True
        if canon == "低总价":  # "不要太贵" is a price wish, not a negation
            return True
    return False


def _avoided(t: str, canon: str, pattern: str) -> bool:
    bad_alone = _INHERENTLY_BAD.get(canon, ())
    return any(
        is_negated(t, m.start(), end=m.end()) or m.group(0) in bad_alone for m in re.finditer(pattern, t)
    )


def _generic_negations(t: str, req: Requirements) -> None:
    for m in _GENERIC_NEG.finditer(t):
        word = m.group(1)
        if any(re.search(p, word) for p in _KNOWN_PATTERNS) or _OWNED_ELSEWHERE.search(word):
            continue
        if get_gazetteer().find_mentions(word):  # a place: handled as an excluded location
            continue
        add_unique(req.negations, word)


def extract_specials(t: str, req: Requirements) -> None:
    """Fill ``special`` (and 朝南 / 南北通透 flags), ``negations`` and ``exclude_north``."""
    for canon, (pattern, _) in SPECIALS.items():
        if _wanted(t, canon, pattern):
            add_unique(req.special, canon)
    if re.search(r"\d+\s*号线", t):
        add_unique(req.special, "地铁")
    if "朝南" in req.special:
        req.facing_south = True
    if "南北通透" in req.special and req.north_south is None:
        req.north_south = True
    for canon, (pattern, _) in NEGATIONS.items():
        if _avoided(t, canon, pattern):
            add_unique(req.negations, canon)
            if canon == "朝北":
                req.exclude_north = True
    _generic_negations(t, req)


__all__ = ["extract_specials"]
