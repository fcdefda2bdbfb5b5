"""What a property search says: the listings in the API's shape, the extractive answer, the LLM
prompt, and the conversation fields a result adds to the search's (split from :mod:`.service`,
which runs the search).

Example::

    >>> found_line([{"relaxed": False}] * 3, 57)
    '符合条件的房源共 57 套，按匹配度为您展示前 3 套：'
"""

from __future__ import annotations

from typing import Any

from zhiwen.apps.listings.describe import describe_requirements
from zhiwen.apps.listings.extract import Requirements
from zhiwen.apps.listings.followup import Dialogue, constraints

ADVISER_PROMPT = """你是一位专业、热情的房产顾问，目标是帮客户找到合适的房子并推动他进一步看房。
严格要求：只能使用下面“房源信息”中给出的事实（价格、面积、户型、楼层、年代、装修、电梯、朝向、标题中的描述）。
不要编造房源信息里没有的内容（例如具体学校、地铁线路、小区配套、税费、升值预期）；房源信息没有提到的，请说明“需进一步核实”。
如果某套房源有“已放宽”的条件，要如实告诉客户它哪一点不完全符合要求。

客户的问题：{question}
客户的具体要求：{requirements}

房源信息（按匹配度排序）：
{listings}

请用中文回答：先一句话总结推荐，再逐套说明核心优势和需要注意的地方（引用房源编号），最后给出看房建议。"""


def _fmt(x: Any) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def property_view(meta: dict[str, Any], doc_id: str) -> dict[str, Any]:
    """The API shape of one listing (:class:`~.result.Listing` without its match fields)."""
    city = meta.get("city") or ""
    district = meta.get("district") or ""
    bankuai = meta.get("bankuai") or ""
    location = f"{city}市{district}" + (f"·{bankuai}" if bankuai else "")
    return {
        "id": doc_id,
        "title": meta.get("title") or meta.get("xiaoqu") or doc_id,
        "location": location,
        "price": meta.get("price"),
        "city": city,
        "district": district or None,
        "bankuai": bankuai or None,
        "xiaoqu": meta.get("xiaoqu"),
        "area": meta.get("area"),
        "rooms": meta.get("rooms"),
        "halls": meta.get("halls"),
        "layout": meta.get("layout"),
        "property_type": meta.get("property_type"),
        "floor": meta.get("floor"),
        "floor_level": meta.get("floor_level"),
        "total_floors": meta.get("total_floors"),
        "build_year": meta.get("build_year"),
        "building_type": meta.get("building_type"),
        "decoration": meta.get("decoration"),
        "elevator": meta.get("elevator"),
        "orientation": meta.get("orientation"),
        "unit_price": meta.get("unit_price"),
    }


def listing_line(i: int, p: dict[str, Any]) -> str:
    """One listing as one numbered line of an answer or a prompt."""
    return f"{i}. 【{p['title']}】" + "，".join(_home_bits(p) + _building_bits(p))


def _home_bits(p: dict[str, Any]) -> list[str]:
    """Where, which 小区, layout, area and price."""
    bits = [p["location"]]
    if p.get("xiaoqu"):
        bits.append(f"{p['xiaoqu']}小区")
    if p.get("layout"):
        bits.append(p["layout"])
    if p.get("area") is not None:
        bits.append(f"{_fmt(p['area'])}㎡")
    price = f"总价{_fmt(p['price'])}万"
    if p.get("unit_price"):
        price += f"（单价{p['unit_price']}元/㎡）"
    bits.append(price)
    return bits


def _building_bits(p: dict[str, Any]) -> list[str]:
    """Floor, building, age, decoration, elevator and orientation (only what is known)."""
    bits: list[str] = []
    if p.get("floor"):
        bits.append(p["floor"])
    if p.get("building_type"):
        bits.append(p["building_type"])
    if p.get("build_year"):
        bits.append(f"{p['build_year']}年建")
    if p.get("decoration") and p["decoration"] != "其他":
        bits.append(p["decoration"])
    if p.get("elevator") is not None:
        bits.append("有电梯" if p["elevator"] else "无电梯")
    if p.get("orientation"):
        bits.append("朝" + p["orientation"].replace(" ", ""))
    return bits


def found_line(props: list[dict[str, Any]], total: int | None) -> str:
    """「为您找到 3 套房源」, or how many match and how many are shown (issue #30).

    >>> found_line([{"relaxed": False}] * 3, 57)
    '符合条件的房源共 57 套，按匹配度为您展示前 3 套：'
    >>> found_line([{"relaxed": False}, {"relaxed": True}], 1)
    '完全符合条件的房源有 1 套，另有 1 套放宽了部分条件：'
    """
    shown = len(props)
    exact = sum(1 for p in props if not p.get("relaxed"))
    if total is not None and total > shown:
        return f"符合条件的房源共 {total} 套，按匹配度为您展示前 {shown} 套："
    if total is not None and exact < shown:
        return f"完全符合条件的房源有 {total} 套，另有 {shown - total} 套放宽了部分条件："
    return f"为您找到 {shown} 套房源："


def compose_answer(
    question: str, req: Requirements, props: list[dict[str, Any]], note: str, total: int | None = None
) -> str:
    """The extractive answer: the listings and their reasons, with a note that no LLM wrote it."""
    lines = [note]
    if not props:
        lines.append(f"根据您的需求（{describe_requirements(req)}），暂时没有找到符合条件的房源。")
        lines.append("建议适当放宽预算、面积或区域条件后再试。")
        return "\n".join(lines)
    lines.append(f"根据您的需求（{describe_requirements(req)}），{found_line(props, total)}")
    for i, p in enumerate(props, start=1):
        lines.append(listing_line(i, p))
        lines.append(f"   匹配度 {p['match_percentage']}%：" + "；".join(p["match_reasons"]))
    if any(p.get("relaxed") for p in props):
        lines.append("注：标有“已放宽”的房源并不完全符合您的全部条件，请留意。")
    lines.append("以上信息均来自房源挂牌数据，学区、交通等细节请在看房时进一步核实。")
    return "\n".join(lines)


def conversation_fields(dialogue: Dialogue, req: Requirements, total: int | None) -> dict[str, Any]:
    """What the result adds to the search's own fields: the request as understood in its conversation
    (the merged constraints, one sentence of them) and how many listings match."""
    return {
        # None: the question as asked (Answer's convention); else the merged request, one sentence
        "standalone_question": dialogue.standalone if dialogue.follow_up else None,
        "merged_requirements": req.summary(),
        "merged_constraints": constraints(req),
        "understood": describe_requirements(req),
        "conversation": dialogue.to_dict(),
        "total_matches": total,
    }
