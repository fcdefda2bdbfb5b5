"""The FAQ matcher with the hash embedder: exact normal form, threshold, margin, near misses,
precomputed query vectors and vectors reused instead of embedded again."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from zhiwen.config import FAQSettings
from zhiwen.embed import EmbeddingCache, HashEmbedder
from zhiwen.faq import FAQEntry, FAQMatch, FAQMiss
from zhiwen.faq.matcher import FAQMatcher

ENTRIES = [
    FAQEntry.create("外国人入境免签可以停留几天？", "30 天", similar=["免签入境能待多久"], id="stay"),
    FAQEntry.create("外国人出境需要什么手续？", "有效护照", id="exit"),
    FAQEntry.create("契税怎么算？", "计税价格乘以税率", id="deed"),
    FAQEntry.create("法国公民来中国可以免签吗？", "可以，30 天", id="fr"),
    FAQEntry.create("德国公民来中国可以免签吗？", "可以，30 天", id="de"),
    FAQEntry.create("旧政策还有效吗？", "已停用", id="off", enabled=False),
]
LOOSE = FAQSettings(threshold=0.6, margin=0.03, dense_weight=0.5, suggest_floor=0.3)


class CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.queries = 0

    def embed_query(self, text: str) -> np.ndarray:
        self.queries += 1
        return super().embed_query(text)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        raise AssertionError("entry questions are embedded on the query side")


@pytest.fixture
def matcher() -> FAQMatcher:
    return FAQMatcher(ENTRIES, HashEmbedder(), settings=LOOSE)


@pytest.mark.parametrize(
    "asked",
    ["外国人入境免签可以停留几天", "外國人入境免簽可以停留幾天？", " 外国人入境免签可以停留几天吗 ？！"],
)
def test_the_same_question_once_normalised_scores_one(matcher: FAQMatcher, asked: str) -> None:
    got = matcher.match(asked)
    assert isinstance(got, FAQMatch) and got.entry.id == "stay" and got.score == 1.0


def test_a_similar_question_is_the_one_reported(matcher: FAQMatcher) -> None:
    got = matcher.match("免签入境能待多久呢")
    assert isinstance(got, FAQMatch) and got.question == "免签入境能待多久"


def test_a_close_paraphrase_matches_over_the_threshold(matcher: FAQMatcher) -> None:
    got = matcher.match("外国人出境需要什么")
    assert isinstance(got, FAQMatch) and got.entry.id == "exit" and LOOSE.threshold <= got.score < 1.0


def test_an_unknown_country_gets_suggestions_not_another_countrys_answer(matcher: FAQMatcher) -> None:
    got = matcher.match("美国公民来中国可以免签吗")
    assert isinstance(got, FAQMiss)
    assert {s.entry.id for s in got.suggestions} >= {"fr", "de"}
    assert all(s.score >= LOOSE.suggest_floor for s in got.suggestions)


def test_two_entries_too_alike_are_not_guessed_between() -> None:
    twins = [
        FAQEntry.create("甲公司的年假有几天？", "5 天", id="a"),
        FAQEntry.create("乙公司的年假有几天？", "10 天", id="b"),
    ]
    lenient = LOOSE.model_copy(update={"threshold": 0.3, "margin": 0.3})
    got = FAQMatcher(twins, HashEmbedder(), settings=lenient).match("公司的年假有几天")
    assert isinstance(got, FAQMiss) and len(got.suggestions) == 2
    no_margin = lenient.model_copy(update={"margin": 0.0})
    assert isinstance(
        FAQMatcher(twins, HashEmbedder(), settings=no_margin).match("公司的年假有几天"), FAQMatch
    )


def test_disabled_entries_never_answer(matcher: FAQMatcher) -> None:
    assert "off" not in {e.id for e in matcher.entries}
    assert isinstance(matcher.match("旧政策还有效吗"), FAQMiss)


def test_off_topic_gets_nothing(matcher: FAQMatcher) -> None:
    got = matcher.match("宫保鸡丁怎么做")
    assert isinstance(got, FAQMiss) and got.suggestions == ()


def test_a_precomputed_query_vector_is_used_as_is() -> None:
    emb = CountingEmbedder()
    m = FAQMatcher(ENTRIES, emb, settings=LOOSE)
    built = emb.queries
    vector = HashEmbedder().embed_query("外国人出境需要什么")
    assert isinstance(m.match("外国人出境需要什么", query_vector=vector), FAQMatch)
    assert emb.queries == built
    m.match("外国人出境需要什么")
    assert emb.queries == built + 1


def test_a_rebuilt_matcher_embeds_only_new_questions(tmp_path: Path) -> None:
    emb = CountingEmbedder()
    first = FAQMatcher(ENTRIES, emb, settings=LOOSE)
    assert emb.queries == 6  # five enabled entries, one with a similar question
    more = [*ENTRIES, FAQEntry.create("怎么查不动产登记？", "到登记机构", id="reg")]
    FAQMatcher(more, emb, settings=LOOSE, previous=first)
    assert emb.queries == 7
    with EmbeddingCache(tmp_path) as cache:
        FAQMatcher(more, emb, settings=LOOSE, cache=cache)
        assert emb.queries == 14
        again = FAQMatcher(more, CountingEmbedder(), settings=LOOSE, cache=cache)
        assert again.embedder.queries == 0  # type: ignore[attr-defined]


def test_an_empty_faq_matches_nothing() -> None:
    m = FAQMatcher([], HashEmbedder(), settings=LOOSE)
    assert len(m) == 0 and m.match("任何问题") == FAQMiss()
