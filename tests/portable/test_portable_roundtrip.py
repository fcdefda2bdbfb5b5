"""Export and import across backends: same answers, curation kept, re-embedding when needed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from portable.conftest import top10
from zhiwen.config import reset_settings_cache
from zhiwen.kb import KnowledgeBase, list_kbs, open_kb
from zhiwen.kb.faq import faq_entries
from zhiwen.portable import KnowledgeBaseExists, export_kb, import_bundle


def test_round_trip_embedded_postgres_qdrant_embedded_keeps_the_top_10(
    curated_kb: KnowledgeBase, backend_url: Callable[[str], str], tmp_path: Path
) -> None:
    want = top10(curated_kb)
    kb, hops = curated_kb, [("on_pg", "postgres"), ("on_qdrant", "qdrant"), ("back", "embedded")]
    for name, backend in hops:
        bundle = tmp_path / f"{kb.name}.zwkb"
        export_kb(kb, bundle)
        report = import_bundle(bundle, name=name, backend=backend_url(backend))
        assert report.vectors_reused == report.chunks and report.embedded == 0
        kb = open_kb(name)
        assert kb.config.store.split("://")[0] == backend_url(backend).split("://")[0]
        assert kb.store.count() == curated_kb.store.count()
    assert top10(kb) == want


@pytest.mark.parametrize("backend", ["embedded", "postgres", "qdrant"])
def test_an_import_keeps_everything_the_owners_curated(
    curated_kb: KnowledgeBase, backend_url: Callable[[str], str], backend: str, tmp_path: Path
) -> None:
    export_kb(curated_kb, tmp_path / "m.zwkb")
    import_bundle(tmp_path / "m.zwkb", name="copy", backend=backend_url(backend))
    kb = open_kb("copy")
    cur = kb.curation
    assert cur.get_chunk("guide#0").text == "运行 pip install zhiwen 即可安装，需要 Python 3.12。"
    assert cur.get_chunk("guide#0").edited
    assert not cur.get_chunk("policy#2").enabled
    assert cur.get_chunk("policy#0").questions == ("东西不想要了怎么办",)
    assert cur.get_chunk("policy#0").keywords == ("七天无理由",)
    assert cur.words() == ("知识库管理员",)
    assert cur.groups() == (("土豆", "马铃薯", "洋芋"),)
    assert [e.question for e in faq_entries(kb)] == ["知识库管理员是谁？"]
    assert len(cur.changes(limit=100)) == len(curated_kb.curation.changes(limit=100))
    # a question row finds its chunk, an undo still works on the copy
    assert kb.search("东西不想要了怎么办", top_k=1)[0].chunk.id == "policy#0"
    cur.update("policy#2", actor="t", enabled=True)
    assert cur.get_chunk("policy#2").enabled


def test_an_existing_kb_is_refused_without_replace_and_swapped_with_it(
    curated_kb: KnowledgeBase, tmp_path: Path
) -> None:
    export_kb(curated_kb, tmp_path / "m.zwkb")
    other = open_kb("other", create=True, embedder="hash")
    from curation.manual import manual_docs

    other.index_documents(manual_docs(only=["recipes"]), progress=False)
    with pytest.raises(KnowledgeBaseExists) as err:
        import_bundle(tmp_path / "m.zwkb", name="other")
    assert "--replace" in err.value.message
    assert open_kb("other").store.count() == other.store.count()
    old_revision = other.revision
    report = import_bundle(tmp_path / "m.zwkb", name="other", replace=True)
    assert report.replaced
    swapped = open_kb("other")
    assert swapped.revision > old_revision
    assert top10(swapped) == top10(curated_kb)
    assert sorted(list_kbs()) == ["manual", "other"]


def test_another_embedder_re_embeds_and_a_re_run_resumes_from_the_cache(
    curated_kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    export_kb(curated_kb, tmp_path / "m.zwkb")
    monkeypatch.setenv("ZHIWEN_EMBEDDING__DIM", "64")  # the hash embedder at another dimension
    reset_settings_cache()
    report = import_bundle(tmp_path / "m.zwkb", name="small")
    kb = open_kb("small")
    assert kb.config.dim == 64 and report.vectors_reused == 0
    assert report.embedded == kb.store.count() == kb.store.vector_count()
    assert kb.search("退货运费谁承担", top_k=1)[0].chunk.doc_id == "policy"
    again = import_bundle(tmp_path / "m.zwkb", name="small2")
    assert again.embedded == 0  # every vector came from the home's embedding cache
    assert open_kb("small2").store.vector_count() == kb.store.count()


def test_a_kb_exported_before_its_vectors_were_filled_gets_them_on_import(home: Path, tmp_path: Path) -> None:
    from curation.manual import manual_docs

    kb = open_kb("lexical", create=True, embedder="hash")
    kb.index_documents(manual_docs(), progress=False, dense="skip")
    assert kb.store.vector_count() == 0
    export_kb(kb, tmp_path / "l.zwkb")
    report = import_bundle(tmp_path / "l.zwkb", name="filled")
    filled = open_kb("filled")
    assert report.embedded == filled.store.count() == filled.store.vector_count()
