"""The policy app's terminal view in an 80-column terminal: intent and fallback in Chinese,
sources by knowledge base, title, file and page, nothing cut."""

from __future__ import annotations

import io
import re

from rich.console import Console

from zhiwen.apps.policy.cli import render

_FRAME = re.compile(r"[\s\u2500-\u257f]+")

DATA = {
    "intent": "airline_visa_free",
    "strategy": "single",
    "fallback_reason": "classifier_timeout",
    "rewritten_question": None,
    "answer": "机组人员凭有效证件可免办签证入境 [1]。",
    "sources": [
        {
            "kb": "policy_airline",
            "id": "law-12",
            "title": "中华人民共和国出境入境管理法",
            "text": "外国人入境，应当向驻外签证机关申请办理签证。",
            "score": 0.91,
            "rerank_score": 0.95,
            "metadata": {"source": "cn_law_subset/出境入境管理法.pdf", "page": 12, "format": "pdf"},
        },
        {
            "kb": "policy_visa",
            "id": "visa-th",
            "title": "Thailand visa-free policy for Chinese citizens",
            "text": "Chinese citizens may enter Thailand visa-free for up to 30 days.",
            "score": 0.52,
            "metadata": {"source": "chinatripinfo_visa_en/thailand.md"},
        },
    ],
}


def shown(width: int) -> str:
    out = Console(width=width, file=io.StringIO(), record=True)
    render(DATA, out)
    return out.export_text()


def test_policy_render_at_80_columns() -> None:
    narrow, wide = shown(80), shown(300)
    assert max(len(line) for line in narrow.splitlines()) <= 80
    assert narrow.count("…") == wide.count("…") == 1  # the long excerpt's own, nothing cut
    flat = _FRAME.sub("", narrow)
    assert "意图：机组人员免签" in flat and "降级原因：意图分类超时" in flat
    assert "airline_visa_free" not in narrow and "classifier_timeout" not in narrow
    assert "cn_law_subset/出境入境管理法.pdf·第12页" in flat and "policy_airline" in flat
    assert "chinatripinfo_visa_en/thailand.md" in flat and "0.950" in flat


def test_unknown_fallback_reads_chinese() -> None:
    out = Console(width=80, file=io.StringIO(), record=True)
    render({**DATA, "fallback_reason": "classifier_something_new", "sources": []}, out)
    assert "降级原因：意图分类未完成" in out.export_text()
