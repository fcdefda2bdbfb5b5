"""Question analysis: expected answer types, shapes, cues, and typed spans in text."""

from __future__ import annotations

import pytest

from zhiwen.answer.question_types import analyse_question, answer_spans, has_cue, typed_spans


@pytest.mark.parametrize(
    ("question", "answer_type"),
    [
        ("《战国无双3》是由谁开发的？", "person"),
        ("哪家公司发布了这款手机", "person"),
        ("严秋华在哪一年退居幕后？", "date"),
        ("第七届香港立法会议员宣誓仪式的时间", "date"),
        ("广茂铁路全长多少公里？", "number"),
        ("印控克什米尔地区寺庙踩踏事故死亡人数", "number"),
        ("首趟RCEP班列的起点？", "place"),
        ("伊丽莎白二世的国葬将在哪里举行？", "place"),
        ("怎么导入文档？", None),
    ],
)
def test_expected_answer_type(question: str, answer_type: str | None) -> None:
    assert analyse_question(question).answer_type == answer_type


def test_content_drops_question_words() -> None:
    q = analyse_question("广茂铁路全长多少公里？")
    assert q.content == "广茂铁路全长公里"
    assert analyse_question("怎么导入文档？").shape == "how"
    assert analyse_question("支持哪些导入格式").shape == "list"


def test_typed_spans() -> None:
    assert typed_spans("公司全年营收为631亿美元，同比下降16%。", "number") == ["631亿美元", "16%"]
    assert typed_spans("共有十二人死亡", "number") == ["十二人"]
    # a date is not a number with a unit
    assert typed_spans("发布会30日在拉萨举行", "number") == []
    assert typed_spans("于2023年5月6日在伦敦举行", "date") == ["2023年", "5月", "6日"]
    assert "徐昂" in typed_spans("这对导演徐昂来说是个挑战", "person")


def test_spans_the_question_already_names_do_not_count() -> None:
    q = analyse_question("2022年全国棉花产量是多少？")
    assert answer_spans("2022年全国棉花产量597.7万吨。", q) == ["597.7万吨"]
    q = analyse_question("2022年发生了什么事？")
    assert answer_spans("2022年发生了很多事。", q) == []


def test_cues() -> None:
    q = analyse_question("盾柱木的别名是什么？")
    assert has_cue("盾柱木，别称双翼豆。", q) and not has_cue("盾柱木是豆科植物。", q)
    assert has_cue("因为化石揭示了新的品种。", analyse_question("为什么被降级？"))
