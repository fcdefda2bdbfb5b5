"""Properties of curation on the embedded store (hypothesis): any sequence of edits, disables,
enables, questions, keywords, deletes and undos leaves every search consistent with the
overlays; undo restores exactly what was there before."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from curation.conftest import MakeKB
from zhiwen.errors import InvalidParameter, NotFound
from zhiwen.kb import KnowledgeBase

ACTOR = "fp-prop"
DOCS = ("guide", "policy", "recipes")
CHUNKS = ("guide#0", "guide#1", "guide#2", "policy#0", "policy#1", "policy#2", "recipes#0", "recipes#1")
KINDS = ("edit", "disable", "enable", "questions", "keywords", "delete", "undo")
OPS = st.lists(st.tuples(st.sampled_from(KINDS), st.sampled_from(CHUNKS)), min_size=1, max_size=6)
_marks = itertools.count()


def marker() -> str:
    return f"mk{next(_marks)}zz"  # one Latin token no other text has


def apply(kb: KnowledgeBase, kind: str, cid: str) -> None:
    """One operation; refusals (a deleted chunk, nothing to undo, an out-of-order undo) are fine."""
    cur = kb.curation
    try:
        if kind == "edit":
            cur.update(cid, text=f"改写 {marker()} 的段落", actor=ACTOR)
        elif kind in ("disable", "enable"):
            cur.update(cid, enabled=kind == "enable", actor=ACTOR)
        elif kind == "questions":
            cur.update(cid, questions=[f"问 {marker()}", f"又问 {marker()}"], actor=ACTOR)
        elif kind == "keywords":
            cur.update(cid, keywords=[marker()], actor=ACTOR)
        elif kind == "delete":
            cur.delete(cid, actor=ACTOR)
        else:
            cur.undo(actor=ACTOR)
    except (NotFound, InvalidParameter):
        pass


def views(kb: KnowledgeBase) -> dict[str, Any]:
    out = {}
    for doc in DOCS:
        with contextlib.suppress(NotFound):
            out.update((v.id, dataclasses.replace(v, hits=0)) for v in kb.curation.list_chunks(doc))
    return out


def bm25(kb: KnowledgeBase, query: str) -> list[str]:
    return [h.id for h in kb.search(query, mode="bm25", top_k=20)]


def check_consistent(kb: KnowledgeBase) -> None:
    listed = views(kb)
    want_rows: set[str] = set()
    for cid, v in listed.items():
        words = [
            w for w in [*v.text.split(), *v.keywords, *" ".join(v.questions).split()] if w.startswith("mk")
        ]
        if v.enabled:
            want_rows.add(cid)
            want_rows.update(f"{cid}::q{i}" for i in range(len(v.questions)))
            assert kb.get_chunks([cid])[0].text == v.text
            for w in words:
                assert bm25(kb, w)[:1] == [cid], (cid, w)
        else:
            for w in words:
                assert cid not in bm25(kb, w)
            assert cid not in [h.id for h in kb.search(v.text, mode="dense", top_k=20)]
    assert set(kb.store.list_chunk_ids()) == want_rows
    for query in ("退货 运费", "安装 配置", "牛肉 番茄"):
        got = [h.id for h in kb.search(query, top_k=20)]
        assert len(got) == len(set(got)) and not any("::q" in i for i in got)
        assert all(listed[i].enabled for i in got)


def snapshot(kb: KnowledgeBase) -> tuple[Any, ...]:
    ids = sorted(kb.store.list_chunk_ids())
    rows = [(c.id, c.text, c.metadata) for c in kb.store.get_chunks(ids)]
    parents = [(p.id, p.text) for p in kb.store.get_parents(list(DOCS))]
    scores = {q: kb.store.search_text(kb.tokenizer.tokenize_query(q), k=20) for q in ("退货", "安装", "牛肉")}
    return views(kb), rows, parents, scores


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_any_sequence_leaves_search_consistent_with_the_overlays(embedded_kb: MakeKB, ops: list[Any]) -> None:
    kb = embedded_kb()
    for kind, cid in ops:
        apply(kb, kind, cid)
        check_consistent(kb)
    kb.close()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS, last=st.tuples(st.sampled_from(KINDS[:-1]), st.sampled_from(CHUNKS)))
def test_undo_restores_exactly(embedded_kb: MakeKB, ops: list[Any], last: tuple[str, str]) -> None:
    kb = embedded_kb()
    for kind, cid in ops:
        apply(kb, kind, cid)
    before = snapshot(kb)
    changes = len(kb.curation.changes(limit=500))
    apply(kb, *last)
    if len(kb.curation.changes(limit=500)) > changes:  # the operation did change something
        kb.curation.undo(actor=ACTOR)
    assert snapshot(kb) == before
    kb.close()
