"""The extractive answering stage: lead first, structure kept, honest below the relevance floor."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zhiwen.answer.compose import MAYBE_HEADING, NOT_FOUND_LEAD, RELATED_HEADING
from zhiwen.answer.relevance import calibrate_floor, floor_for, rejection_rates
from zhiwen.answer.stage import AnswerOptions, answer_from_parents, excerpt
from zhiwen.config import Settings
from zhiwen.documents import Chunk, Document, ParentHit, SearchHit


def parent(doc_id: str, text: str, title: str = "", score: float = 1.0, section: str = "") -> ParentHit:
    doc = Document(id=doc_id, text=text, title=title)
    chunk = Chunk(id=f"{doc_id}#0", doc_id=doc_id, text=text, parent_id=doc_id, metadata={"section": section})
    return ParentHit(doc, score, [SearchHit(chunk, score)])


FISH = parent(
    "fish",
    "溪银汉鱼为银汉鱼科的其中一种，是溪银汉鱼属下的唯一一种。本鱼分布于澳洲东部的溪流。"
    "体长可达10公分，体侧有一条银色纵带。栖息于水流缓慢的河段，以小型甲壳类为食。",
    title="溪银汉鱼",
)
OTHER = parent(
    "other", "美洲似银汉鱼为辐鳍鱼纲银汉鱼目银汉鱼科的其中一种。分布于北美洲。", "美洲似银汉鱼", 0.6
)

MANUAL = """# 建立知识库

## 导入文档

用 `zhiwen index` 命令把目录导入知识库：

```bash
zhiwen index --kb manual ./docs
```

## 支持的格式

支持以下几种格式：

- Markdown 目录：按标题切块
- BEIR 评测格式：每条段落一个检索单元
- CSV 记录：每行一条记录

## 参数

