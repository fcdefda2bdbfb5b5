"""A follow-up after a table question (「那2022年呢」) is answered from the other year's table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zhiwen.conversation.offline import OfflineCondenser

FIRST = "2021年四川省物理类金融学类最低分是多少？"


def _turns(question: str, answer: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]


def test_a_table_followup_is_answered_from_the_other_table(zhiwen_home: Path, site: Path) -> None:
    from zhiwen.answer.qa import answer_question
    from zhiwen.kb import open_kb

    kb = open_kb("scores", create=True, embedder="hash")
    kb.index_path(site, fmt="documents", progress=False, dense="skip")
    first = answer_question(kb, FIRST, llm=None)
    standalone = OfflineCondenser().condense(_turns(FIRST, first.answer), "那2022年呢").question
    ans = answer_question(kb, standalone, llm=None)
    assert ans.route == "table" and "**615**" in ans.answer.split("\n")[0]
