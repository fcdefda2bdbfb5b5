"""The conversation's focus as a retrieval prior (``zhiwen.retrieve.focus``) and what
``RetrievalPipeline.search_parents(focus=…)`` does with it: focused pages move up, scores stay
as they were, and a focus that names none of the candidates changes nothing (hypothesis).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zhiwen.config import Settings
from zhiwen.documents import Chunk, Document, SearchHit
from zhiwen.retrieve.focus import STRATEGIES, Focus, any_focused, apply_focus, focus_keys
from zhiwen.retrieve.pipeline import RetrievalPipeline

TOPIC = "东湖大学计算机学院"
SIBLING = "西岭大学计算机学院"


def hit(doc_id: str, title: str, score: float) -> SearchHit:
    return SearchHit(
        chunk=Chunk(id=f"{doc_id}#0", doc_id=doc_id, text=title, title=title, parent_id=doc_id), score=score
    )


HITS = [
    hit("西岭/本科生培养", f"{SIBLING}本科生培养", 0.90),
    hit("南江/本科生培养", "南江大学计算机学院本科生培养", 0.85),
    hit("东湖/本科生培养", f"{TOPIC}本科生培养", 0.80),
    hit("东湖/联系方式", f"{TOPIC}联系方式", 0.20),
    hit("北辰/本科生培养", "北辰大学计算机学院本科生培养", 0.10),
]


def ids(hits: Sequence[SearchHit]) -> list[str]:
    return [h.chunk.doc_id for h in hits]


def test_boost_moves_the_topics_pages_up_and_keeps_their_scores() -> None:
    out = apply_focus(HITS, Focus(names=(TOPIC,), weight=0.5))
    assert ids(out)[:2] == ["东湖/本科生培养", "西岭/本科生培养"]  # 0.80 + 0.4 > 0.90
    assert ids(out)[2] == "南江/本科生培养"  # 0.20 + 0.4 < 0.85: a far better page stays ahead
    assert {h.chunk.doc_id: h.score for h in out} == {h.chunk.doc_id: h.score for h in HITS}
    assert [h.extra.get("focus", False) for h in out[:2]] == [True, False]


def test_first_puts_every_focused_page_ahead() -> None:
    out = apply_focus(HITS, Focus(names=(TOPIC,), strategy="first"))
    assert ids(out)[:2] == ["东湖/本科生培养", "东湖/联系方式"]


def test_doc_ids_focus_the_documents_a_previous_answer_cited() -> None:
    out = apply_focus(HITS, Focus(doc_ids=frozenset({"北辰/本科生培养"}), strategy="first"))
    assert ids(out)[0] == "北辰/本科生培养"


def test_no_focus_and_a_zero_weight_change_nothing() -> None:
    assert apply_focus(HITS, None) == HITS
    assert apply_focus(HITS, Focus(names=(TOPIC,), weight=0.0)) == HITS
    assert not Focus() and not Focus(names=(TOPIC,), weight=0.0)


def test_the_query_gets_the_names_it_does_not_name() -> None:
    focus = Focus(names=(TOPIC,))
    assert focus.query("本科生要修多少学分？") == f"{TOPIC} 本科生要修多少学分？"
    assert focus.query(f"{TOPIC}本科生要修多少学分？") == f"{TOPIC}本科生要修多少学分？"
    assert Focus(names=(TOPIC,), expand=False).query("学分？") == "学分？"


def test_an_unknown_strategy_is_refused() -> None:
    with pytest.raises(ValueError, match="strategy"):
        Focus(names=(TOPIC,), strategy="filter")


#: scores on a grid: a gain added to two scores 1e-300 apart would make them equal
scores = st.lists(st.integers(-500, 500).map(lambda x: x / 100), min_size=0, max_size=30)


@given(scores, st.lists(st.booleans(), min_size=30, max_size=30), st.sampled_from(sorted(STRATEGIES)))
def test_the_focus_only_reorders(values: list[float], focused: list[bool], strategy: str) -> None:
    """A permutation of the hits; within the focused ones and within the others the order is
    retrieval's (by score, ties in the order given); no ordering key is below a hit's score."""
    hits = [hit(f"d{i}", f"{TOPIC if focused[i] else SIBLING}{i}", v) for i, v in enumerate(values)]
    focus = Focus(names=(TOPIC,), strategy=strategy)
    out = apply_focus(hits, focus)
    assert sorted(ids(out)) == sorted(ids(hits))
    for flag in (True, False):
        group = [i for i in range(len(hits)) if focused[i] == flag]
        want = [f"d{i}" for i in sorted(group, key=lambda i: (-values[i], i))]
        assert [d for d in ids(out) if focused[int(d[1:])] == flag] == want
    keys = focus_keys(hits, focus)
    assert all(keys[h.chunk.id] >= h.score for h in hits)


@given(scores)
def test_a_focus_naming_no_candidate_leaves_the_order(values: list[float]) -> None:
    hits = sorted((hit(f"d{i}", f"{SIBLING}{i}", v) for i, v in enumerate(values)), key=lambda h: -h.score)
    focus = Focus(names=(TOPIC,))
    assert not any_focused(hits, focus)
    assert ids(apply_focus(hits, focus)) == ids(hits)


# -- the pipeline --------------------------------------------------------------------------------
class LookalikeKB:
    """Every 本科生培养 page of five siblings; the query decides nothing but the order given."""

    name = "lookalike"
    path = None

    def __init__(self, hits: Sequence[SearchHit]) -> None:
        self.hits = list(hits)
        self.queries: list[tuple[str, int]] = []

    def search(self, query: str, **params: Any) -> list[SearchHit]:
        self.queries.append((query, params["top_k"]))
        return self.hits[: params["top_k"]]

    def get_parents(self, ids: Sequence[str]) -> list[Document]:
        titles = {h.chunk.doc_id: h.chunk.title for h in self.hits}
        return [Document(id=i, text=titles[i], title=titles[i]) for i in ids if i in titles]


@pytest.fixture
def pipeline() -> RetrievalPipeline:
    return RetrievalPipeline.static(
        Settings(embedding={"provider": "hash"}, retrieval={"default_mode": "bm25"})
    )


def test_search_parents_with_a_focus(pipeline: RetrievalPipeline) -> None:
    kb = LookalikeKB(HITS)
    found = pipeline.search_parents(kb, "本科生要修多少学分？", top_k=2, focus=Focus(names=(TOPIC,)))
    assert [p.document.id for p in found.parents] == ["东湖/本科生培养", "西岭/本科生培养"]
    assert [p.score for p in found.parents] == [0.80, 0.90]  # the reader sees retrieval's scores
    assert found.params["focus"]["names"] == [TOPIC]
    assert kb.queries == [(f"{TOPIC} 本科生要修多少学分？", 50)]  # fetched deeper, the topic in front


def test_search_parents_without_a_focused_candidate_is_the_plain_search(pipeline: RetrievalPipeline) -> None:
    kb = LookalikeKB(HITS)
    plain = pipeline.search_parents(kb, "本科生要修多少学分？", top_k=3)
    other = pipeline.search_parents(
        kb, "本科生要修多少学分？", top_k=3, focus=Focus(names=("云川大学医学院",))
    )
    assert [p.document.id for p in other.parents] == [p.document.id for p in plain.parents]
    assert other.params == plain.params and "focus" not in other.params