| 参数 | 说明 |
|---|---|
| --kb | 知识库名称 |
| --format | 导入格式，默认自动识别 |
"""


def manual(score: float = 1.0) -> ParentHit:
    return parent("manual", MANUAL, "建立知识库", score, "建立知识库 > 导入文档")


def test_the_answer_sentence_leads_and_is_cited() -> None:
    ans = answer_from_parents("溪银汉鱼的体长是多少？", [FISH, OTHER], floor=0.0)
    assert ans.answerable
    assert ans.text.startswith(ans.lead)
    assert "体长可达10公分" in ans.lead and ans.lead.endswith("[1]") and ans.cited == [1]
    assert len(ans.lead) <= 210
    assert "10公分" in ans.text[:200]


def test_a_date_question_prefers_a_sentence_with_a_date() -> None:
    doc = parent(
        "p",
        "严秋华是香港演员，曾参演多部电视剧。她在1993年退居幕后，转任监制。此后她多次获奖。",
        title="严秋华",
    )
    ans = answer_from_parents("严秋华在哪一年退居幕后？", [doc], floor=0.0)
    assert "1993年" in ans.lead


def test_an_intro_sentence_brings_its_code_block() -> None:
    ans = answer_from_parents("怎么把目录导入知识库？", [manual()], floor=0.0)
    # the marker right after the lead's words, the code fenced below it
    assert (
        ans.lead
        == "用 `zhiwen index` 命令把目录导入知识库：[1]\n\n```bash\nzhiwen index --kb manual ./docs\n```"
    )
    assert "##" not in ans.text
    # headings are context, not inline markup
    assert "- [1] 建立知识库 › 导入文档" in ans.text and RELATED_HEADING in ans.text


def test_lists_stay_lists_and_tables_stay_tables() -> None:
    ans = answer_from_parents("支持哪些格式？", [manual()], floor=0.0)
    assert ans.lead == (
        "支持以下几种格式：[1]\n\n"
        "- Markdown 目录：按标题切块\n- BEIR 评测格式：每条段落一个检索单元\n- CSV 记录：每行一条记录"
    )
    table = answer_from_parents("--format 参数是什么意思？", [manual()], floor=0.0)
    # no intro sentence: the section's heading introduces the table, as context
    assert table.lead.startswith("**参数**[1]\n\n| 参数 | 说明 |\n|---|---|\n")
    assert "| --format | 导入格式，默认自动识别 |" in table.lead
    bare = parent("t", "# 参数表\n\n| 参数 | 说明 |\n|---|---|\n| --kb | 知识库名称 |\n", title="参数表")
    lead = answer_from_parents("--kb 参数是什么？", [bare], floor=0.0).lead
    assert lead.endswith("| --kb | 知识库名称 |\n\n[1]")  # nothing to hang it on: its own line


def test_long_sentences_are_trimmed_around_the_question() -> None:
    long = "，".join(f"第{i}个无关的分句写了一些别的事情" for i in range(12))
    doc = parent("long", f"{long}，其中长江全长6300公里，{long}。", title="河流")
    ans = answer_from_parents("长江全长多少公里？", [doc], floor=0.0)
    assert "6300公里" in ans.lead and "……" in ans.lead
    assert len(ans.lead) <= 210


def test_below_the_floor_the_answer_says_so() -> None:
    ans = answer_from_parents("紫色的大象会在月球上打篮球吗", [manual(), FISH], floor=0.5)
    assert not ans.answerable and ans.relevance < 0.5
    assert ans.text.startswith(NOT_FOUND_LEAD) and MAYBE_HEADING in ans.text
    assert "- [1]" in ans.text or "- [2]" in ans.text  # the closest passages, cited


def test_nothing_retrieved() -> None:
    ans = answer_from_parents("任何问题", [], floor=0.3)
    assert not ans.answerable and ans.text == NOT_FOUND_LEAD and ans.relevance == 0.0


def test_relevance_separates_related_from_unrelated() -> None:
    related = answer_from_parents("溪银汉鱼的体长是多少？", [FISH], floor=0.0).relevance
    unrelated = answer_from_parents("溪银汉鱼的体长是多少？", [manual()], floor=0.0).relevance
    assert 0.0 <= unrelated < related <= 1.0


def test_options_switch_levers_off() -> None:
    options = AnswerOptions()
    ans = answer_from_parents("溪银汉鱼的体长是多少？", [FISH], floor=0.0, options=options)
    assert ans.seconds >= 0 and ans.floor == 0.0


def test_floor_per_kb_and_default() -> None:
    settings = Settings(answer={"relevance_floor": 0.4})
    assert floor_for({}, settings) == 0.4
    assert floor_for({"relevance_floor": 0.7}, settings) == 0.7
    assert floor_for({"relevance_floor": 3}, settings) == 1.0  # clamped
    for bad in ("0.7", None, True, math.nan):
        assert floor_for({"relevance_floor": bad}, settings) == 0.4


@given(st.lists(st.floats(0, 1), min_size=1, max_size=60), st.floats(0.5, 1.0))
def test_calibrated_floor_keeps_the_wanted_share(scores: list[float], keep: float) -> None:
    floor = calibrate_floor(scores, keep=keep)
    kept, _ = rejection_rates(scores, [], floor)
    assert kept >= keep - 1e-9
    assert floor in scores


def test_rejection_rates() -> None:
    assert rejection_rates([0.9, 0.8, 0.2], [0.1, 0.6], 0.5) == pytest.approx((2 / 3, 0.5))


def test_excerpt_is_the_part_that_answers() -> None:
    text = (
        "外国人入境应当向驻外签证机关申请办理签证，但免办签证的除外。"
        "部分国家的外国人过境中国可享受二百四十小时免签停留，无需办理签证。停留期间不得离开规定区域。"
    )
    out = excerpt("过境免签可以停留多久？", "过境免签", text, max_chars=60)
    assert out.startswith("部分国家的外国人过境中国可享受二百四十小时免签停留") and len(out) <= 62
    short = excerpt("过境免签可以停留多久？", "过境免签", text, max_chars=30)
    assert "二百四十小时" in short and short.endswith("……")
    assert excerpt("任何问题", "空", "") == ""


def test_an_excerpt_intro_brings_its_numbered_items() -> None:
    law = (
        "第二十二条 外国人有下列情形之一的，可以免办签证：\n\n（一）持有效的外国人居留证件的；\n\n"
        "（二）过境前往第三国，在中国境内停留不超过二十四小时且不离开口岸的。\n\n"
        "第二十三条 有下列情形之一的外国人需要临时入境的，应当申请办理临时入境手续：\n\n"
        "（一）外国船员登陆港口的。"
    )
    got = excerpt("外国人什么情况下可以免办签证？", "出境入境管理法", law, max_chars=200)
    assert got.startswith("第二十二条") and "（二）过境前往第三国" in got
    assert "第二十三条" not in got  # the enumeration ended


def test_an_intro_without_its_block_does_not_join_the_lead() -> None:
    offline = parent(
        "offline",
        "没有配置大模型时，知问使用抽取式回答，同样可以工作。抽取式回答会标明出处。",
        title="离线模式",
    )
    ollama = parent(
        "ollama",
        "没有大模型的机器可以用 Ollama 在本机运行模型，把地址指向本机即可：\n\n"
        "```bash\nexport ZHIWEN_LLM__BASE_URL=http://127.0.0.1:11434/v1\n```\n",
        title="配置大模型",
        score=0.9,
    )
    ans = answer_from_parents("没有大模型能用吗？", [offline, ollama], floor=0.0)
    assert "抽取式回答" in ans.lead
    assert "即可：" not in ans.lead  # cut off from the command it introduces


def test_a_reference_under_another_heading_speaks_of_that_heading() -> None:
    fusion = parent(
        "fusion",
        "# 结果融合\n\n## 倒数排名融合（RRF）\n\nRRF 只看名次不看分数，按各路结果的名次合并。\n\n"
        "## 归一化加权融合\n\n先把分数归一化，再按权重相加。在我们的评测上，这种方式略优于 RRF 融合。\n",
        title="结果融合",
    )
    ans = answer_from_parents("什么是RRF融合？", [fusion], floor=0.0)
    assert ans.lead.startswith("RRF 只看名次")
    assert "这种方式" not in ans.lead
