"""English questions over Chinese passages: read in Chinese, judged by the same lexical floor."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zhiwen.answer import crosslingual
from zhiwen.answer.crosslingual import is_cross_lingual, question_for, read_across, script_of
from zhiwen.answer.relevance import relevance_verdict
from zhiwen.answer.stage import answer_from_parents
from zhiwen.config import Settings
from zhiwen.documents import Chunk, Document, ParentHit, SearchHit

SAMPLE_KB = Path(__file__).resolve().parents[2] / "src" / "zhiwen" / "sample_kb"
FLOOR = Settings().answer.relevance_floor


def manual_parent(stem: str, section: str, score: float = 1.0) -> ParentHit:
    """A document of the bundled manual, its matched chunk the named section (as retrieval finds it)."""
    text = (SAMPLE_KB / f"{stem}.md").read_text("utf-8")
    title = text.splitlines()[0].lstrip("# ").strip()
    start = text.index(section)
    chunk = Chunk(id=f"{stem}#0", doc_id=stem, text=text[start : start + 400], parent_id=stem)
    return ParentHit(Document(id=stem, text=text, title=title), score, [SearchHit(chunk, score)])


def import_parents() -> list[ParentHit]:
    return [
        manual_parent("02_建立知识库与导入格式", "## 导入文档"),
        manual_parent("10_常见问题", "## 导入相关", 0.7),
        manual_parent("01_安装与快速开始", "## 安装", 0.58),
    ]


def faq_parents() -> list[ParentHit]:
    return [
        manual_parent("10_常见问题", "## 运行相关"),
        manual_parent("09_评测与基准", "## 评测命令", 0.58),
        manual_parent("07_离线模式与抽取式回答", "## 什么时候使用抽取式回答", 0.53),
    ]


@given(st.text(alphabet="知识库导入文档怎么配置大模型", min_size=1, max_size=30))
def test_chinese_text_is_chinese(text: str) -> None:
    assert script_of(text) == "cjk"
    assert not is_cross_lingual(text, ["知识库"])


def test_a_chinese_question_with_codes_stays_chinese() -> None:
    assert script_of("怎么导入 PDF 文件？") == "cjk"
    assert not is_cross_lingual("怎么导入 PDF 文件？", ["导入 PDF"])
    assert not is_cross_lingual("PDF?", ["导入 PDF"])  # a code alone is not an English question
    assert is_cross_lingual("How do I import PDF files?", ["目录里的 PDF 文件都会导入"])
    assert not is_cross_lingual("How do I import PDF files?", ["Import PDF files with zhiwen index."])


def test_an_english_question_is_read_in_the_passages_words() -> None:
    passages = [p.matched_chunks[0].chunk.text for p in import_parents()]
    reading = read_across("How do I import PDF files?", passages)
    assert reading is not None
    assert reading.text.startswith("怎么")  # how → 怎么: the question's shape survives
    assert {c.term for c in reading.concepts} >= {"导入", "pdf", "文件"}
    assert all(c.found for c in reading.concepts)
    # a phrase the dictionary knows stays one term: knowledge base → 知识库
    deleted = read_across("How do I delete a knowledge base?", ["删除知识库：删除数据目录下对应的子目录"])
    assert deleted is not None and [c.term for c in deleted.concepts] == ["删除", "知识库"]


def test_a_chinese_question_is_left_as_it_is() -> None:
    assert read_across("怎么导入文档？", ["导入文档"]) is None
    assert question_for("怎么导入文档？", ["导入文档"]).text == "怎么导入文档？"


def test_an_english_question_whose_passage_was_found_is_answered() -> None:
    ans = answer_from_parents("How do I import PDF files?", import_parents(), floor=FLOOR)
    assert ans.answerable
    assert "PDF" in ans.lead and "[1]" in ans.lead


@pytest.mark.parametrize(
    "question",
    [
        "Can purple elephants play basketball on the moon?",
        "Is it going to rain tomorrow?",
        "How do I bake sourdough bread?",
        "What is the capital of France?",
        "What is the meaning of life?",  # 含义 is there (指标含义), 生活 is not: half its words
        "How do I fix my car?",
    ],
)
def test_english_nonsense_is_still_turned_away(question: str) -> None:
    ans = answer_from_parents(question, faq_parents(), floor=FLOOR)
    assert not ans.answerable
    verdict = relevance_verdict(question, [h for p in faq_parents() for h in p.matched_chunks])
    assert not verdict.relevant


def test_without_the_dictionary_english_stays_lexical(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(crosslingual, "glossary", lambda: None)
    assert read_across("How do I import PDF files?", ["目录里的 PDF 文件都会导入"]) is None
    ans = answer_from_parents("How do I import PDF files?", import_parents(), floor=FLOOR)
    assert not ans.answerable  # the old behaviour, never an error


@given(st.sampled_from(["files", "imported", "importing", "countries", "stopped", "knives"]))
def test_lemmas_keep_the_word_first(word: str) -> None:
    forms = crosslingual._lemmas(word)
    assert forms[0] == word and len(forms) == len(set(forms))
    assert any(f in ("file", "import", "country", "stop", "knife") for f in forms)


def test_a_name_in_pinyin_is_read_as_the_passage_writes_it() -> None:
    passages = ["1995年8月，王家瑞任中共山东省青岛市委常委。", "耶律乙辛在清宁五年被封为赵王。"]
    reading = read_across("What position did Wang Jiarui hold in August 1995?", passages)
    assert reading is not None and "王家瑞" in reading.text
    yelu = read_across("When was Yelü Yixin made Prince of Zhao?", passages)
    assert yelu is not None and "耶律乙辛" in yelu.text and yelu.text.startswith("耶律乙辛")
    # one syllable alone (Qiu) reads as a dozen characters: it stays as written
    qiu = read_across("How many people have the surname Qiu?", ["丘姓人口约四百六十七万"])
    assert qiu is not None and "qiu" in qiu.text.lower()


def test_question_words_are_said_in_chinese_only_near_the_start() -> None:
    passages = ["契税法：婚姻关系存续期间夫妻之间变更土地、房屋权属，免征契税。"]
    question = "Is deed tax exempted when a house is transferred between husband and wife?"
    reading = read_across(question, passages)
    assert reading is not None and "什么时候" not in reading.text and reading.text.endswith("吗？")
    year = read_across("In which year did clinical psychology begin?", ["临床心理学始于1896年。"])
    assert year is not None and year.text.endswith("哪一年？") and "年度" not in year.text



def test_a_reading_half_of_whose_words_are_missing_is_not_supported() -> None:
    passages = ["## 指标含义\n\n前 10 条结果覆盖了多少比例的相关段落。"]
    meaning = read_across("What is the meaning of life?", passages)
    assert meaning is not None and not meaning.supported
    pdf = read_across("How do I import PDF files?", ["目录里的 PDF 文件都会按内容识别类型后导入知识库"])
    assert pdf is not None and pdf.supported
