"""Which answer it is and how it was made (#36/#37): ``answer_type_of`` decides once, and every
interface's fields come from ``Answer.identity_fields``."""

from __future__ import annotations

from typing import Any

import pytest

from zhiwen.answer.model import Answer, AnswerFields, FAQHit, answer_type_of

FAQ = FAQHit(question="怎么导入 PDF？", score=0.97, entry_id="import-pdf")


@pytest.mark.parametrize(
    ("fields", "kind"),
    [
        ({"llm_used": True}, "generated"),
        ({"llm_used": False, "extractive_reason": "no_llm"}, "extractive"),
        ({"llm_used": False, "answerable": False}, "refused"),
        ({"llm_used": True, "answerable": False}, "refused"),
        ({"route": "table", "llm_used": True}, "table"),
        ({"faq": FAQ}, "faq"),
        ({"answer_type": "tool", "llm_used": True}, "tool"),  # the answerer's own kind stands
    ],
)
def test_the_answer_type_is_decided_once(fields: dict[str, Any], kind: str) -> None:
    answer = Answer(answer="……", **fields)
    assert answer_type_of(answer) == kind == answer.kind


def test_identity_fields_fill_every_interfaces_schema() -> None:
    answer = Answer(answer="在「文档」页上传。", answer_id="0k3j9x2m4n5p6q7r", answer_type="faq", faq=FAQ)
    fields = answer.identity_fields()
    assert fields == {
        "answer_id": "0k3j9x2m4n5p6q7r",
        "answer_type": "faq",
        "faq": {"question": "怎么导入 PDF？", "score": 0.97, "entry_id": "import-pdf"},
        "suggestions": [],
    }
    assert AnswerFields(**fields).model_dump() == fields
    assert {k: answer.done_fields()[k] for k in fields} == fields
