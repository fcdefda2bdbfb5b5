"""Answers composed from retrieved documents, without an LLM — and saying so.

Used when no LLM is configured (reason ``no_llm``), when the LLM call failed (reason = the
failure's outcome: ``timeout``, ``auth``, ``rate_limited``, ``http_error``, ``empty``, …) or when
its reply could not be shown as grounded (``llm_uncited`` …, :mod:`zhiwen.answer.grounding`). Every
answer starts with a visible note (:func:`extractive_note`) and cites its sources as ``[n]``
(1-based positions in the answer's source list). Nothing here invents text: it only selects and
arranges passages. Generic QA answers through the extractive stage
(:mod:`zhiwen.answer.stage`: a short cited lead first, the note at the end,
:func:`extractive_footer`); these helpers compose the apps' own offline answers.

Example::

    >>> note = extractive_note("no_llm")
    >>> extractive_footer("no_llm")
    '（未配置大模型，以上内容直接摘自知识库）'
    >>> body = compose_sections(doc, ["必备原料和工具", "操作"], cite=1)
    >>> compose_list([("西红柿炒鸡蛋", "素菜 · ★★", 1)])
    '1. 西红柿炒鸡蛋（素菜 · ★★）[1]'
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from zhiwen.answer.grounding import GROUNDING_REASONS
from zhiwen.documents import Document

_NOTES = {
    "no_llm": "（未配置大模型，以下内容直接摘自知识库）",
    "timeout": "（大模型响应超时，以下内容直接摘自知识库）",
    "rate_limited": "（大模型请求过于频繁，以下内容直接摘自知识库）",
    "auth": "（大模型服务配置有误，以下内容直接摘自知识库）",
    "breaker_open": "（大模型暂时不可用，以下内容直接摘自知识库）",
    "busy": "（大模型繁忙，以下内容直接摘自知识库）",
    "no_results": "（知识库中没有找到相关内容）",
    # the model answered, but not so that it could be shown as grounded (zhiwen.answer.grounding)
    **{code: f"（{why}，以下内容直接摘自知识库）" for code, why in GROUNDING_REASONS.items()},
}
_DEFAULT_NOTE = "（大模型调用失败，以下内容直接摘自知识库）"
_INTERRUPTED_NOTE = "（大模型输出中断，以下内容直接摘自知识库）"

_H2 = re.compile(r"^##[ \t]+(.+?)[ \t]*#*[ \t]*$")


def extractive_note(reason: str) -> str:
    """The visible line that tells the reader this answer was not written by an LLM."""
    return _NOTES.get(reason, _DEFAULT_NOTE)


def interrupted_note() -> str:
    return _INTERRUPTED_NOTE


def discarded_note(reason: str) -> str:
    """After a streamed LLM reply that failed the grounding check: it is not the answer."""
    why = GROUNDING_REASONS.get(reason, "大模型回答未通过核验")
    return f"（以上大模型的回答未被采用：{why}；以下内容直接摘自知识库）"


def extractive_footer(reason: str) -> str:
    """The same note for the end of an answer whose lead comes first (以上 instead of 以下)."""
    return extractive_note(reason).replace("以下", "以上")


def markdown_sections(text: str) -> dict[str, str]:
    """Level-2 sections (``## 名称``) → body (``###`` subsections included), fences respected."""
    out: dict[str, str] = {}
    current: str | None = None
    buf: list[str] = []
    in_fence = False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        m = None if in_fence else _H2.match(line)
        if m:
            if current is not None:
                out.setdefault(current, "\n".join(buf).strip())
            current, buf = m.group(1).strip(), []
        elif current is not None:
            buf.append(line)
    if current is not None:
        out.setdefault(current, "\n".join(buf).strip())
    return out


def find_section(sections: dict[str, str], name: str) -> str | None:
    """Exact section name first, then one that contains ``name`` (``必备原料`` ↔ ``必备原料和工具``)."""
    if name in sections:
        return sections[name]
    for key, body in sections.items():
        if name in key or key in name:
            return body
    return None


def truncate(text: str, max_chars: int) -> str:
    """Cut at a line or sentence boundary near ``max_chars``, marking the cut with ``……``."""
    text = text.strip()
    if len(text) <= max_chars:
        return text
    cut = text[:max_chars]
    for sep in ("\n", "。", "；", "，"):
        i = cut.rfind(sep)
        if i >= max_chars * 0.6:
            cut = cut[: i + 1]
            break
    return cut.rstrip() + "……"


def compose_sections(
    doc: Document,
    sections: Sequence[str],
    *,
    cite: int,
    optional: Sequence[str] = (),
    optional_max_chars: int = 600,
    max_chars: int = 3500,
) -> str:
    """The named sections of ``doc`` under 【名称】 headings, cited ``[cite]``.

    ``optional`` sections are added only when shorter than ``optional_max_chars``. A document
    without any of the sections contributes its opening text instead.
    """
    found = markdown_sections(doc.text)
    parts: list[str] = []
    for name in sections:
        body = find_section(found, name)
        if body:
            parts.append(f"【{name}】\n{body}")
    for name in optional:
        body = find_section(found, name)
        if body and len(body) <= optional_max_chars:
            parts.append(f"【{name}】\n{body}")
    title = doc.title or doc.id
    if not parts:
        return f"{title} [{cite}]\n{truncate(doc.text, min(max_chars, 800))}"
    return truncate(f"{title} [{cite}]\n\n" + "\n\n".join(parts), max_chars)


def compose_list(items: Sequence[tuple[str, str, int]]) -> str:
    """Numbered lines ``n. 名称（说明）[cite]`` from ``(name, detail, cite)``."""
    lines = []
    for i, (name, detail, cite) in enumerate(items, 1):
        extra = f"（{detail}）" if detail else ""
        lines.append(f"{i}. {name}{extra}[{cite}]")
    return "\n".join(lines)


def compose_passages(passages: Sequence[tuple[str, str, int]], *, max_chars_each: int = 400) -> str:
    """The best passages ``(title, text, cite)``, each trimmed and cited."""
    blocks = []
    for title, text, cite in passages:
        head = f"{title}：" if title else ""
        blocks.append(f"[{cite}] {head}{truncate(' '.join(text.split()), max_chars_each)}")
    return "\n\n".join(blocks)


def with_note(reason: str, body: str) -> str:
    note = extractive_note(reason)
    return f"{note}\n\n{body}" if body else note
