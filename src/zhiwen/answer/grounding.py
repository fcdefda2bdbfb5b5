"""Whether an LLM-written answer may be shown as grounded: the one check every answer path runs.

A model's reply is never shown as it came. :func:`check_answer` first tidies it — drops
``<think>`` blocks (:func:`zhiwen.llm.parse.strip_think`) and ``[n]`` markers with no n-th
source — then judges it. A reply fails, with the reason the answer carries as
``extractive_reason`` (the answer is then the offline one, ``llm_used: false``), when

================================  ==================================================================
``llm_echoed_prompt``             it repeats the prompt's instructions (Gemma 3 270M's most common
                                  reply: the system prompt and the numbered context, ``[1]`` and all)
``llm_truncated``                 it stopped at ``max_tokens`` (``finish_reason == "length"``)
``llm_wrong_language``            a Chinese question got a reply that is mostly Latin letters
``llm_uncited``                   no valid ``[n]`` marker is left (a cited path: generic QA, recipes,
                                  policy) — its sources would otherwise stand beside it as if they
                                  grounded it
``llm_unsupported_numbers``       a figure no shown fact nor the question holds (listings: prices,
                                  areas, counts), read by the number check the tools share
                                  (:mod:`zhiwen.chinese.number_check`)
================================  ==================================================================

Small models (Gemma 3 270M on the #31 bench) fail every one of these; a good model passes them
unchanged.

Example::

    >>> check_answer("<think>嗯……</think>可以免签入境 [1][7]。", sources=2, question="可以免签吗？")
    Grounding(text='可以免签入境 [1]。', reason=None, dropped=(7,), unsupported=())
    >>> check_answer("You can enter visa-free [1].", sources=2, question="可以免签吗？").reason
    'llm_wrong_language'
    >>> check_answer("可以免签入境。", sources=2, question="可以免签吗？").reason
    'llm_uncited'
    >>> facts = number_facts([{"price": 450, "area": 89.5}], ["预算500万"])
    >>> check_answer("总价450万，约90平", sources=1, cite=False, numbers=facts).ok
    True
    >>> check_answer("总价420万", sources=1, cite=False, numbers=facts).unsupported
    ('420万',)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from zhiwen.chinese.number_check import allowed_numbers, check_numbers
from zhiwen.llm.parse import strip_think

#: every reason an LLM reply is not shown, with how a reader says it (see ``clikit.view``)
GROUNDING_REASONS = {
    "llm_echoed_prompt": "大模型复述了提示词，没有作答",
    "llm_uncited": "大模型回答没有标注引用来源",
    "llm_wrong_language": "大模型没有用中文回答",
    "llm_truncated": "大模型回答不完整",
    "llm_unsupported_numbers": "大模型回答中有无法核实的数字",
}

# [1], [1][2], [1, 2], [1，3、4]: a group of source numbers in ASCII or full-width brackets
_MARKER_GROUP = re.compile(r"([ \t]*)[\[［]\s*(\d{1,3}(?:\s*[,，、]\s*\d{1,3})*)\s*[\]］]")
_NUMBER_SEP = re.compile(r"\s*[,，、]\s*")
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.S)
_URL = re.compile(r"https?://\S+")
_LATIN = re.compile(r"[A-Za-z]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
#: a reply with fewer Latin letters than this is never "English" (「OK，见 [1]」)
_MIN_LATIN = 12
_CLAUSE_END = re.compile(r"[。；;！？!?\n]+")
#: an instruction's clause this long, found verbatim in a reply, is the prompt echoed
_ECHO_MIN_CHARS = 12


@dataclass(frozen=True, slots=True)
class Grounding:
    """The tidied reply and, when it must not be shown, why (``reason``)."""

    text: str
    reason: str | None = None
    dropped: tuple[int, ...] = ()  # [n] markers removed: no n-th source
    unsupported: tuple[str, ...] = ()  # figures no fact holds (as written)

    @property
    def ok(self) -> bool:
        return self.reason is None


def valid_markers(text: str, sources: int) -> list[int]:
    """The ``[n]`` source numbers of ``text`` that name one of ``sources`` sources, in order."""
    return [n for m in _MARKER_GROUP.finditer(text) for n in _numbers(m.group(2)) if 1 <= n <= sources]


def _numbers(group: str) -> list[int]:
    return [int(x) for x in _NUMBER_SEP.split(group.strip()) if x]


def drop_out_of_range(text: str, sources: int) -> tuple[str, tuple[int, ...]]:
    """``text`` without the ``[n]`` numbers that have no n-th source, and those numbers.

    A group keeps its valid numbers (``[1, 7]`` → ``[1]``); an empty one goes with the space
    before it.
    """
    dropped: list[int] = []

    def keep(m: re.Match[str]) -> str:
        numbers = _numbers(m.group(2))
        good = [n for n in numbers if 1 <= n <= sources]
        dropped.extend(n for n in numbers if n not in good)
        if good == numbers:
            return m.group(0)
        # "免签 [7]。" → "免签。": an emptied group goes with the space before it
        return m.group(1) + "".join(f"[{n}]" for n in good) if good else ""

    return _MARKER_GROUP.sub(keep, text), tuple(dropped)


def echoes(reply: str, instructions: Iterable[str]) -> bool:
    """Whether ``reply`` repeats a clause (≥ 12 characters) of the prompt's ``instructions``."""
    for text in instructions:
        for clause in _CLAUSE_END.split(text):
            clause = clause.strip()
            if len(clause) >= _ECHO_MIN_CHARS and clause in reply:
                return True
    return False


