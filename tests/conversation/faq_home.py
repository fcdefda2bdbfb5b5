"""A small home for the FAQ and question-log door tests: KB ``manual`` (hash embedder) with two
documents and two FAQ entries, keys for the access checks, and the questions that hit, nearly
miss, or miss its FAQ."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zhiwen.config import FAQSettings, KeySpec, LLMSettings, Settings
from zhiwen.documents import Document
from zhiwen.faq import FAQEntry
from zhiwen.kb import open_kb
from zhiwen.kb.faq import put_faq_entries

KB = "manual"
ALL_KEY = "sk-all-kbs"
OTHER_KEY = "sk-other-kb-only"
ENTRIES = [
    FAQEntry.create(
        "怎么导入 PDF 文件？",
        "在「文档」页点「上传」，选择 PDF 文件即可。",
        similar=["PDF 如何上传"],
        id="import-pdf",
    ),
    FAQEntry.create("支持哪些文件格式？", "支持 PDF、Word、Excel、PPT 和纯文本。", id="formats"),
]
#: the main question in another normal form: answered by the entry, score 1.0
HIT = "怎么导入PDF文件"
#: close to 「怎么导入 PDF 文件？」 (hash cosine ≈ 0.68), under the threshold, over the floor
NEAR = "导入 PDF 文件要多久？"
NEAR_SUGGESTED = "怎么导入 PDF 文件？"
#: no entry near it
FAR = "混合检索怎么用"
DOCS = [
    Document(id="search", title="检索", text="检索支持 bm25、dense、hybrid 三种模式，默认混合检索。"),
    Document(id="import", title="导入", text="导入 PDF 文件的时间取决于页数，一般每页不到一秒。"),
]
#: a reply the grounding check shows (Chinese, cites [1])
LLM_REPLY = "导入时间取决于页数，一般每页不到一秒 [1]。"
#: the FAQ settings of these tests: the hash embedder's cosine scale (near ≈ 0.6–0.7)
FAQ = FAQSettings(suggest_floor=0.5)


def make_settings(home: Path, *, llm_url: str | None = None, **overrides: Any) -> Settings:
    llm = LLMSettings(base_url=llm_url, model="fake-model", api_key="sk-llm", max_retries=0)
    return Settings(  # type: ignore[call-arg]
        home=home, llm=llm, embedding={"provider": "hash"}, faq=FAQ, _env_file=None, **overrides
    )


def keyed(settings: Settings) -> Settings:
    """``settings`` with two keys: one for every KB, one for another KB only."""
    api = settings.api.model_copy(update={"keys": [ALL_KEY, KeySpec(key=OTHER_KEY, kbs=["other"])]})
    return settings.model_copy(update={"api": api})


def build_manual(settings: Settings) -> None:
    kb = open_kb(KB, settings=settings, create=True, embedder="hash")
    kb.index_documents(DOCS, progress=False)
    put_faq_entries(kb, ENTRIES, actor="")
