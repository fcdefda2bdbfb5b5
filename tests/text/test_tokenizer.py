"""Tokenizer: search/exact modes, normalisation, stop words, user dictionaries."""

from __future__ import annotations

from pathlib import Path

import pytest
import rjieba

from zhiwen.text.tokenizer import Tokenizer, add_words, default_stopwords, load_user_dict


def test_search_mode_emits_subwords() -> None:
    tok = Tokenizer()
    assert tok.tokenize("我们去上海浦东机场") == ["去", "上海", "浦东", "上海浦东", "机场"]
    assert Tokenizer(mode="exact").tokenize("我们去上海浦东机场") == ["去", "上海浦东", "机场"]


def test_punctuation_whitespace_dropped_and_latin_lowercased() -> None:
    toks = Tokenizer().tokenize("用 PostgreSQL 部署，支持 RAG！！  ")
    assert "postgresql" in toks and "rag" in toks
    assert not any(t.strip() != t or t in ("，", "！", " ") for t in toks)


def test_default_stop_words() -> None:
    stop = default_stopwords()
    assert "的" in stop and "怎么" not in stop  # question words are kept for routing
    toks = Tokenizer().tokenize("宫保鸡丁的做法和步骤")
    assert "的" not in toks and "和" not in toks and "做法" in toks


def test_custom_stop_words() -> None:
    assert Tokenizer(stopwords=[]).tokenize("我的书") == ["我", "的", "书"]
    assert Tokenizer(stopwords=["书"]).tokenize("我的书") == ["我", "的"]


def test_segment_keeps_everything() -> None:
    assert "，" in Tokenizer().segment("你好，世界")


def test_user_dict_file(tmp_path: Path) -> None:
    word = "瓞绵检索器"  # not a dictionary word, unique to this test (dictionaries are process-wide)
    assert not rjieba.has_word(word)
    assert word not in Tokenizer(mode="exact").tokenize(f"使用{word}查询")
    path = tmp_path / "user.dict"
    path.write_text(f"# 注释\n{word} 1000 n\n\n知问引擎测\n", encoding="utf-8")
    tok = Tokenizer(mode="exact", user_dict=path)
    assert word in tok.tokenize(f"使用{word}查询")
    assert rjieba.has_word("知问引擎测")
    assert load_user_dict(path) == 0  # loading the same file twice is a no-op


def test_add_words_keeps_domain_terms_whole() -> None:
    term = "鳀鱼焖饭测"
    before = Tokenizer(mode="exact").tokenize(f"今天做{term}")
    assert term not in before
    add_words([term, "", term])
    assert term in Tokenizer(mode="exact").tokenize(f"今天做{term}")
    assert term in Tokenizer().tokenize(f"今天做{term}")


def test_bad_mode() -> None:
    with pytest.raises(ValueError):
        Tokenizer(mode="fast")


def test_tokenize_many_and_query() -> None:
    tok = Tokenizer()
    assert tok.tokenize_many(["宫保鸡丁", "回锅肉"]) == [tok.tokenize("宫保鸡丁"), tok.tokenize("回锅肉")]
    assert tok.tokenize_query("宫保鸡丁怎么做") == tok.tokenize("宫保鸡丁怎么做")


# -- mixed mode: words + character bigrams ------------------------------------------------------
def test_han_bigrams_cover_every_run_of_chinese() -> None:
    from zhiwen.text.tokenizer import han_bigrams

    assert han_bigrams("浦东机场") == ["浦东", "东机", "机场"]
    assert han_bigrams("去 PostgreSQL 的北京，和上海") == ["的北", "北京", "和上", "上海"]
    assert han_bigrams("单 字") == [] and han_bigrams("") == []


def test_mixed_mode_adds_bigrams_to_the_words() -> None:
    words = Tokenizer().tokenize("上海浦东机场怎么去")
    mixed = Tokenizer(mode="mixed").tokenize("上海浦东机场怎么去")
    assert mixed[: len(words)] == words
    assert {"海浦", "东机", "机场", "么去"} <= set(mixed[len(words) :])
    assert Tokenizer(mode="mixed").tokenize_query("浦东机场") == Tokenizer(mode="mixed").tokenize("浦东机场")


def test_unknown_mode_is_rejected() -> None:
    with pytest.raises(ValueError, match="mixed"):
        Tokenizer(mode="bigram")
