"""Policy answers quote a bullet with its heading: 「❌ You Cannot：Work, study…」, never the bare bullet."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from policy_fixtures import SHARED_DATA, VISA_DIR

from zhiwen.answer.model import Citation
from zhiwen.answer.stage import excerpt
from zhiwen.apps.policy.answer import extractive_body
from zhiwen.documents import Document
from zhiwen.ingest.chunking import chunk_markdown

PAGE = """## ✅ 30-Day Visa-Free

### 📅  Duration of Stay

- You can enter China **without** a visa and stay for **up to 30 days**.
- If staying >30 days, you must register for residence at local authorities.

---

### ✅ You Can Do

- Business, travel, family visit, attend exchanges, or transit in China without a visa.

---

### ❌ You Cannot

- Work, study, live long-term, or do journalism in China without prior approval.

---

### 📍 Permitted Travel Areas

- Anywhere in Mainland China
"""
TITLE = "免签政策说明：✅ 30-Day Visa-Free"


def page_sources(text: str = PAGE, doc_id: str = "policy/mutual_30") -> list[Citation]:
    doc = Document(id=doc_id, text=text, title=TITLE, metadata={"kind": "visa_policy"})
    return [
        Citation(kb="visa", id=c.id, title=c.title or TITLE, text=c.text, metadata=dict(c.metadata))
        for c in chunk_markdown(doc)
    ]


def test_a_prohibition_is_quoted_as_one() -> None:
    body = extractive_body("免签入境可以在中国工作吗？", "other", [], page_sources(), [])
    assert "❌ You Cannot：Work, study, live long-term" in body
    for line in body.splitlines():  # never the bullet alone, as if it were allowed
        if "Work, study" in line:
            assert "❌ You Cannot：Work, study" in line


def test_a_passage_cut_below_its_heading_takes_the_heading_from_its_section() -> None:
    source = Citation(
        kb="visa",
        id="policy/mutual_30#7",
        title=TITLE,
        text="- Work, study, live long-term, or do journalism in China without prior approval.",
        metadata={"section": "✅ 30-Day Visa-Free > ❌ You Cannot"},
    )
    body = extractive_body("Can I work in China visa-free?", "other", [], [source], [])
    assert "❌ You Cannot：Work, study" in body


def test_sentences_and_headingless_bullets_are_quoted_as_they_are() -> None:
    assert excerpt("免签可以停留多久？", "过境免签", "外国人可以免签停留30天。") == "外国人可以免签停留30天。"
    assert excerpt("免签可以停留多久？", "免签", "- 停留不超过30天") == "- 停留不超过30天"


@given(st.sampled_from(["Business", "Anywhere", "register", "Work", "visa"]), st.booleans())
def test_every_bullet_an_excerpt_quotes_carries_its_heading(word: str, english: bool) -> None:
    question = f"What about {word}?" if english else f"{word}是什么意思？"
    for source in page_sources():
        quoted = excerpt(question, source.title, source.text, max_chars=260)
        for line in quoted.splitlines():
            if re.match(r"\s*- ", line):  # a list after its heading line, never a bare first bullet
                assert quoted.split("\n", 1)[0].endswith("："), quoted
        if quoted.lstrip().startswith(("Work", "Business", "Anywhere", "You can", "If staying")):
            pytest.fail(f"bullet without its heading: {quoted!r}")


@pytest.mark.shared_data
def test_the_real_pages_never_lose_the_you_cannot_heading() -> None:
    pages = sorted((SHARED_DATA / VISA_DIR / "policies").glob("*.md"))
    if not pages:
        pytest.skip(f"no policy pages under {SHARED_DATA / VISA_DIR}")
    for path in pages:
        sources = page_sources(path.read_text("utf-8"), f"policy/{path.stem}")
        body = extractive_body("免签入境后可以工作或者留学吗？", "other", [], sources, [])
        for line in body.splitlines():
            if "Work, study, live long-term" in line:  # the heading first (one item or the list)
                assert re.search(r"You Cannot：\s*(?:- )?Work, study", line), (path.name, line)
