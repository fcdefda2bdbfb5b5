"""The KB's own words in its tokenizer: the word matcher, whole words without double counting,
and synonym expansion (hypothesis against naive references)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.curation.lexicon import SYNONYM_WEIGHT, KBTokenizer, Lexicon, WordMatcher
from zhiwen.text.tokenizer import Tokenizer

CHARS = st.sampled_from(list("土豆马铃薯知识库问答ab，。 "))


def naive_counts(text: str, words: set[str]) -> dict[str, int]:
    out = {}
    for w in words:
        n = sum(1 for i in range(len(text)) if text.startswith(w, i))
        if n:
            out[w] = n
    return out


@settings(max_examples=150, deadline=None)
@given(
    st.text(CHARS, max_size=40), st.sets(st.text(CHARS.filter(str.strip), min_size=1, max_size=4), max_size=6)
)
def test_word_matcher_counts_overlapping_occurrences(text: str, words: set[str]) -> None:
    words = {w.lower() for w in words}
    assert dict(WordMatcher(words).counts(text.lower())) == naive_counts(text.lower(), words)


@settings(max_examples=80, deadline=None)
@given(st.text(st.sampled_from(list("上海浦东机场怎么去土豆牛肉知识库 ,.?Ab1")), max_size=30))
def test_without_words_the_kb_tokenizer_is_the_plain_one(text: str) -> None:
    assert KBTokenizer().tokenize(text) == Tokenizer().tokenize(text)


@settings(max_examples=80, deadline=None)
@given(st.text(st.sampled_from(list("知识库管理员土豆 ，")), max_size=30))
def test_a_word_counts_as_often_as_it_occurs(text: str) -> None:
    tok = KBTokenizer()
    tok.use(Lexicon.build(words=["知识库管理员", "土豆"]))
    got = tok.tokenize(text)
    for word in ("知识库管理员", "土豆"):
        assert got.count(word) == max(text.count(word), Tokenizer().tokenize(text).count(word))


def test_expand_weights_and_plain_tokens() -> None:
    lex = Lexicon.build(groups=[["土豆", "马铃薯", "洋芋"], ["西红柿", "番茄"]])
    assert lex.expand(["牛肉"], None, weighted=True) == (["牛肉"], None)
    assert lex.expand(["土豆", "牛肉"], None, weighted=True) == (
        ["土豆", "牛肉", "马铃薯", "洋芋"],
        [1.0, 1.0, SYNONYM_WEIGHT, SYNONYM_WEIGHT],
    )
    assert lex.expand(["土豆", "马铃薯"], [0.8, 0.4], weighted=True) == (
        ["土豆", "马铃薯", "洋芋"],
        [0.8, 0.4, 0.8 * SYNONYM_WEIGHT],
    )
    assert lex.expand(["番茄"], None, weighted=False) == (["番茄", "西红柿"], None)


def test_keywords_follow_the_chunk() -> None:
    from zhiwen.documents import Chunk

    tok = KBTokenizer()
    chunk = Chunk(id="a#0", doc_id="a", text="退货流程")
    plain = tok.chunk_tokens(chunk)
    tok.use(tok.lexicon.with_keywords({"a#0": ["售后"]}))
    assert tok.chunk_tokens(chunk).count("售后") == 3 and tok.chunk_tokens(chunk)[: len(plain)] == plain
    assert tok.chunk_tokens(chunk, keywords=()) == plain
    tok.use(tok.lexicon.with_keywords({"a#0": []}))
    assert tok.chunk_tokens(chunk) == plain
