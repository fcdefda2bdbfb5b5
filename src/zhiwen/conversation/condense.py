"""The conversation stage's entry point: the offline rules, and one LLM condense call when a
model is configured.

* **Offline first.** :class:`~zhiwen.conversation.offline.OfflineCondenser` always runs (well
  under a millisecond); without an LLM its result is the stage's.
* **With an LLM**: ONE call per turn, over the last :data:`WINDOW_TURNS` turns of the history
  (each cut to :data:`TURN_CHARS` characters: never the whole history), bounded by
  ``timeout_s``. Its reply is used only when it reads as a question that keeps the user's own
  specific words; anything else (a timeout, an error, an answer instead of a question, prose
  around it, a ``<think>`` block left unclosed) falls back to the offline result, counted in
  ``CONDENSE_CALLS{outcome}``, logged, and named in ``Standalone.llm_fallback`` (error,
  unusable_reply, not_the_question, lost_words). A small model's wrapping — a closed ``<think>``
  block, 「改写后的问题：」 on its own line, quotes, ``**``, turn tokens — is cleaned first (#31).
* **A standalone question stays as it is**: when the rules found nothing to resolve, the model's
  rewrite must contain every specific word of the question, or it is not taken.

Example::

    >>> condense([{"role": "user", "content": "中国公民去泰国需要签证吗？"}], "那西班牙呢？",
    ...          vocabulary=Vocabulary({"泰国": "country", "西班牙": "country"}))
    Standalone(question='中国公民去西班牙需要签证吗？', original='那西班牙呢？', method='substitution', …)
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import rjieba

from zhiwen.conversation.model import Standalone, message_text, user_questions
from zhiwen.conversation.offline import ASKS, OfflineCondenser, names_something
from zhiwen.conversation.slots import ordinal_in
from zhiwen.conversation.vocabulary import Vocabulary
from zhiwen.errors import LLMError
from zhiwen.llm import error_outcome, llm_purpose
from zhiwen.llm.base import ChatModel, Message
from zhiwen.llm.bounded import bounded_call
from zhiwen.metrics import CONDENSE_CALLS

log = logging.getLogger(__name__)

#: turns of the history the condense call sees (the newest)
WINDOW_TURNS = 4
#: characters kept of each turn (answers are long; the question's slots are near their start)
TURN_CHARS = 300
#: seconds one condense call may take
TIMEOUT_S = 3.0
#: share of the question's own characters a rewrite keeps (pronouns and particles aside)
KEPT_SHARE = 0.6
#: what a rewrite may drop of the question: pronouns, demonstratives, particles, punctuation
_FILLER = re.compile(r"[它他她们这那该此其呢吗吧啊呀么的了？?！!。.，,、\s]")

SYSTEM = (
    "你负责改写对话中的最后一个问题：根据之前的对话，把它改写成不依赖上下文、可以单独检索的完整问题。"
    "补全省略的主语和指代（它、这个、该…），保留原问题的意思和用词，不要回答问题，不要添加对话里没有的信息。"
    "问题本来就完整时原样输出。只输出改写后的问题，不要解释。"
)
_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
#: what a small model puts before its rewrite (「改写后的问题：」, 「**完整问题**：」, "Rewritten:")
_LEADS = re.compile(
    r"^(?:改写(?:后)?(?:的)?(?:问题)?(?:是|为)?|(?:完整|独立|最后一个)?问题(?:是|为)?|"
    r"standalone question|rewritten(?: question)?)\s*[:：]\s*",
    re.I,
)
#: chat-template tokens a llama.cpp server may leave in the text (Gemma's turn markers)
_TURN_TOKENS = re.compile(r"<(?:start|end)_of_turn>(?:model|user)?|<\|im_(?:start|end)\|>")
_QUOTES = "\"'“”‘’「」『』`*"


def condense_messages(history: Sequence[Mapping[str, Any]], question: str) -> list[Message]:
    """The prompt: the last turns (bounded), then the question to rewrite."""
    turns = [m for m in history if m.get("role") in ("user", "assistant")][-WINDOW_TURNS * 2 :]
    lines = [
        f"{'用户' if m.get('role') == 'user' else '助手'}：{message_text(m)[:TURN_CHARS]}" for m in turns
    ]
    user = "对话：\n" + "\n".join(lines) + f"\n\n最后一个问题：{question}\n\n改写后的问题："
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def clean_reply(text: str) -> str | None:
    """The rewrite a reply holds, cleaned of what a small model wraps it in — a closed ``<think>``
    block, turn tokens, a lead (「改写后的问题：」, also on a line of its own), quotes and ``**`` —
    or None when a reasoning block never closed (nothing after it to trust) or nothing is left.

    >>> clean_reply("<think>指代泰国</think>改写后的问题：\n「中国公民去泰国需要签证吗？」")
    '中国公民去泰国需要签证吗？'
    """
    text = _TURN_TOKENS.sub("", _THINK.sub("", text))
    if "<think>" in text.lower():
        return None
    for line in text.splitlines():
        line = line.replace("**", "").strip().strip(_QUOTES).strip()
        line = _LEADS.sub("", line).strip().strip(_QUOTES).strip()
        if line:
            return line
    return None


def parse_reply(text: str, question: str) -> str | None:
    """The model's rewrite, or None when the reply is not a usable question."""
    rewritten = clean_reply(text)
    if not rewritten or len(rewritten) > 3 * len(question) + 60:
        return None
    return rewritten


