"""Edits survive re-import, on every backend: ``index_documents`` of the same source keeps what the
owners did to every chunk whose source did not change, marks the others 「原文已更新」, re-attaches
an overlay to its paragraph when a section was inserted above it, and never removes chunks added
by hand or as FAQ entries."""

from __future__ import annotations

from curation.manual import MANUAL, manual_docs
from zhiwen.curation import NewChunk
from zhiwen.ingest.chunking import chunk_documents
from zhiwen.kb import KnowledgeBase

ACTOR = "fp-owner"


def reimport(kb: KnowledgeBase, edit: dict[str, str] | None = None, only: list[str] | None = None) -> None:
    kb.index_documents(manual_docs(edit, only), prune=True, progress=False)


def ids(kb: KnowledgeBase, query: str, mode: str = "hybrid", k: int = 5) -> list[str]:
    return [h.id for h in kb.search(query, mode=mode, top_k=k)]


def test_chunk_ids_are_stable_across_imports() -> None:
    first = [c.id for c in chunk_documents(manual_docs(), 800, 100)]
    again = [c.id for c in chunk_documents(manual_docs(), 800, 100)]
    assert first == again and len(set(first)) == len(first)


def test_unchanged_source_keeps_every_kind_of_curation(curated: KnowledgeBase) -> None:
    cur = curated.curation
    cur.update("policy#0", text="# 退货\n三十天内无理由退货。", actor=ACTOR)
    cur.update("policy#2", enabled=False, actor=ACTOR)
    cur.update("policy#1", questions=["东西坏了能换吗"], keywords=["售后换新"], actor=ACTOR)
    cur.update("recipes#1", enabled=False, actor=ACTOR)
    cur.delete("recipes#1", actor=ACTOR)
    faq = cur.add(
        NewChunk(doc_id="faq", chunk_id="faq#1", text="周末也发货。", questions=["周末发货吗"], origin="faq"),
        actor=ACTOR,
    )
    hand = cur.add(NewChunk(doc_id="guide", text="## 卸载\n运行 pip uninstall zhiwen。"), actor=ACTOR)
    before = {v.id: v for d in ("guide", "policy", "recipes", "faq") for v in cur.list_chunks(d)}
    report = curated.index_documents(manual_docs(), prune=True, progress=False)
    assert report.deleted_documents == 0
    after = {v.id: v for d in ("guide", "policy", "recipes", "faq") for v in cur.list_chunks(d)}
    assert {k: v.to_dict() | {"hits": 0} for k, v in after.items()} == {
        k: v.to_dict() | {"hits": 0} for k, v in before.items()
    }
    assert ids(curated, "三十天内无理由退货")[0] == "policy#0"
    assert "policy#2" not in ids(curated, "电子发票邮箱", k=10)
    assert ids(curated, "东西坏了能换吗")[0] == "policy#1"
    assert ids(curated, "售后换新", "bm25")[0] == "policy#1"
    assert "recipes#1" not in ids(curated, "番茄炒蛋", k=10)
    assert ids(curated, "周末发货吗")[0] == faq.id
    assert ids(curated, "pip uninstall")[0] == hand.id


def test_changed_source_keeps_the_edit_and_marks_it_stale(curated: KnowledgeBase) -> None:
    cur = curated.curation
    cur.update("guide#1", text="## 配置模型\n在设置页面填写模型地址。", actor=ACTOR)
    cur.update("guide#2", questions=["怎么上传文件"], actor=ACTOR)
    text = MANUAL["guide"][1].replace("config.toml", "settings.yaml").replace("Markdown 和 PDF", "Word")
    reimport(curated, {"guide": text})
    views = {v.id: v for v in cur.list_chunks("guide")}
    assert views["guide#1"].stale and views["guide#1"].edited and "设置页面" in views["guide#1"].text
    assert "settings.yaml" in (views["guide#1"].source_text or "")
    assert views["guide#2"].stale and views["guide#2"].questions == ("怎么上传文件",)
    assert "Word" in views["guide#2"].text
    assert not views["guide#0"].stale
    assert ids(curated, "设置页面填写模型地址")[0] == "guide#1"
    # reviewing the edit (editing again) clears the mark
    assert not cur.update("guide#1", text="## 配置模型\n在 settings.yaml 填写模型地址。", actor=ACTOR).stale


