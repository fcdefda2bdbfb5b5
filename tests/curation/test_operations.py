"""Curation operations on a KB, on every backend: each change searchable when the call returns.

Edit, disable/enable, delete, add (by hand and as an FAQ entry), questions, keywords, undo and
the change log, against the small manual in ``manual.py`` (``hash`` embedder: the dense branch
is lexical too, so both branches can be checked by the words of a text).
"""

from __future__ import annotations

import pytest

from zhiwen.curation import NewChunk
from zhiwen.errors import InvalidParameter, NotFound
from zhiwen.kb import KnowledgeBase

ACTOR = "fp-owner"
MODES = ("bm25", "dense", "hybrid")


def found(kb: KnowledgeBase, query: str, mode: str = "hybrid", k: int = 5) -> list[str]:
    return [h.id for h in kb.search(query, mode=mode, top_k=k)]


def test_edit_is_searchable_at_once_and_recorded(curated: KnowledgeBase) -> None:
    rev = curated.revision
    view = curated.curation.update(
        "policy#0", text="# 退货\n签收后三十天内无理由退货，运费全免。", actor=ACTOR
    )
    assert view.edited and "三十天" in view.text and "七天" in (view.source_text or "")
    assert curated.revision == rev + 1
    for mode in MODES:
        assert found(curated, "三十天无理由退货", mode)[0] == "policy#0"
    assert "七天内" not in curated.get_chunks(["policy#0"])[0].text
    change = curated.curation.changes(limit=1)[0]
    assert (change.action, change.actor, change.target) == ("edit", ACTOR, "policy#0")
    assert change.before["policy#0"]["text"] is None and "三十天" in change.after["policy#0"]["text"]


def test_disable_removes_from_every_search_and_enable_brings_it_back(curated: KnowledgeBase) -> None:
    assert found(curated, "电子发票邮箱")[0] == "policy#2"
    curated.curation.update("policy#2", enabled=False, actor=ACTOR)
    for mode in MODES:
        assert "policy#2" not in found(curated, "电子发票邮箱", mode, k=10)
    parents = curated.search_parents("电子发票邮箱")
    assert all("电子发票" not in p.document.text for p in parents)  # the curated parent
    listed = curated.curation.list_chunks("policy")
    assert [v.id for v in listed] == ["policy#0", "policy#1", "policy#2"]
    assert [v.enabled for v in listed] == [True, True, False]
    curated.curation.update("policy#2", enabled=True, actor=ACTOR)
    for mode in MODES:
        assert found(curated, "电子发票邮箱", mode)[0] == "policy#2"
    assert any("电子发票" in p.document.text for p in curated.search_parents("电子发票邮箱"))