def is_chinese(question: str) -> bool:
    """A question asked in Chinese: at least as many CJK characters as Latin words
    (「zhiwen index 怎么用」 is Chinese; 「What does 免签 mean?」 is not)."""
    return len(_CJK.findall(question)) >= max(1, len(_LATIN_WORD.findall(question)))


def mostly_latin(text: str) -> bool:
    """Prose that is mostly Latin letters (code and links not counted): an English reply."""
    prose = _URL.sub("", _CODE.sub("", text))
    latin = len(_LATIN.findall(prose))
    return latin >= _MIN_LATIN and latin > 2 * len(_CJK.findall(prose))


def number_facts(facts: Iterable[Any], texts: Iterable[str] = ()) -> list[float]:
    """Every number a reply may state: of ``facts`` (nested dicts/lists, e.g. the listings shown)
    and ``texts`` (the question, the understood request), in the number check's readings (units
    万/亿/%, Chinese numerals, rounding: the one check the tools share)."""
    return allowed_numbers(facts, texts)


def unsupported_numbers(text: str, allowed: Sequence[float]) -> list[str]:
    """Figures of ``text`` (beyond small integers) that no number of ``allowed`` supports."""
    return check_numbers(text, list(allowed)).unsupported


def check_answer(
    text: str,
    *,
    sources: int,
    question: str = "",
    finish_reason: str | None = None,
    cite: bool = True,
    numbers: Sequence[float] | None = None,
    instructions: Sequence[str] = (),
) -> Grounding:
    """Tidy an LLM reply and say whether it may be shown as grounded (see the module docstring).

    ``sources``: how many sources the answer shows (``[n]`` must be 1..sources); ``question``:
    what was asked (its language is the reply's); ``cite``: whether a ``[n]`` marker is required;
    ``numbers``: when given, every figure must be one of them (:func:`number_facts`);
    ``instructions``: the prompt's own text (not its facts), which a reply must not repeat. An
    empty reply (or one that was all reasoning) has ``reason`` ``"empty"``.
    """
    tidy, dropped = drop_out_of_range(strip_think(text), sources)
    tidy = tidy.strip()
    if not tidy:
        return Grounding(tidy, "empty", dropped)
    if echoes(tidy, instructions):
        return Grounding(tidy, "llm_echoed_prompt", dropped)
    if finish_reason == "length":
        return Grounding(tidy, "llm_truncated", dropped)
    if question and is_chinese(question) and mostly_latin(tidy):
        return Grounding(tidy, "llm_wrong_language", dropped)
    if cite and not valid_markers(tidy, sources):
        return Grounding(tidy, "llm_uncited", dropped)
    if numbers is not None:
        bad = unsupported_numbers(tidy, numbers)
        if bad:
            return Grounding(tidy, "llm_unsupported_numbers", dropped, tuple(bad))
    return Grounding(tidy, None, dropped)


__all__ = [
    "GROUNDING_REASONS",
    "Grounding",
    "check_answer",
    "drop_out_of_range",
    "echoes",
    "is_chinese",
    "mostly_latin",
    "number_facts",
    "unsupported_numbers",
    "valid_markers",
]
