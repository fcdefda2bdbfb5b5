"""What a property search returns: :class:`ListingsResult`, the listings shown as :class:`Listing`.

The property-search API's fields (``answer``, ``retrieved_properties`` with ``match_score``,
``match_percentage`` and ``match_reasons``) plus what the search read and did: the
requirements, the relaxations, the quality of the rule reading, the engine's parameters, the
timings, and the request as understood in its conversation. :class:`ListingsService` returns
one; the app's ``Answer.data`` is its :meth:`~pydantic.BaseModel.model_dump` and ``POST /ask``'s
``data`` the same fields (plus ``session_id``).

Example::

    >>> result = service.ask("浦东800万以内的两房", 3)            # doctest: +SKIP
    >>> result.retrieved_properties[0].match_percentage, result.llm_used   # doctest: +SKIP
    (92, False)
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Listing(BaseModel):
    """One listing shown: what the listings KB holds of it, and how well it matches."""

    model_config = ConfigDict(extra="forbid")

    id: str
    title: str
    location: str = Field(description="城市·区·板块")
    price: float | None = Field(None, description="总价（万）")
    city: str | None = None
    district: str | None = None
    bankuai: str | None = None
    xiaoqu: str | None = None
    area: float | None = Field(None, description="建筑面积（㎡）")
    rooms: int | None = None
    halls: int | None = None
    layout: str | None = None
    property_type: str | None = None
    floor: str | None = None
    floor_level: str | None = None
    total_floors: int | None = None
    build_year: int | None = None
    building_type: str | None = None
    decoration: str | None = None
    elevator: bool | None = None
    orientation: str | None = None
    unit_price: float | None = Field(None, description="单价（元/㎡）")
    match_score: float = Field(description="匹配度（0–1）")
    match_percentage: int = Field(description="匹配度（百分比）")
    match_reasons: list[str] = Field(description="匹配理由")
    relaxed: bool = Field(False, description="是否放宽了条件才入选")


class SearchQuality(BaseModel):
    """How well the rules read the question (:func:`~.quality.assess`), and whether the LLM read it too."""

    dimensions: list[str]
    complex_patterns: list[str]
    complexity: float
    dynamic_k: int = Field(description="每个检索分支取回的候选数")
    llm_extraction: bool = Field(description="是否用大模型补充理解了问题")


class ListingsResult(BaseModel):
    """One property search: the answer, the listings shown, and how they were found."""

    answer: str
    retrieved_properties: list[Listing]
    llm_used: bool
    extractive_reason: str | None = Field(None, description="未用大模型作答的原因")
    requirements: dict[str, Any] = Field(description="检索所用的条件（对话中为合并后的条件）")
    relaxed: list[str] = Field(default_factory=list, description="为凑够房源放宽的条件")
    quality: SearchQuality
    kb: str
    kb_revision: int
    params: dict[str, Any] = Field(default_factory=dict)
    cached: bool = False
    timings_ms: dict[str, float] = Field(default_factory=dict)
    standalone_question: str | None = Field(
        None, description="结合对话合并后的完整需求（一句话）；null：按原问题理解"
    )
    merged_requirements: dict[str, Any] = Field(default_factory=dict, description="合并后的全部条件")
    merged_constraints: dict[str, Any] = Field(
        default_factory=dict, description="合并后的条件（扁平：city、district、max_price_wan、rooms …）"
    )
    understood: str | None = Field(None, description="合并后的条件（中文一行）")
    conversation: dict[str, Any] = Field(default_factory=dict, description="本轮相对之前新增/替换/取消的条件")
    total_matches: int | None = Field(None, description="符合全部硬性条件的房源数（null：未统计）")


__all__ = ["Listing", "ListingsResult", "SearchQuality"]