def keeps_specific_words(rewritten: str, question: str) -> bool:
    """Every specific word of the question is still there (the rewrite did not change the topic)."""
    return all(w in rewritten for w in rjieba.cut(question) if names_something(w))


def keeps_the_question(rewritten: str, question: str) -> bool:
    """The rewrite still asks what the user asked: it is a question when the user's was, and it
    keeps most of the user's own words (pronouns, ordinals and particles aside) — an answer (「大约需要一个
    小时。」) or another question (「今天北京的天气怎么样？」) is not a rewrite."""
    if ASKS.search(question) and not ASKS.search(rewritten):
        return False
    ordinal = ordinal_in(question)
    if ordinal is not None:  # 「第二个」 stands for an item, as a pronoun does: the rewrite names it
        question = question.replace(ordinal.phrase, "", 1)
    own = [ch for ch in _FILLER.sub("", question) if ch.strip()]
    if not own:
        return True
    kept = sum(ch in rewritten for ch in own)
    return kept / len(own) >= KEPT_SHARE


def _ask_llm(
    llm: ChatModel, history: Sequence[Mapping[str, Any]], question: str, timeout_s: float
) -> str | None:
    messages = condense_messages(history, question)

    def call() -> str:
        with llm_purpose("conversation.condense"):
            return llm.chat(messages, temperature=0.0, max_tokens=128, timeout_s=timeout_s).content

    return parse_reply(bounded_call(call, timeout_s=timeout_s), question)


def rejection(rewritten: str | None, question: str, offline: Standalone) -> str | None:
    """Why a rewrite is not taken (``unusable_reply``, ``not_the_question``, ``lost_words``), or None."""
    if rewritten is None:
        return "unusable_reply"
    if not keeps_the_question(rewritten, question):
        return "not_the_question"
    if not offline.changed and not keeps_specific_words(rewritten, question):
        return "lost_words"
    return None


def _with_llm(
    offline: Standalone,
    llm: ChatModel,
    history: Sequence[Mapping[str, Any]],
    question: str,
    timeout_s: float,
    condenser: OfflineCondenser,
) -> Standalone:
    try:
        rewritten = _ask_llm(llm, history, question, timeout_s)
    except (LLMError, TimeoutError) as exc:
        CONDENSE_CALLS.labels(outcome="error").inc()
        log.warning("condense call failed, the offline rewrite stands: %s", exc)
        failed = error_outcome(exc) if isinstance(exc, LLMError) else "timeout"
        return replace(offline, llm_fallback=failed)
    except Exception:  # a broken adapter must not fail the answer
        CONDENSE_CALLS.labels(outcome="error").inc()
        log.exception("condense adapter raised unexpectedly")
        return replace(offline, llm_fallback="error")
    reason = rejection(rewritten, question, offline)
    if reason is not None:
        CONDENSE_CALLS.labels(outcome="rejected").inc()
        log.info("condense rewrite %r rejected (%s); the offline one stands", rewritten, reason)
        return replace(offline, llm_fallback=reason)
    assert rewritten is not None
    CONDENSE_CALLS.labels(outcome="used").inc()
    if rewritten == question and offline.method == "anaphora":
        return offline  # a pronoun left as it was is not resolved: the rules' reading stands
    focus = condenser.focus_of(rewritten, offline.topic)
    return Standalone(rewritten, question, "llm", topic=offline.topic, carried=offline.carried, focus=focus)


def condense(
    history: Sequence[Mapping[str, Any]],
    question: str,
    *,
    vocabulary: Vocabulary | None = None,
    llm: ChatModel | None = None,
    timeout_s: float = TIMEOUT_S,
) -> Standalone:
    """``question`` made standalone with ``history`` (OpenAI messages, oldest first)."""
    question = question.strip()
    condenser = OfflineCondenser(vocabulary)
    offline = condenser.condense(history, question)
    if llm is None or not user_questions(history):
        return offline
    return _with_llm(offline, llm, history, question, timeout_s, condenser)