def test_reenabling_needs_no_model_call(curated: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(curated.settings.embedding, "cache", False)
    curated.curation.update("guide#1", enabled=False, actor=ACTOR)
    calls: list[int] = []
    real = curated.embed_passages
    monkeypatch.setattr(curated, "embed_passages", lambda texts: calls.append(len(texts)) or real(texts))
    curated.curation.update("guide#1", enabled=True, actor=ACTOR)
    assert calls == []
    assert found(curated, "config.toml 大模型密钥", "dense")[0] == "guide#1"


def test_questions_find_their_chunk(curated: KnowledgeBase) -> None:
    question = "东西坏了可以拿去换一个吗"
    before = found(curated, question, "bm25", k=3)
    view = curated.curation.update("policy#1", questions=[question, "能换新的吗"], actor=ACTOR)
    assert view.questions == (question, "能换新的吗")
    for mode in MODES:
        ids = found(curated, question, mode, k=10)
        assert ids[0] == "policy#1", (mode, before, ids)
        assert not any("::q" in i for i in ids) and len(ids) == len(set(ids))
    hits = curated.search(question, top_k=3, filters={"kind": "manual"})
    assert hits[0].id == "policy#1" and hits[0].chunk.text.startswith("## 换货")
    curated.curation.update("policy#1", questions=[], actor=ACTOR)
    assert "policy#1" not in found(curated, "东西坏了拿去换一个", "bm25", k=10)[:1]


def test_keywords_weigh_in_the_lexical_branch(curated: KnowledgeBase) -> None:
    assert "guide#2" not in found(curated, "知识入库", "bm25", k=10)
    curated.curation.update("guide#2", keywords=["知识入库", "上传"], actor=ACTOR)
    assert found(curated, "知识入库", "bm25")[0] == "guide#2"
    assert curated.curation.get_chunk("guide#2").keywords == ("知识入库", "上传")


def test_add_by_hand_and_faq_entry_with_questions(curated: KnowledgeBase) -> None:
    manual = curated.curation.add(
        NewChunk(doc_id="policy", text="## 保修\n整机保修一年。", position=1.5), actor=ACTOR
    )
    assert manual.origin == "manual" and manual.id.startswith("policy#m")
    assert [v.id for v in curated.curation.list_chunks("policy")][2] == manual.id
    assert found(curated, "整机保修")[0] == manual.id
    faq = curated.curation.add(
        NewChunk(
            doc_id="faq",
            chunk_id="faq#1",
            text="支持七天无理由退货。",
            questions=["能退货吗", "买了不想要了怎么办"],
            origin="faq",
            parent_id="faq#1",
            extra={"分类": "售后"},
        ),
        actor=ACTOR,
    )
    assert faq.origin == "faq" and faq.questions == ("能退货吗", "买了不想要了怎么办")
    assert found(curated, "买了不想要了怎么办")[0] == "faq#1"
    assert "faq#1" in [p.document.id for p in curated.search_parents("买了不想要了怎么办")]
    with pytest.raises(InvalidParameter):
        curated.curation.add(NewChunk(doc_id="faq", chunk_id="faq#1", text="重复"), actor=ACTOR)
    with pytest.raises(InvalidParameter):
        curated.curation.add(NewChunk(doc_id="faq", text=" "), actor=ACTOR)


def test_delete(curated: KnowledgeBase) -> None:
    added = curated.curation.add(NewChunk(doc_id="guide", text="临时段落 紫罗兰"), actor=ACTOR)
    curated.curation.delete(added.id, actor=ACTOR)
    assert found(curated, "紫罗兰", "bm25") == []
    with pytest.raises(NotFound):
        curated.curation.get_chunk(added.id)
    curated.curation.delete("recipes#1", actor=ACTOR)
    assert "recipes#1" not in found(curated, "番茄炒蛋", k=10)
    assert [v.id for v in curated.curation.list_chunks("recipes")] == ["recipes#0"]
    with pytest.raises(NotFound):
        curated.curation.update("recipes#1", text="x", actor=ACTOR)
    curated.curation.undo(actor=ACTOR)
    assert found(curated, "番茄炒蛋")[0] == "recipes#1"


def test_undo_restores_the_chunk_and_refuses_out_of_order(curated: KnowledgeBase) -> None:
    original = curated.curation.get_chunk("guide#0")
    curated.curation.update("guide#0", text="# 安装\n用 uv 安装。", actor=ACTOR)
    curated.curation.update("guide#0", keywords=["部署"], actor=ACTOR)
    first, second = reversed(curated.curation.changes(limit=2))
    with pytest.raises(InvalidParameter):
        curated.curation.undo(first.id, actor=ACTOR)  # a later change touched the chunk
    curated.curation.undo(actor=ACTOR)
    curated.curation.undo(actor=ACTOR)
    assert curated.curation.get_chunk("guide#0") == original
    assert found(curated, "pip install", "bm25")[0] == "guide#0"
    assert [c.action for c in curated.curation.changes(limit=4)] == ["undo", "undo", "keywords", "edit"]
    with pytest.raises(InvalidParameter):
        curated.curation.undo(second.id, actor=ACTOR)  # already undone


def test_bad_input_is_a_clear_error(curated: KnowledgeBase) -> None:
    cur = curated.curation
    with pytest.raises(NotFound):
        cur.update("nope#0", enabled=False, actor=ACTOR)
    with pytest.raises(NotFound):
        cur.update("policy#0::q0", enabled=False, actor=ACTOR)
    with pytest.raises(InvalidParameter):
        cur.update("policy#0", actor=ACTOR)
    with pytest.raises(InvalidParameter):
        cur.update("policy#0", questions=["问" * 501], actor=ACTOR)
    with pytest.raises(InvalidParameter):
        cur.update("policy#0", keywords="退货", actor=ACTOR)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameter):
        cur.update("policy#0", text="   ", actor=ACTOR)
    with pytest.raises(NotFound):
        cur.list_chunks("no-such-doc")
    assert cur.changes() == []


def test_search_chunks_for_owners_includes_disabled_ones(curated: KnowledgeBase) -> None:
    curated.curation.update("policy#2", enabled=False, actor=ACTOR)
    got = curated.curation.search_chunks("电子发票")
    assert [(v.id, v.enabled) for v in got][:1] == [("policy#2", False)]
    assert curated.curation.search_chunks("退货", doc_id="policy")[0].id == "policy#0"


def test_hits_are_counted(curated: KnowledgeBase) -> None:
    curated.curation.update("guide#0", keywords=["安装"], actor=ACTOR)  # the curation file exists
    for _ in range(3):
        curated.search("pip install 安装", top_k=1)
    curated.curation.flush_hits()
    assert curated.curation.get_chunk("guide#0").hits == 3


def test_faq_entries_in_bulk_listed_deleted_and_restored(curated: KnowledgeBase) -> None:
    """What an FAQ import does: many entries (a chunk and its questions each) as one change."""
    cur = curated.curation
    entries = [
        NewChunk(
            doc_id="faq",
            chunk_id=f"faq#{i}",
            text=f"第{i}条答案：编号 a{i}x 的规定。",
            questions=[f"问题 q{i}x 怎么办", f"问法 r{i}x"],
            origin="faq",
            parent_id=f"faq#{i}",
            extra={"分类": "售后" if i % 2 else "物流"},
        )
        for i in range(600)
    ]
    views = cur.add_many(entries, actor=ACTOR, action="faq_import")
    assert len(views) == 600 and cur.changes(limit=1)[0].action == "faq_import"
    listed = cur.chunks_of_origin("faq")
    assert len(listed) == 600 and {v.extra["分类"] for v in listed} == {"售后", "物流"}
    assert found(curated, "问法 r417x")[0] == "faq#417"
    assert cur.delete_many([f"faq#{i}" for i in range(600)], actor=ACTOR) == 600
    assert cur.chunks_of_origin("faq") == [] and found(curated, "问法 r417x", "bm25") == []
    cur.undo(actor=ACTOR)
    assert len(cur.chunks_of_origin("faq")) == 600 and found(curated, "问法 r417x")[0] == "faq#417"