def test_a_section_inserted_above_moves_the_overlay_with_its_paragraph(curated: KnowledgeBase) -> None:
    cur = curated.curation
    cur.update("policy#1", enabled=False, actor=ACTOR)  # 换货
    cur.update("policy#2", questions=["发票在哪里看"], actor=ACTOR)
    text = MANUAL["policy"][1].replace("## 换货", "## 退款\n退款三个工作日内到账。\n\n## 换货")
    reimport(curated, {"policy": text})
    views = cur.list_chunks("policy")
    assert [v.text.splitlines()[0] for v in views] == ["# 退货", "## 退款", "## 换货", "## 发票"]
    by_head = {v.text.splitlines()[0]: v for v in views}
    assert not by_head["## 换货"].enabled and not by_head["## 换货"].stale
    assert by_head["## 发票"].questions == ("发票在哪里看",) and by_head["## 退款"].questions == ()
    assert ids(curated, "发票在哪里看")[0] == by_head["## 发票"].id
    assert by_head["## 换货"].id not in ids(curated, "质量问题换货", k=10)


def test_pruning_keeps_hand_made_and_faq_chunks(curated: KnowledgeBase) -> None:
    cur = curated.curation
    hand = cur.add(NewChunk(doc_id="recipes", text="## 凉拌黄瓜\n黄瓜拍碎加醋。"), actor=ACTOR)
    faq = cur.add(
        NewChunk(doc_id="faq", text="营业时间九点到五点。", questions=["几点开门"], origin="faq"), actor=ACTOR
    )
    cur.update("recipes#0", text="# 土豆炖牛肉\n改写的做法。", actor=ACTOR)
    report = curated.index_documents(manual_docs(only=["guide", "policy"]), prune=True, progress=False)
    assert report.deleted_documents == 0  # recipes holds a hand-made chunk: only its parsed ones go
    assert [v.id for v in cur.list_chunks("recipes")] == [hand.id]
    assert ids(curated, "黄瓜拍碎")[0] == hand.id
    assert ids(curated, "几点开门")[0] == faq.id
    assert not any(i.startswith("recipes#") and i != hand.id for i in ids(curated, "牛肉 番茄", k=10))


def test_deleted_documents_take_their_overlays(curated: KnowledgeBase) -> None:
    curated.curation.update("policy#2", enabled=False, actor=ACTOR)
    curated.delete_documents(["policy"])
    reimport(curated)
    assert curated.curation.get_chunk("policy#2").enabled


def test_a_reworded_paragraph_keeps_its_overlay_when_ids_shift(curated: KnowledgeBase) -> None:
    cur = curated.curation
    cur.update("policy#1", text="## 换货\n质量问题一个月内包换。", actor=ACTOR)
    text = MANUAL["policy"][1].replace("## 换货", "## 退款\n三日内到账。\n\n## 换货")
    text = text.replace("十五天", "二十天")
    reimport(curated, {"policy": text})
    by_head = {v.text.splitlines()[0]: v for v in cur.list_chunks("policy")}
    moved = by_head["## 换货"]
    assert moved.id == "policy#2" and moved.stale and "一个月" in moved.text
    assert "二十天" in (moved.source_text or "")
    assert not by_head["## 退款"].edited and not by_head["## 退款"].stale  # now at the old id


def test_a_vanished_paragraph_keeps_its_edit_under_a_free_id(curated: KnowledgeBase) -> None:
    cur = curated.curation
    cur.update("guide#2", text="## 导入文档\n站长改写：支持拖拽上传。", actor=ACTOR)
    text = MANUAL["guide"][1].split("## 导入文档")[0] + "## 常见错误\n端口被占用时换一个端口。\n"
    reimport(curated, {"guide": text})
    views = {v.id: v for v in cur.list_chunks("guide")}
    assert "常见错误" in views["guide#2"].text and not views["guide#2"].edited  # the new paragraph
    orphan = next(v for v in views.values() if "拖拽上传" in v.text)
    assert orphan.stale and orphan.id != "guide#2"
    assert [h.id for h in curated.search("拖拽上传", top_k=1)] == [orphan.id]


def test_an_unchanged_resync_writes_nothing_beside_faq_entries(curated: KnowledgeBase) -> None:
    curated.curation.add(
        NewChunk(doc_id="faq", chunk_id="faq#1", text="周末也发货。", questions=["周末发货吗"], origin="faq"),
        actor=ACTOR,
    )
    curated.curation.update("policy#2", enabled=False, actor=ACTOR)
    rev = curated.revision
    report = curated.index_documents(manual_docs(), prune=True, progress=False)
    assert not report.changed and curated.revision == rev
