"""Stage 2: quality check, complexity and dynamic_k (:mod:`zhiwen.apps.listings.quality`)."""

from __future__ import annotations

from zhiwen.apps.listings.extract import assess, extract_rules


def test_assess_complexity_and_dynamic_k() -> None:
    simple = "浦东两房"
    complex_q = "要么在静安区要么在徐汇区，最好靠近地铁，性价比高一点，别太贵，适合有孩子的家庭"
    qs, qc = assess(simple, extract_rules(simple)), assess(complex_q, extract_rules(complex_q))
    assert not qs.needs_llm
    assert qc.needs_llm and "要么…要么" in qc.complex_patterns
    assert qc.dynamic_k > qs.dynamic_k
    assert 10 <= qs.dynamic_k <= 60 and 10 <= qc.dynamic_k <= 60
    assert 0 <= qs.complexity < qc.complexity <= 1


def test_unknown_negation_asks_the_llm() -> None:
    q = "浦东两房，远离垃圾站"
    quality = assess(q, extract_rules(q))
    assert quality.needs_llm and any("未识别的否定条件" in r for r in quality.reasons)


def test_new_fields_count_as_dimensions() -> None:
    req = extract_rules("单价6万以下的板楼，不要顶楼")
    assert req.dimensions() == ["price_range", "special_requirements", "negations"]
    assert not assess("单价6万以下的板楼，不要顶楼", req).needs_llm
