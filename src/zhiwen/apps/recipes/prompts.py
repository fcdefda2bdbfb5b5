"""The recipe app's prompts: the LLM fallback of the router (answers come from the engine's QA prompt)."""

from __future__ import annotations

from zhiwen.llm.base import Message

ROUTE_SYSTEM = (
    "你是菜谱问答系统的查询分类器。把用户问题分为三类之一，只输出 JSON："
    '{"route": "list" | "detail" | "general"}。\n'
    "list：想要菜品列表或推荐，只需要菜名（例如：推荐几个素菜、有什么川菜、给我3个简单的菜）；\n"
    "detail：想要某道菜的具体做法、步骤或用料（例如：宫保鸡丁怎么做、制作步骤、需要什么食材）；\n"
    "general：其他一般性问题（例如：什么是川菜、制作技巧、营养价值）。"
)


def route_messages(question: str) -> list[Message]:
    """Messages for the LLM fallback of the recipe router (answer via ``chat_json``)."""
    return [
        {"role": "system", "content": ROUTE_SYSTEM},
        {"role": "user", "content": question.strip()},
    ]
