"""``zhiwen ask --kb recipes "宫保鸡丁怎么做"``: the recipe app's CLI entry (see apps.registry).

Example::

    >>> cli_ask(open_kb("recipes"), "推荐几个简单的素菜", json_output=False, top_k=3)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zhiwen.cli.ask import print_answer

from .service import answer_recipe

if TYPE_CHECKING:
    from zhiwen.kb import KnowledgeBase


def cli_ask(kb: KnowledgeBase, question: str, *, json_output: bool, **options: Any) -> None:
    """Answer ``question`` with the recipe app and print it (``options``: ``top_k``)."""
    top_k = options.get("top_k")
    answer = answer_recipe(kb, question, top_k=int(top_k) if top_k else None)
    print_answer(answer, json_output=json_output)
