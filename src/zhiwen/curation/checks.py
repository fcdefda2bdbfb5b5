"""Validation of what owners hand curation: texts, questions, keywords, words, synonym groups.

Every check raises :class:`~zhiwen.errors.InvalidParameter` (HTTP 422) with a Chinese message
before anything is written; lists come back cleaned (whitespace trimmed, blanks and repeats
dropped, order kept).

Example::

    >>> clean_questions(["  退货 ", "退货", "", "换货"])
    ('退货', '换货')
    >>> check_text("   ")          # InvalidParameter: 段落内容不能为空
"""

from __future__ import annotations

from collections.abc import Iterable

from zhiwen.curation.model import ORIGINS
from zhiwen.errors import InvalidParameter

MAX_TEXT_CHARS = 20_000
MAX_QUESTIONS = 50
MAX_QUESTION_CHARS = 500
MAX_KEYWORDS = 32
MAX_KEYWORD_CHARS = 64
MAX_WORDS = 50_000
MAX_WORD_CHARS = 64
MAX_GROUPS = 10_000
MAX_GROUP_TERMS = 50


def check_text(text: object) -> str:
    """A chunk's text: a non-blank string of at most :data:`MAX_TEXT_CHARS` characters."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidParameter("empty chunk text", message="段落内容不能为空")
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidParameter(
            f"chunk text of {len(text)} chars",
            message=f"段落内容过长：{len(text)} 字（最多 {MAX_TEXT_CHARS} 字）",
        )
    return text


def check_origin(origin: object) -> str:
    if origin not in ORIGINS or origin == "parsed":
        raise InvalidParameter(
            f"bad origin {origin!r}", message="段落来源只能是 manual（手工添加）或 faq（问答对）"
        )
    return str(origin)


def clean_terms(values: object, *, what: str, limit: int, chars: int) -> tuple[str, ...]:
    """A list of short strings (questions, keywords, words): trimmed, blanks and repeats dropped."""
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise InvalidParameter(f"{what} must be a list of strings", message=f"{what}应为字符串列表")
    out: dict[str, None] = {}
    for i, value in enumerate(values, start=1):
        if not isinstance(value, str):
            raise InvalidParameter(f"{what} #{i} is not a string", message=f"第 {i} 个{what}不是字符串")
        term = " ".join(value.split())
        if len(term) > chars:
            raise InvalidParameter(
                f"{what} #{i} has {len(term)} chars",
                message=f"第 {i} 个{what}过长：{len(term)} 字（最多 {chars} 字）",
            )
        if term:
            out.setdefault(term, None)
    if len(out) > limit:
        raise InvalidParameter(f"{len(out)} {what}", message=f"{what}过多：{len(out)} 个（最多 {limit} 个）")
    return tuple(out)


def clean_questions(values: object) -> tuple[str, ...]:
    return clean_terms(values, what="问题", limit=MAX_QUESTIONS, chars=MAX_QUESTION_CHARS)


def clean_keywords(values: object) -> tuple[str, ...]:
    return clean_terms(values, what="关键词", limit=MAX_KEYWORDS, chars=MAX_KEYWORD_CHARS)


def clean_words(values: object) -> tuple[str, ...]:
    return clean_terms(values, what="词条", limit=MAX_WORDS, chars=MAX_WORD_CHARS)


def clean_groups(groups: object) -> tuple[tuple[str, ...], ...]:
    """Synonym groups: each at least two distinct terms; a term in one group only."""
    if isinstance(groups, str) or not isinstance(groups, Iterable):
        raise InvalidParameter(
            "groups must be a list of lists", message='同义词应为词组列表，如 [["土豆","马铃薯"]]'
        )
    out: list[tuple[str, ...]] = []
    owner: dict[str, int] = {}
    for n, group in enumerate(groups, start=1):
        terms = clean_terms(group, what=f"第 {n} 组同义词", limit=MAX_GROUP_TERMS, chars=MAX_WORD_CHARS)
        if len(terms) < 2:
            raise InvalidParameter(f"group {n} has < 2 terms", message=f"第 {n} 组同义词至少要有两个不同的词")
        for term in terms:
            key = term.lower()
            if key in owner:
                raise InvalidParameter(
                    f"term {term!r} in groups {owner[key]} and {n}",
                    message=f"「{term}」同时出现在第 {owner[key]} 组和第 {n} 组同义词中（一个词只属于一组）",
                )
            owner[key] = n
        out.append(terms)
    if len(out) > MAX_GROUPS:
        raise InvalidParameter(
            f"{len(out)} groups", message=f"同义词组过多：{len(out)} 组（最多 {MAX_GROUPS} 组）"
        )
    return tuple(out)
