"""Prompt templates: a domain-expert system prompt and numbered context.

The user message numbers its context, then asks::

    Context:
    [1] chunk A
    [2] chunk B

    Question:
    <user query>

    Answer using only the context.

plus a Chinese instruction to cite ``[n]`` and to admit when the context has no answer.

Example::

    >>> msgs = qa_messages("怎么创建知识库", [("创建知识库", "## 操作 ...")], domain="产品手册")
    >>> msgs[0]["role"], msgs[1]["content"].startswith("Context:")
    ('system', True)
    >>> question_of(msgs)
    '怎么创建知识库'
"""

from __future__ import annotations

from collections.abc import Sequence

from zhiwen.llm.base import Message

SYSTEM_TEMPLATE = (
    "You are a domain expert in {domain}. 你是{domain}方面的专家，回答准确、简洁、有条理。"
    "只依据用户给出的上下文回答，不编造上下文之外的事实；"
    "引用时在句末用 [编号] 标注所依据的上下文；上下文中没有答案时，直接说明知识库中没有相关信息。"
)

ANSWER_INSTRUCTION = (
    "Answer using only the context. 请只根据上面的上下文用中文回答，并用 [n] 标注引用的上下文编号。"
)


def numbered_context(items: Sequence[tuple[str, str]]) -> str:
    """``[(title, text), …]`` → ``[1] title\\ntext`` blocks separated by blank lines."""
    blocks = []
    for i, (title, text) in enumerate(items, 1):
        head = f"[{i}] {title}".rstrip()
        blocks.append(f"{head}\n{text.strip()}" if text.strip() else head)
    return "\n\n".join(blocks)


def question_of(messages: Sequence[Message]) -> str:
    """The question of :func:`qa_messages`' prompt ("" for a prompt of another layout)."""
    for message in reversed(messages):
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, str) and "\nQuestion:\n" in content:
            return content.rsplit("\nQuestion:\n", 1)[1].split("\n\n", 1)[0].strip()
    return ""


def instructions_of(messages: Sequence[Message]) -> list[str]:
    """The prompt's own words (the system message, the answer instruction): a reply that repeats
    them is an echo, not an answer (the context's passages are not among them)."""
    system = [str(m.get("content") or "") for m in messages if m.get("role") == "system"]
    return [*system, ANSWER_INSTRUCTION]


def qa_messages(
    question: str,
    contexts: Sequence[tuple[str, str]],
    *,
    domain: str = "知识库问答",
    extra_instruction: str = "",
) -> list[Message]:
    """System + user messages for one grounded answer."""
    instruction = ANSWER_INSTRUCTION + (f"\n{extra_instruction}" if extra_instruction else "")
    user = f"Context:\n{numbered_context(contexts)}\n\nQuestion:\n{question.strip()}\n\n{instruction}"
    return [
        {"role": "system", "content": SYSTEM_TEMPLATE.format(domain=domain)},
        {"role": "user", "content": user},
    ]
