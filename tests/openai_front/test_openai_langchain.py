"""LangChain's ``ChatOpenAI``, pointed at zhiwen, answers a KB question (invoke and stream)."""

from __future__ import annotations

import pytest

langchain_openai = pytest.importorskip("langchain_openai")


def test_chat_openai_answers_a_kb_question(base_url: str) -> None:
    llm = langchain_openai.ChatOpenAI(
        model="demo", base_url=f"{base_url}/v1", api_key="none", max_retries=0, timeout=60
    )
    reply = llm.invoke("怎么创建知识库？")
    assert "zhiwen index" in reply.content and "[1]" in reply.content
    assert reply.usage_metadata is not None and reply.usage_metadata["output_tokens"] > 0
    streamed = "".join(str(chunk.content) for chunk in llm.stream("怎么创建知识库？"))
    assert streamed == reply.content
