"""An app's answer in OpenAI's shape: text with ``[n]`` markers, citations, usage, provenance.

* **Citations** are the app's citations in order; ``[n]`` in the text is ``citations[n-1]``
  (the engine's answers already cite that way). An answer that has sources but no marker (an
  app's own sections or summary) gets a ``来源`` footer listing them as
  ``[1] 标题``, so the markers are in the text for clients that show only text. Citations without
  a snippet (generic QA cites whole documents) get the document's opening text.
* **Offline** answers say so: ``zhiwen.llm_used: false`` with the reason, and a visible note
  when the app's text carries none (``Answer.has_offline_note``: the engine's extractive answers
  and the listings app write their own).
* **FAQ** answers (``zhiwen.answer_type: "faq"``) are the entry's answer word for word: no
  footer, no note; the entry is the one citation.
* **Which answer**: ``zhiwen.answer_id`` (rate it with ``POST /v1/feedback``), ``answer_type``,
  ``faq`` and ``suggestions`` (「您是不是想问：」).
* **Usage** is an estimate, the same for every app: one token per CJK character plus one per
  four other characters (no tokenizer matches every LLM; an app may make several LLM calls or
  none). Prompt tokens count the whole conversation sent.

Example::

    >>> cited = number_citations(answer.citations, ctx)           # [CitationOut(index=1, …), …]
    >>> text = answer.answer + closing_text(answer, answer.answer, cited)
    >>> estimate_tokens("怎么创建知识库？ok")
    9
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence

from zhiwen.answer.model import Answer, Citation
from zhiwen.api.openai.schemas import CitationOut, Usage, ZhiwenInfo
from zhiwen.appkit.app import AppContext
from zhiwen.tables.schema import answer_table

log = logging.getLogger(__name__)

SNIPPET_CHARS = 300
OFFLINE_NOTE = "（离线模式：未使用大模型，以上内容由知识库检索结果直接整理）"
_MARKER = re.compile(r"\[\d{1,3}\]")
_HEADING = re.compile(r"^#{1,6}[ \t]+", re.MULTILINE)
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")


def estimate_tokens(text: str) -> int:
    """CJK characters count one token each; everything else one per four characters."""
    cjk = len(_CJK.findall(text))
    rest = len(text) - cjk
    return cjk + (rest + 3) // 4


def usage(prompt_texts: Iterable[str], completion: str) -> Usage:
    prompt = sum(estimate_tokens(t) for t in prompt_texts)
    done = estimate_tokens(completion)
    return Usage(prompt_tokens=prompt, completion_tokens=done, total_tokens=prompt + done)


def has_markers(text: str) -> bool:
    return bool(_MARKER.search(text))


def sources_footer(citations: Sequence[CitationOut]) -> str:
    lines = [f"[{c.index}] {c.title or c.id}" for c in citations]
    return "\n\n**来源**\n" + "\n".join(lines)


def offline_note(answer: Answer) -> str:
    """The visible note for an extractive answer whose text does not already say so
    (``Answer.has_offline_note``; a no-results answer needs none)."""
    if answer.llm_used or answer.has_offline_note or answer.extractive_reason == "no_results":
        return ""
    if answer.kind == "faq":  # the owner's own answer, word for word: no model was meant to write it
        return ""
    return "\n\n" + OFFLINE_NOTE


def _snippet(citation: Citation, ctx: AppContext) -> str:
    if citation.text or not citation.kb:
        return citation.text
    try:
        docs = ctx.open_kb(citation.kb).get_parents([citation.id])
    except Exception as exc:  # a snippet is a nicety: never fail the answer for it
        log.debug("no snippet for %s/%s: %s", citation.kb, citation.id, exc)
        return ""
    if not docs:
        return ""
    text = " ".join(_HEADING.sub("", str(docs[0].text)).split())
    return text[:SNIPPET_CHARS] + ("……" if len(text) > SNIPPET_CHARS else "")


def number_citations(citations: Sequence[Citation], ctx: AppContext) -> list[CitationOut]:
    return [
        CitationOut(
            index=i,
            id=c.id,
            title=c.title,
            snippet=_snippet(c, ctx),
            kb=c.kb,
            score=c.score,
            label=c.label or None,
            source=c.source,
            page=c.page,
            section=c.section,
            metadata=c.metadata,
        )
        for i, c in enumerate(citations, 1)
    ]


def closing_text(answer: Answer, text: str, citations: Sequence[CitationOut]) -> str:
    """What follows ``text`` (the answer's text as shown): the sources footer (no marker in it)
    and the offline note."""
    tail = ""
    if answer.kind == "faq":  # an FAQ answer is shown word for word; its entry is in ``citations``
        return tail
    if citations and not has_markers(text):
        tail += sources_footer(citations)
    return tail + offline_note(answer)


def zhiwen_info(answer: Answer, *, app: str | None, kb: str | None) -> ZhiwenInfo:
    """How ``answer`` was made, for the ``zhiwen`` extension."""
    return ZhiwenInfo(
        app=app,
        kb=kb,
        llm_used=answer.llm_used,
        extractive_reason=_extractive_reason(answer),
        session_id=answer.session_id,
        route=answer.route,
        standalone_question=answer.standalone_question,
        params=dict(answer.params),
        **answer.identity_fields(),
        table=answer_table(answer.data),
    )


def _extractive_reason(answer: Answer) -> str | None:
    """Why no LLM wrote ``answer`` (None: one did, or an FAQ entry answered it)."""
    if answer.llm_used or answer.kind == "faq":
        return None
    return answer.extractive_reason or "no_llm"
