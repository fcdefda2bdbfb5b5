"""Table questions through generic QA: the cell in the lead, SQL offline and by the model, and
the catalogue in step with the KB."""

from __future__ import annotations

from pathlib import Path

import pytest
from table_fixtures import admission_page

from support.fake_openai import FakeOpenAI, Reply
from zhiwen.answer.qa import answer_question, plan_generic, stream_question
from zhiwen.kb import open_kb
from zhiwen.llm import OpenAIChatClient
from zhiwen.tables.answer import answer_from_tables
from zhiwen.tables.catalog import QueryFailed, TableCatalog


@pytest.fixture
def kb(zhiwen_home: Path, site: Path):  # type: ignore[no-untyped-def]
    kb = open_kb("scores", create=True, embedder="hash")
    kb.index_path(site, fmt="documents", progress=False, dense="skip")
    return kb


def test_a_cell_question_gets_the_cell_first(kb) -> None:  # type: ignore[no-untyped-def]
    ans = answer_question(kb, "2021年四川省物理类金融学类最低分是多少？", llm=None)
    assert ans.route == "table" and ans.citations[0].id == "2021-四川省.html"
    assert ans.answer.startswith(
        "2021年四川省物理类金融学类最低分是 **612**（《2021年四川省录取分数线》第 2 行"
    )
    table = ans.data["table"]
    assert table["kind"] == "cell" and table["rows"] == [["金融学类", "630", "618", "620", "612"]]
    assert table["highlight"] == [[0, 4]] and ans.has_offline_note and not ans.llm_used


def test_aggregates_offline_show_their_sql(kb) -> None:  # type: ignore[no-untyped-def]
    ans = answer_question(kb, "2023年四川省物理类哪个专业最低分最高？", llm=None)
    assert "**法学**（理工/物理类 最低 648）" in ans.answer.split("\n")[0]
    assert ans.data["table"]["kind"] == "sql" and "MAX(" in ans.data["table"]["sql"]
    count = answer_question(kb, "2023年甘肃省一共有几个专业？", llm=None)
    assert "共 **3** 个" in count.answer
    change = answer_question(kb, "2021到2023年四川省金融学类物理类最低分的变化", llm=None)
    assert "2021年 **612** → 2022年 **615** → 2023年 **610**" in change.answer


def test_the_model_writes_the_sql_and_a_bad_one_falls_back_visibly(kb, fake_llm: FakeOpenAI) -> None:  # type: ignore[no-untyped-def]
    llm = OpenAIChatClient(base_url=fake_llm.base_url, model="fake", backoff_base_s=0.01)
    catalog = TableCatalog.for_kb(kb)
    catalog.sync(kb)
    [t] = [t for t in catalog.tables() if t.doc_id == "2023-四川省.html"]
    fake_llm.script(Reply(f'```sql\nSELECT AVG("理工/物理类 最低") FROM "{t.name}"\n```'))
    ans = answer_question(kb, "2023年四川省物理类最低分的平均分是多少？", llm=llm)
    assert ans.llm_used and "**618.33**" in ans.answer and ans.data["table"]["sql"].startswith("SELECT AVG(")
    fake_llm.script(Reply(f'```sql\nDELETE FROM "{t.name}"\n```'))
    again = answer_question(kb, "2023年四川省物理类最低分的平均分是多少？", llm=llm)
    assert not again.llm_used and "618.33" in again.answer
    assert "只允许一条 SELECT 查询" in again.data["table"]["fallback_reason"]
    assert catalog.query(f'SELECT COUNT(*) FROM "{t.name}"', limit=5, timeout_ms=500).rows == [(3,)]


def test_the_catalogue_follows_reimport_and_delete(kb, site: Path) -> None:  # type: ignore[no-untyped-def]
    catalog = TableCatalog.for_kb(kb)
    catalog.sync(kb)
    assert len(catalog.tables()) == 4
    rows = [("法学", 700, 690, 710, 705)]
    (site / "2023-甘肃省.html").write_text(admission_page(2023, "甘肃省", rows), "utf-8")
    kb.index_path(site, fmt="documents", progress=False, dense="skip")
    catalog.sync(kb)
    [gansu] = [t for t in catalog.tables() if t.doc_id == "2023-甘肃省.html"]
    assert gansu.rows == 1
    kb.delete_documents(["2023-甘肃省.html"])
    catalog.sync(kb)
    assert {t.doc_id for t in catalog.tables()} == {
        "2021-四川省.html",
        "2022-四川省.html",
        "2023-四川省.html",
    }


def test_a_runaway_query_is_stopped_by_the_deadline(kb) -> None:  # type: ignore[no-untyped-def]
    catalog = TableCatalog.for_kb(kb)
    catalog.sync(kb)
    name = catalog.tables()[0].name
    endless = (
        f'WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT COUNT(*) FROM n, "{name}"'
    )
    with pytest.raises(QueryFailed, match="查询超时"):
        catalog.query(endless, limit=5, timeout_ms=100)
    with pytest.raises(QueryFailed):
        catalog.query(f'DELETE FROM "{name}"', limit=5, timeout_ms=100)


def test_streams_carry_the_table_answer(kb) -> None:  # type: ignore[no-untyped-def]
    events = list(stream_question(kb, "2022年四川省历史类哲学类最高分是多少", llm=None))
    assert [e.type for e in events] == ["sources", "delta", "done"]
    assert "**612**" in events[1].text and events[2].answer.route == "table"


def test_a_kb_without_tables_answers_as_before(zhiwen_home: Path, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "指南.md").write_text("# 安装指南\n\n用 pip 安装 zhiwen，然后运行 zhiwen demo。\n", "utf-8")
    kb = open_kb("plain", create=True, embedder="hash")
    kb.index_path(docs, fmt="markdown", progress=False, dense="skip")
    plan = plan_generic(kb, "怎么安装？")
    assert answer_from_tables(kb, "怎么安装？", plan.hits) is None
    assert answer_question(kb, "怎么安装？", llm=None).route == "general"
    assert not (kb.path / "tables.sqlite3").exists()
