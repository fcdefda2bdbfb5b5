"""A KB's dictionary and synonyms: whole words per KB (never rjieba's process-wide dictionary),
query expansion, re-tokenising in the background while searches go on, undo, CSV import."""

from __future__ import annotations

import threading

import pytest
import rjieba

from curation.conftest import MakeKB
from zhiwen.curation import parse_synonyms
from zhiwen.curation.lexicon import KBTokenizer, Lexicon
from zhiwen.documents import Document
from zhiwen.errors import InvalidParameter
from zhiwen.kb import KnowledgeBase
from zhiwen.text.tokenizer import Tokenizer

ACTOR = "fp-owner"
WORD = "湾流七号"  # a product name jieba does not know: cut into pieces


def ids(kb: KnowledgeBase, query: str, mode: str = "bm25", k: int = 5) -> list[str]:
    return [h.id for h in kb.search(query, mode=mode, top_k=k)]


def test_dictionary_words_stay_whole_per_kb_only(make_kb: MakeKB) -> None:
    a, b = make_kb(), make_kb()
    doc = Document(id="prod", text=f"# 产品\n{WORD}支持离线问答。\n\n## 其他\n七号线在湾流路。", title="产品")
    for kb in (a, b):
        kb.index_documents([doc], prune=False, progress=False)
    assert WORD not in a.tokenizer.tokenize(f"{WORD}怎么用")
    a.curation.set_words([WORD], actor=ACTOR, background=False)
    assert WORD in a.tokenizer.tokenize(f"{WORD}怎么用")
    assert WORD not in b.tokenizer.tokenize(f"{WORD}怎么用")  # the other KB does not see it
    assert not rjieba.has_word(WORD) and WORD not in Tokenizer().tokenize(WORD)
    assert a.curation.words() == (WORD,)
    # the index followed: the whole word is a token of the product chunk, in this KB only
    assert [cid for cid, _ in a.store.search_text([WORD], k=5)] == ["prod#0"]
    assert b.store.search_text([WORD], k=5) == []
    assert ids(a, WORD)[0] == "prod#0"
    scores = {h.id: h.score for h in a.search(WORD, mode="bm25", top_k=5)}
    assert scores["prod#0"] > scores.get("prod#1", 0.0)


def test_retokenizing_runs_behind_searches(make_kb: MakeKB) -> None:
    kb = make_kb()
    kb.index_documents(
        [Document(id=f"d{i}", text=f"第{i}段：{WORD}的说明。", title=f"t{i}") for i in range(40)],
        prune=False,
        progress=False,
    )
    kb.curation.set_words([WORD], actor=ACTOR)  # background
    stop = threading.Event()
    errors: list[BaseException] = []

    def search() -> None:
        while not stop.is_set():
            try:
                kb.search(f"{WORD}说明", top_k=3)
            except BaseException as exc:
                errors.append(exc)

    reader = threading.Thread(target=search)
    reader.start()
    thread = kb.curation._retokenizer
    if thread is not None:
        thread.join(timeout=60)
    stop.set()
    reader.join()
    assert not errors
    assert kb.curation.db.meta("tokens_pending") is None
    assert len(kb.store.search_text([WORD], k=50)) == 40


def test_synonyms_expand_queries(curated: KnowledgeBase) -> None:
    assert "recipes#0" not in ids(curated, "洋芋", k=10)  # the passage says 土豆 and 马铃薯
    curated.curation.set_groups(
        [["番茄", "西红柿"], ["土豆", "马铃薯", "洋芋"]], actor=ACTOR, background=False
    )
    assert ids(curated, "洋芋炖牛肉")[0] == "recipes#0"
    assert ids(curated, "番茄怎么炒")[0] == "recipes#1"
    assert curated.curation.groups() == (("番茄", "西红柿"), ("土豆", "马铃薯", "洋芋"))
    curated.curation.undo(actor=ACTOR)
    assert curated.curation.groups() == ()
    assert "recipes#0" not in ids(curated, "洋芋", k=10)


def test_synonym_groups_are_checked(curated: KnowledgeBase) -> None:
    with pytest.raises(InvalidParameter, match="两个"):
        curated.curation.set_groups([["土豆"]], actor=ACTOR)
    with pytest.raises(InvalidParameter) as err:
        curated.curation.set_groups([["土豆", "马铃薯"], ["洋芋", "土豆"]], actor=ACTOR)
    assert "第 1 组和第 2 组" in err.value.message
    groups = parse_synonyms("标准词,同义词1,同义词2\n土豆,马铃薯,洋芋\n西红柿,番茄\n".encode("gb18030"))
    assert curated.curation.set_groups(groups, actor=ACTOR, background=False) is not None
    assert curated.curation.set_groups(groups, actor=ACTOR) is None  # the same groups: no change


def test_undo_of_a_dictionary_change_and_out_of_order(curated: KnowledgeBase) -> None:
    cur = curated.curation
    cur.set_words(["知识问答"], actor=ACTOR, background=False)
    first = cur.changes(limit=1)[0]
    cur.set_words(["知识问答", WORD], actor=ACTOR, background=False)
    with pytest.raises(InvalidParameter):
        cur.undo(first.id, actor=ACTOR)
    cur.undo(actor=ACTOR)
    assert cur.words() == ("知识问答",)
    cur.undo(actor=ACTOR)
    assert cur.words() == ()


def test_lexicon_reaches_a_reopened_kb(curated: KnowledgeBase) -> None:
    curated.curation.set_words([WORD], actor=ACTOR, background=False)
    curated.curation.set_groups([["土豆", "洋芋"]], actor=ACTOR, background=False)
    curated.curation.update("guide#2", keywords=["入库"], actor=ACTOR)
    curated.close()
    from zhiwen.kb import open_kb

    again = open_kb(curated.name)
    lexicon = again.tokenizer.lexicon
    assert lexicon.words == (WORD,) and lexicon.groups == (("土豆", "洋芋"),)
    assert lexicon.keywords == {"guide#2": ("入库",)}


def test_kb_tokenizer_without_words_is_the_plain_tokenizer() -> None:
    text = "上海浦东机场怎么去？Model-X 支持 3.11"
    assert KBTokenizer().tokenize(text) == Tokenizer().tokenize(text)
    tok = KBTokenizer()
    tok.use(Lexicon.build(words=["浦东机场"]))
    got = tok.tokenize(text)
    assert got[: len(Tokenizer().tokenize(text))] == Tokenizer().tokenize(text)
    assert got.count("浦东机场") == 1
